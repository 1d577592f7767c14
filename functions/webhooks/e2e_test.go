package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/config"
)

// receiver is a webhook endpoint on 127.0.0.1 that answers the statuses of answer in turn
// (then the last one) and keeps what it was sent.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	answer   []int
	received []delivery
}

type delivery struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, answer ...int) *receiver {
	r := &receiver{answer: answer}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		status := r.answer[min(len(r.received), len(r.answer)-1)]
		r.received = append(r.received, delivery{req.Header.Clone(), body})
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

// got waits until the receiver has been sent n deliveries, and returns them.
func (r *receiver) got(t *testing.T, n int) []delivery {
	t.Helper()
	var out []delivery
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		out = append([]delivery(nil), r.received...)
		return len(out) >= n
	}, 30*time.Second, 5*time.Millisecond, "deliveries received")
	return out
}

// verify checks a delivery's signature by the Standard Webhooks algorithm, written here
// independently of package webhook: HMAC-SHA256 over "id.timestamp.body" keyed with the
// base64-decoded secret after its "whsec_" prefix, any of the space-separated "v1,<base64>"
// signatures matching.
func verify(t *testing.T, secret string, d delivery) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	require.NoError(t, err)
	id, ts := d.header.Get("webhook-id"), d.header.Get("webhook-timestamp")
	require.NotEmpty(t, id)
	sent, err := strconv.ParseInt(ts, 10, 64)
	require.NoError(t, err)
	assert.InDelta(t, time.Now().Unix(), sent, 300, "timestamp within the tolerance receivers apply")
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(d.body)))
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	var ok bool
	for _, sig := range strings.Fields(d.header.Get("webhook-signature")) {
		v, s, _ := strings.Cut(sig, ",")
		ok = ok || v == "v1" && hmac.Equal([]byte(s), []byte(want))
	}
	assert.True(t, ok, "signature %q verifies", d.header.Get("webhook-signature"))
}

// newAPI is the whole API with its stream, posting to 127.0.0.1, retrying after retryBase.
func newAPI(t *testing.T, retryBase, window time.Duration) *apitest.API {
	return apitest.New(t, apitest.Options{Config: func(c *config.Config) {
		c.Webhooks.AllowedHosts = []string{"127.0.0.1"}
		c.Webhooks.RetryBase, c.Webhooks.RetryWindow = retryBase, window
	}})
}

func createWebhook(t *testing.T, a *apitest.API, tenant apitest.Tenant, url string, events ...string) api.CreatedWebhook {
	t.Helper()
	var hook api.CreatedWebhook
	a.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/webhooks", tenant.Key, api.CreateWebhookRequest{URL: url, Events: events}).Decode(t, &hook)
	require.True(t, strings.HasPrefix(hook.Secret, "whsec_"), hook.Secret)
	return hook
}

func pin(t *testing.T, a *apitest.API, tenant apitest.Tenant, slug, tag string, version int) {
	t.Helper()
	a.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/prompts/"+slug+"/tags/"+tag+":pin", tenant.Key, map[string]any{"version": version})
}

func deliveries(t *testing.T, a *apitest.API, tenant apitest.Tenant, hookID string) []api.WebhookDelivery {
	t.Helper()
	var out api.WebhookDeliveryList
	a.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/webhooks/"+hookID+"/deliveries", tenant.Key, nil).Decode(t, &out)
	return out.Deliveries
}

