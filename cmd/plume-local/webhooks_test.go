package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// posted is one request a webhook receiver was sent.
type posted struct {
	header http.Header
	body   []byte
}

// TestPlumeLocalDeliversSignedTagMove runs the end to end through plume-local: a pin
// reaches a webhook subscribed to prompt.tag.moved as a delivery signed by the Standard
// Webhooks convention (verified here by the algorithm, independently of package webhook); the
// receiver's first answer is 500, so the delivery is retried after the backoff with the same
// id, and the delivery log says so (2 attempts, succeeded, last answer 200). The time from the
// pin to the delivery is logged, not asserted.
func TestPlumeLocalDeliversSignedTagMove(t *testing.T) {
	var mu sync.Mutex
	var got []posted
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, posted{r.Header.Clone(), body})
		first := len(got) == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(rcv.Close)
	received := func() []posted {
		mu.Lock()
		defer mu.Unlock()
		return append([]posted(nil), got...)
	}

	project, key := uuid.NewString(), "plm_local_webhooks_key_0123456789"
	base, _ := startLocal(t, map[string]string{"PLUME_DEV_PROJECT_ID": project, "PLUME_DEV_API_KEY": key,
		"PLUME_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1", "PLUME_WEBHOOK_RETRY_BASE": "100ms"})
	call := caller(t, base, key)
	status, hook := call("POST", "/projects/"+project+"/webhooks", `{"url": "`+rcv.URL+`", "events": ["prompt.tag.moved"]}`)
	require.Equal(t, http.StatusOK, status, "%v", hook)
	secret, hookID := hook["secret"].(string), hook["id"].(string)
	status, _ = call("POST", "/v1/tasks/demo/prompt/versions/ensure", `{"content":"hi {{x}}"}`)
	require.Equal(t, http.StatusOK, status)

	pinned := time.Now()
	status, _ = call("POST", "/projects/"+project+"/prompts/demo/tags/production:pin", `{"version":1}`)
	require.Equal(t, http.StatusOK, status)
	require.Eventually(t, func() bool { return len(received()) >= 2 }, time.Minute, 20*time.Millisecond, "the delivery and its retry")
	t.Logf("pin to the second delivery (the first answered 500, retried after 100ms): %s", time.Since(pinned).Round(time.Millisecond))

	var delivered []string
	for _, p := range received() {
		verifyStandardWebhook(t, secret, p)
		var ev struct {
			ID, Type, ProjectID string
			Data                struct {
				Slug, Tag string
				ToVersion int `json:"to_version"`
			}
		}
		require.NoError(t, json.Unmarshal(p.body, &ev))
		assert.Equal(t, "prompt.tag.moved", ev.Type)
		assert.Equal(t, "production", ev.Data.Tag)
		assert.Equal(t, 1, ev.Data.ToVersion)
		assert.Equal(t, p.header.Get("webhook-id"), ev.ID, "the event's id is the delivery's")
		delivered = append(delivered, ev.ID)
	}
	assert.Equal(t, delivered[0], delivered[1], "the retry carries the same id")

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, log := call("GET", "/projects/"+project+"/webhooks/"+hookID+"/deliveries", "")
		ds, _ := log["deliveries"].([]any)
		if !assert.Len(c, ds, 1) {
			return
		}
		d := ds[0].(map[string]any)
		assert.Equal(c, "succeeded", d["status"])
		assert.EqualValues(c, 2, d["attempts"])
		assert.EqualValues(c, 200, d["last_status_code"])
	}, time.Minute, 50*time.Millisecond, "the delivery log says: retried once, then succeeded")
	assert.Len(t, received(), 2, "delivered once after its retry, nothing more")
}

// verifyStandardWebhook checks a delivery's signature by the Standard Webhooks algorithm:
// HMAC-SHA256 over "id.timestamp.body", keyed with the base64-decoded secret after "whsec_",
// any of the space-separated "v1,<base64>" signatures matching.
func verifyStandardWebhook(t *testing.T, secret string, p posted) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	require.NoError(t, err)
	id, ts := p.header.Get("webhook-id"), p.header.Get("webhook-timestamp")
	require.NotEmpty(t, id)
	require.NotEmpty(t, ts)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(p.body)))
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	ok := false
	for _, sig := range strings.Fields(p.header.Get("webhook-signature")) {
		v, s, _ := strings.Cut(sig, ",")
		ok = ok || v == "v1" && hmac.Equal([]byte(s), []byte(want))
	}
	assert.True(t, ok, "signature %q verifies", p.header.Get("webhook-signature"))
}

// TestPlumeLocalMonitorAlertsOnceResolvesOnce runs a monitor on error rate through plume-local,
// evaluated every 50 ms: error spans arrive (5 failed traces of 10) and it alerts; they stop
// while ok traffic goes on (90 more traces, 5 failed of 100) and it resolves. Its webhook
// receives one monitor.alerted and one monitor.resolved, each signed, and nothing more however
// many evaluations follow (each evaluation in between changed nothing).
func TestPlumeLocalMonitorAlertsOnceResolvesOnce(t *testing.T) {
	var mu sync.Mutex
	var got []posted
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, posted{r.Header.Clone(), body})
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	types := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, p := range got {
			var ev struct{ Type string }
			_ = json.Unmarshal(p.body, &ev)
			out = append(out, ev.Type)
		}
		return out
	}

	project, key := uuid.NewString(), "plm_local_monitor_key_01234567890"
	base, _ := startLocal(t, map[string]string{"PLUME_DEV_PROJECT_ID": project, "PLUME_DEV_API_KEY": key,
		"PLUME_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1", "PLUME_MONITOR_INTERVAL": "50ms"})
	call := caller(t, base, key)
	status, hook := call("POST", "/projects/"+project+"/webhooks", `{"url": "`+rcv.URL+`", "events": ["monitor.alerted", "monitor.resolved"]}`)
	require.Equal(t, http.StatusOK, status, "%v", hook)
	status, m := call("POST", "/projects/"+project+"/monitors", `{"name": "errors", "metric": "error_rate", "window": "5m",
		"comparison": "gt", "threshold": 0.3, "resolve_threshold": 0.1, "min_samples": 10}`)
	require.Equal(t, http.StatusOK, status, "%v", m)
	monitorPath := "/projects/" + project + "/monitors/" + m["id"].(string)

	send := func(n, failed int) {
		t.Helper()
		var spans []any
		for i := range n {
			s := apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", "", "", "in", "out", time.Now().UTC())
			if i < failed {
				s["status"] = "error"
			}
			spans = append(spans, s)
		}
		body, err := json.Marshal(spans)
		require.NoError(t, err)
		status, _ := call("POST", "/spans", string(body))
		require.Equal(t, http.StatusOK, status)
	}
	state := func(want string) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, got := call("GET", monitorPath, "")
			assert.Equal(c, want, got["state"])
		}, time.Minute, 50*time.Millisecond, "the monitor never became %s", want)
	}

	send(10, 5)
	state("alerting")
	send(90, 0)
	state("ok")
	require.Eventually(t, func() bool { return len(types()) >= 2 }, time.Minute, 20*time.Millisecond)
	_, before := call("GET", monitorPath, "")
	time.Sleep(time.Second) // some 20 evaluations more: none may notify
	_, after := call("GET", monitorPath, "")
	assert.Equal(t, before["history"], after["history"], "no state change since")
	assert.Equal(t, []string{"monitor.alerted", "monitor.resolved"}, types(), "one alert, one resolution")
	mu.Lock()
	for _, p := range got {
		verifyStandardWebhook(t, hook["secret"].(string), p)
	}
	mu.Unlock()
}