// TestTagMoveDelivered: a pin reaches the webhook subscribed to prompt.tag.moved as one
// signed delivery of the event, and nothing else does (the versions' events, project B's
// webhook); the stream applied again delivers nothing new and no second id; the secret is
// answered once only.
func TestTagMoveDelivered(t *testing.T) {
	a := newAPI(t, 10*time.Millisecond, time.Hour)
	rcv, other := newReceiver(t, 200), newReceiver(t, 200)
	hook := createWebhook(t, a, a.A, rcv.URL+"/hook", api.EventPromptTagMoved)
	createWebhook(t, a, a.B, other.URL, api.EventTypes...)

	a.EnsurePrompt(t, a.A, "support-bot", "v1")
	v2 := a.EnsurePrompt(t, a.A, "support-bot", "v2")
	pin(t, a, a.A, "support-bot", "production", 1)
	pin(t, a, a.A, "support-bot", "production", 2)
	a.DrainStream(t)

	got := rcv.got(t, 2)
	var events []api.Event
	for _, d := range got {
		verify(t, hook.Secret, d)
		var ev api.Event
		require.NoError(t, json.Unmarshal(d.body, &ev))
		assert.Equal(t, d.header.Get("webhook-id"), ev.ID, "the event id is the idempotency key")
		events = append(events, ev)
	}
	require.Len(t, events, 2)
	byVersion := map[int]api.PromptTagMoved{}
	for _, ev := range events {
		assert.Equal(t, api.EventPromptTagMoved, ev.Type)
		assert.Equal(t, a.A.ProjectID, ev.ProjectID)
		var moved api.PromptTagMoved
		require.NoError(t, json.Unmarshal(ev.Data, &moved))
		byVersion[moved.ToVersion] = moved
	}
	one := 1
	assert.Equal(t, api.PromptTagMoved{Slug: "support-bot", Tag: "production", FromVersion: &one, ToVersion: 2, ToVersionID: v2, By: a.A.UserID}, byVersion[2])

	// Everything applied again (the stream read from its start, as a retried batch is), once
	// both deliveries were attempted: nothing queued again, no new delivery, and every event
	// keeps its one id.
	require.Eventually(t, func() bool {
		s := a.Webhooks.Stats()
		return s.Invocations == s.Successes+s.Failures
	}, 30*time.Second, 5*time.Millisecond, "the queue's messages handled")
	queued := a.Webhooks.Stats().Invocations
	a.ReplayEvents(t)
	assert.Equal(t, queued, a.Webhooks.Stats().Invocations, "the replay queues no delivery already attempted")
	log := deliveries(t, a, a.A, hook.ID)
	require.Len(t, log, 2)
	ids := map[string]string{}
	for _, d := range log {
		assert.Equal(t, api.DeliverySucceeded, d.Status)
		assert.Equal(t, 1, d.Attempts)
		require.NotNil(t, d.LastStatusCode)
		assert.Equal(t, 200, *d.LastStatusCode)
		ids[d.ID] = d.EventID
	}
	require.Eventually(t, func() bool {
		s := a.Webhooks.Stats()
		return s.Invocations == s.Successes+s.Failures
	}, 30*time.Second, 5*time.Millisecond, "the queue's messages handled")
	all := rcv.got(t, 2)
	assert.Len(t, all, 2, "nothing delivered twice")
	for _, d := range all {
		found := false
		for _, ev := range ids {
			found = found || ev == d.header.Get("webhook-id")
		}
		assert.True(t, found, "delivered with a logged id")
	}
	other.mu.Lock()
	assert.Empty(t, other.received, "project B's webhook gets nothing of project A")
	other.mu.Unlock()

	var list api.WebhookList
	a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/webhooks", a.A.Key, nil).Decode(t, &list)
	require.Len(t, list.Webhooks, 1)
	res := a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/webhooks", a.A.Key, nil)
	assert.NotContains(t, string(res.Body), "whsec_", "the secret is answered once")
}

// TestRetriedWithBackoff: a receiver that answers 500 twice gets the same event three times,
// each signed, with the same id, and the log says so; a receiver that always fails is given
// up after the retry window, and a redeliver sends the same event again.
func TestRetriedWithBackoff(t *testing.T) {
	// A window wide enough for three attempts however slow the machine.
	a := newAPI(t, 20*time.Millisecond, 20*time.Second)
	flaky, broken := newReceiver(t, 500, 500, 200), newReceiver(t, 500)
	fh := createWebhook(t, a, a.A, flaky.URL, api.EventPromptVersionCreated)
	bh := createWebhook(t, a, a.A, broken.URL, api.EventPromptVersionCreated)

	a.EnsurePrompt(t, a.A, "bot", "hello")
	a.DrainStream(t)

	got := flaky.got(t, 3)
	for _, d := range got {
		verify(t, fh.Secret, d)
		assert.Equal(t, got[0].header.Get("webhook-id"), d.header.Get("webhook-id"), "one id for every attempt")
	}
	require.Eventually(t, func() bool {
		log := deliveries(t, a, a.A, fh.ID)
		return len(log) == 1 && log[0].Status == api.DeliverySucceeded
	}, 30*time.Second, 10*time.Millisecond)
	log := deliveries(t, a, a.A, fh.ID)
	assert.Equal(t, 3, log[0].Attempts)

	// Retried with doubling waits (20, 40, 80 ... ms) until the 20 s window is over: at most
	// eleven attempts (20 x (2^10 - 1) ms is past it), then failed.
	var dead api.WebhookDelivery
	require.Eventually(t, func() bool {
		log := deliveries(t, a, a.A, bh.ID)
		if len(log) == 1 {
			dead = log[0]
		}
		return dead.Status == api.DeliveryFailed
	}, time.Minute, 10*time.Millisecond)
	assert.GreaterOrEqual(t, dead.Attempts, 3)
	assert.LessOrEqual(t, dead.Attempts, 11, "backoff, not a retry storm")
	assert.Equal(t, "the receiver answered 500", dead.LastError)
	require.NotNil(t, dead.LastStatusCode)
	assert.Equal(t, 500, *dead.LastStatusCode)
	assert.Nil(t, dead.NextAttemptAt)
	before := len(broken.got(t, dead.Attempts))
	assert.Equal(t, dead.Attempts, before)

	broken.mu.Lock()
	broken.answer = []int{204}
	broken.mu.Unlock()
	var again api.WebhookDelivery
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/webhooks/"+bh.ID+"/deliveries/"+dead.ID+"/redeliver", a.A.Key, nil).Decode(t, &again)
	assert.Equal(t, api.DeliveryPending, again.Status)
	last := broken.got(t, before+1)[before]
	verify(t, bh.Secret, last)
	assert.Equal(t, dead.EventID, last.header.Get("webhook-id"), "redelivered with the same id")
}

// TestDatasetVersionDelivered: a push through the SDK's route reaches a webhook subscribed to
// dataset.version.created, signed, with the version's number, id and rows; a second push is
// a second event.
func TestDatasetVersionDelivered(t *testing.T) {
	a := newAPI(t, 10*time.Millisecond, time.Hour)
	rcv := newReceiver(t, 200)
	hook := createWebhook(t, a, a.A, rcv.URL, api.EventDatasetVersionCreated)

	a.MustDo(t, "POST", "/v1/datasets", a.A.Key, map[string]any{"name": "capitals"})
	var pushed []map[string]any
	for _, rows := range [][]map[string]any{
		{{"country": "France", "capital": "Paris"}},
		{{"country": "France", "capital": "Paris"}, {"country": "Peru", "capital": "Lima"}},
	} {
		var v map[string]any
		a.MustDo(t, "POST", "/v1/datasets/capitals/data", a.A.Key, map[string]any{"data": rows}).Decode(t, &v)
		pushed = append(pushed, v)
	}
	a.DrainStream(t)

	got := rcv.got(t, 2)
	byVersion := map[int]api.DatasetVersionCreated{}
	for _, d := range got {
		verify(t, hook.Secret, d)
		var ev api.Event
		require.NoError(t, json.Unmarshal(d.body, &ev))
		assert.Equal(t, api.EventDatasetVersionCreated, ev.Type)
		var b api.DatasetVersionCreated
		require.NoError(t, json.Unmarshal(ev.Data, &b))
		byVersion[b.Version] = b
	}
	for i, v := range pushed {
		b := byVersion[i+1]
		assert.Equal(t, "capitals", b.Dataset)
		assert.Equal(t, v["id"], b.VersionID, "version %d", i+1)
		assert.Equal(t, i+1, b.RowCount)
	}
}
