package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/optimize"
)

// startLocal runs plume-local on a free port against DynamoDB Local with a fresh table name and
// returns its base URL and the banner it printed (from "Plume is running at" to "Ctrl-C stops
// everything."); the stack stops when the test ends. env overrides variables.
func startLocal(t *testing.T, env map[string]string) (base, banner string) {
	t.Helper()
	// The AWS SDK reads its configuration from the process environment only.
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddbtest.Endpoint(t))
	t.Setenv("AWS_ACCESS_KEY_ID", blobtest.AccessKeyFor(t))
	t.Setenv("AWS_SECRET_ACCESS_KEY", blobtest.SecretKey)
	t.Setenv("AWS_REGION", "us-east-1")
	vars := map[string]string{
		"PLUME_ADDR":                "127.0.0.1:0",
		"TABLE_NAME":                "plume-local-test-" + uuid.NewString()[:8],
		"AWS_ENDPOINT_URL_DYNAMODB": ddbtest.Endpoint(t),
	}
	for k, v := range env {
		vars[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	stdout, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, func(k string) string { return vars[k] }, w, io.Discard)
		_ = w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("plume-local did not stop within a minute")
		}
	})
	running := regexp.MustCompile(`^Plume is running at (http://\S+)`)
	var printed strings.Builder
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if m := running.FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
		if base == "" {
			continue
		}
		printed.WriteString(lines.Text() + "\n")
		if lines.Text() == "Ctrl-C stops everything." {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return base, printed.String()
		}
	}
	t.Fatalf("plume-local never announced itself: %v", <-done)
	return "", ""
}

// caller sends requests to plume-local at base with key: a JSON body (none when ""), the
// status and the decoded JSON object answered.
func caller(t *testing.T, base, key string) func(method, path, body string) (int, map[string]any) {
	return func(method, path, body string) (int, map[string]any) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
}

func TestPlumeLocalServesTheAPI(t *testing.T) {
	project := uuid.NewString()
	key := "plm_local_test_key_0123456789"
	base, banner := startLocal(t, map[string]string{"PLUME_DEV_PROJECT_ID": project, "PLUME_DEV_API_KEY": key})

	call := caller(t, base, key)

	// The banner names the dashboard and says to sign in there with the key it prints: doing
	// just that lands on the project's pages.
	dashboard := regexp.MustCompile(`(?m)^  Dashboard  : (\S+) \(sign in with the API key\)$`).FindStringSubmatch(banner)
	require.NotNil(t, dashboard, "the banner names the dashboard:\n%s", banner)
	assert.Equal(t, base+"/ui/", dashboard[1])
	assert.Contains(t, banner, "\n  API key    : "+key+"\n")
	assert.Contains(t, banner, "sign-in page", "the banner says how to sign in:\n%s", banner)
	signedIn := signIn(t, dashboard[1], key)
	assert.Equal(t, base+"/ui/", signedIn.URL)
	assert.Equal(t, http.StatusOK, signedIn.Status)
	assert.Contains(t, signedIn.Body, `action="/ui/logout"`, "signed in")

	res, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode, "healthz is public")

	status, v := call("POST", "/v1/tasks/demo/prompt/versions/ensure", `{"content":"hi {{x}}"}`)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, project, v["project_id"], "the dev key belongs to PLUME_DEV_PROJECT_ID")
	assert.Equal(t, "dev", v["created_by"])
	status, _ = call("POST", "/projects/"+project+"/prompts/demo/tags/production:pin", `{"version":1}`)
	assert.Equal(t, http.StatusOK, status)
	status, v = call("GET", "/v1/prompts/demo?tag=production", "")
	assert.Equal(t, http.StatusOK, status)
	assert.EqualValues(t, 1, v["version"])
	// The judges and feedback areas are mounted too, feedback-link pages without a key.
	status, v = call("POST", "/projects/"+project+"/judges", `{"name":"Tone","template":"**Tone**: calm"}`)
	require.Equal(t, http.StatusOK, status, "%v", v)
	status, v = call("POST", "/feedback-links", `{"prompt_slug":"demo","link_type":"prompt_completion"}`)
	require.Equal(t, http.StatusOK, status, "%v", v)
	page, err := http.Get(v["url"].(string))
	require.NoError(t, err)
	page.Body.Close()
	assert.Equal(t, http.StatusOK, page.StatusCode, "the link's URL is served by plume-local")
	assert.Contains(t, page.Header.Get("Content-Type"), "text/html")
	// The gateway streams here: its endpoint is plume-local's own.
	status, v = call("GET", "/projects/"+project+"/gateway", "")
	require.Equal(t, http.StatusOK, status, "%v", v)
	assert.Equal(t, base+"/v1", v["endpoint"])
	// The MCP tool server is mounted too, with the same key.
	req, err := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var tools struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&tools))
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.NotEmpty(t, tools.Result.Tools, "tools/list at /mcp")
	// The metrics count a span once the in-process stream poller has applied its change (it
	// polls every half second: the loop is bounded, not timed).
	start := time.Now().UTC().Add(-time.Minute)
	status, v = call("POST", "/spans", fmt.Sprintf(`[{"id":%q,"trace_id":%q,"name":"chat","kind":"llm","started_at":%d,"duration_ms":20}]`,
		uuid.NewString(), uuid.NewString(), start.Unix()))
	require.Equal(t, http.StatusOK, status, "%v", v)
	var spans any
	for range 600 {
		status, v = call("GET", "/projects/"+project+"/metrics", "")
		require.Equal(t, http.StatusOK, status, "%v", v)
		if spans = v["totals"].(map[string]any)["spans"]; spans != float64(0) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, float64(1), spans, "the metrics count the span")
	status, v = call("GET", "/no/such/route", "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, v, "error")
}

// signedInPage is the page a browser ends on after signIn.
type signedInPage struct {
	URL    string
	Status int
	Body   string
}

// signIn does what the banner tells a person: open the dashboard's URL in a browser (here, a
// client with a cookie jar), which shows the sign-in page, and send the key in its form.
func signIn(t *testing.T, dashboard, key string) signedInPage {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	read := func(res *http.Response) signedInPage {
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return signedInPage{URL: res.Request.URL.String(), Status: res.StatusCode, Body: string(b)}
	}
	res, err := browser.Get(dashboard)
	require.NoError(t, err)
	login := read(res)
	require.Contains(t, login.Body, `name="api_key"`, "the dashboard asks for a key (status %d)", login.Status)
	// The form's action and hidden fields, as the browser would send them.
	field := func(name string) string {
		re := `name="` + name + `" value="([^"]*)"`
		if name == "action" {
			re = `<form [^>]*method="post" action="([^"]+)"`
		}
		m := regexp.MustCompile(re).FindStringSubmatch(login.Body)
		require.NotNil(t, m, "the sign-in form has %s", name)
		return html.UnescapeString(m[1])
	}
	action, err := res.Request.URL.Parse(field("action"))
	require.NoError(t, err)
	res, err = browser.PostForm(action.String(), url.Values{"csrf": {field("csrf")}, "next": {field("next")}, "api_key": {key}})
	require.NoError(t, err)
	return read(res)
}

func TestPlumeLocalSeedIsIdempotent(t *testing.T) {
	table := "plume-local-test-" + uuid.NewString()[:8]
	project := uuid.NewString()
	env := map[string]string{"TABLE_NAME": table, "PLUME_DEV_PROJECT_ID": project, "PLUME_DEV_API_KEY": "plm_same_key_across_runs_01"}

	ctx := context.Background()
	startLocal(t, env)
	// A second stack on the same (persistent) table with the same project and key starts fine.
	base, _ := startLocal(t, env)
	res, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	res.Body.Close()

	// The same key for another project is refused with a clear error.
	env["PLUME_DEV_PROJECT_ID"] = uuid.NewString()
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddbtest.Endpoint(t))
	err = run(ctx, func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return map[string]string{"PLUME_ADDR": "127.0.0.1:0", "AWS_ENDPOINT_URL_DYNAMODB": ddbtest.Endpoint(t)}[k]
	}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already a key of project "+project)
}

func TestPlumeLocalRejectsBadDevProject(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddbtest.Endpoint(t))
	t.Setenv("AWS_ACCESS_KEY_ID", blobtest.AccessKeyFor(t))
	t.Setenv("AWS_SECRET_ACCESS_KEY", blobtest.SecretKey)
	env := map[string]string{
		"PLUME_ADDR": "127.0.0.1:0", "TABLE_NAME": "plume-local-test-" + uuid.NewString()[:8],
		"AWS_ENDPOINT_URL_DYNAMODB": ddbtest.Endpoint(t), "PLUME_DEV_PROJECT_ID": "dev",
	}
	err := run(context.Background(), func(k string) string { return env[k] }, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PLUME_DEV_PROJECT_ID")
}

// TestPlumeLocalResumesStaleRuns: plume-local looks for the optimization runs whose worker is
// gone every PLUME_RESUME_INTERVAL, as OptimizerWorkerFunction's ResumeRuns schedule does in a
// deployment: a run left running an hour ago that was resumed too often already fails with the
// reason (one that may still be resumed would be queued again, and run by a model).
func TestPlumeLocalResumesStaleRuns(t *testing.T) {
	table, project := "plume-local-test-"+uuid.NewString()[:8], uuid.NewString()
	startLocal(t, map[string]string{"TABLE_NAME": table, "PLUME_DEV_PROJECT_ID": project, "PLUME_RESUME_INTERVAL": "50ms"})
	store := ddb.NewOptimizationStore(ddb.NewTable(ddbtest.Client(t, nil), table))
	ctx, old := context.Background(), time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	r, err := store.CreateRun(ctx, optimize.Run{
		ID: uuid.Must(uuid.NewV7()).String(), ProjectID: project, Target: optimize.Target{Kind: optimize.TargetPrompt, Slug: "support"},
		Requested: optimize.TypeQuickRefine, Status: optimize.StatusRunning, Resumes: optimizer.MaxResumes,
		Baseline: optimize.Baseline{Content: "You are a support agent."}, CreatedAt: old, StartedAt: &old, UpdatedAt: old,
	})
	require.NoError(t, err)

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got, err := store.Run(ctx, project, r.ID)
		require.NoError(c, err)
		assert.Equal(c, optimize.StatusFailed, got.Status)
		assert.Contains(c, got.Error, "stopped")
	}, time.Minute, 50*time.Millisecond, "the stale run was never resumed")
}

// TestPlumeLocalEvaluatesMonitors: plume-local evaluates the monitors every
// PLUME_MONITOR_INTERVAL, as MonitorFunction's schedule does: a new monitor leaves no_data.
func TestPlumeLocalEvaluatesMonitors(t *testing.T) {
	project, key := uuid.NewString(), "plm_local_monitors_key_0123456789"
	base, _ := startLocal(t, map[string]string{"PLUME_DEV_PROJECT_ID": project, "PLUME_DEV_API_KEY": key, "PLUME_MONITOR_INTERVAL": "50ms"})
	call := caller(t, base, key)
	status, m := call("POST", "/projects/"+project+"/monitors",
		`{"name": "spend", "metric": "cost", "window": "5m", "comparison": "gt", "threshold": 1, "min_samples": 0}`)
	require.Equal(t, http.StatusOK, status, "%v", m)
	require.Equal(t, "no_data", m["state"])
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, got := call("GET", "/projects/"+project+"/monitors/"+m["id"].(string), "")
		assert.Equal(c, "ok", got["state"])
	}, time.Minute, 50*time.Millisecond, "no evaluation of the monitor")
}

func TestPlumeLocalRejectsBadMonitorInterval(t *testing.T) {
	env := map[string]string{"TABLE_NAME": "plume-local-test-x", "PLUME_MONITOR_INTERVAL": "often"}
	err := run(context.Background(), func(k string) string { return env[k] }, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PLUME_MONITOR_INTERVAL")
}

func TestPlumeLocalRejectsBadResumeInterval(t *testing.T) {
	for _, interval := range []string{"0s", "-1m", "often"} {
		t.Run(interval, func(t *testing.T) {
			env := map[string]string{"TABLE_NAME": "plume-local-test-x", "PLUME_RESUME_INTERVAL": interval}
			err := run(context.Background(), func(k string) string { return env[k] }, io.Discard, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "PLUME_RESUME_INTERVAL")
		})
	}
}

// TestPlumeLocalJudges: with no model provider configured, plume-local starts the fake model
// server and runs the judge runner in-process on the spans it stores, as EvaluatorFunction
// runs on the bucket's events: an evaluation appears for an ingested llm span.
func TestPlumeLocalJudges(t *testing.T) {
	project, key := uuid.NewString(), "plm_local_judges_key_0123456789"
	// A failed first attempt is retried after a second, not a minute.
	base, _ := startLocal(t, map[string]string{"PLUME_DEV_PROJECT_ID": project, "PLUME_DEV_API_KEY": key, "PLUME_EVALUATOR_RETRY_DELAY": "1s"})
	call := caller(t, base, key)
	status, j := call("POST", "/projects/"+project+"/judges", `{"name": "helpful", "template": "Helpful?\n{{input}}\n{{output}}"}`)
	require.Equal(t, http.StatusOK, status, "%v", j)
	spanID := uuid.NewString()
	at := float64(time.Now().UnixMicro()) / 1e6
	status, v := call("POST", "/spans", fmt.Sprintf(`[{"id": %q, "trace_id": %q, "name": "chat", "kind": "llm", "started_at": %f,
		"ended_at": %f, "input_data": "Where is my order?", "output_data": "It ships tomorrow."}]`, spanID, uuid.NewString(), at, at+1))
	require.Equal(t, http.StatusOK, status, "%v", v)

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		status, v := call("GET", "/projects/"+project+"/spans/"+spanID+"/evaluations", "")
		require.Equal(c, http.StatusOK, status)
		evs, _ := v["evaluations"].([]any)
		require.Len(c, evs, 1)
		ev := evs[0].(map[string]any)
		assert.Equal(c, j["id"], ev["judge_id"])
		assert.Equal(c, "gpt-4o-mini", ev["model_used"], "answered by the fake model server")
	}, 30*time.Second, 50*time.Millisecond, "no evaluation appeared")
}

// TestPlumeLocalOptimizes: plume-local serves the optimization queue with the worker
// in-process: a run started through the API ends, here with the fake model's answers.
func TestPlumeLocalOptimizes(t *testing.T) {
	project, key := uuid.NewString(), "plm_local_optimize_key_0123456789"
	base, _ := startLocal(t, map[string]string{"PLUME_DEV_PROJECT_ID": project, "PLUME_DEV_API_KEY": key})
	call := caller(t, base, key)
	status, v := call("POST", "/v1/tasks/support/prompt/versions/ensure", `{"content": "You are a support agent."}`)
	require.Equal(t, http.StatusOK, status, "%v", v)
	status, j := call("POST", "/projects/"+project+"/judges", `{"name": "helpful", "template": "Helpful?\n{{input}}\n{{output}}"}`)
	require.Equal(t, http.StatusOK, status, "%v", j)
	status, v = call("PUT", "/projects/"+project+"/prompts/support/judges/"+j["id"].(string), "")
	require.Equal(t, http.StatusOK, status, "%v", v)
	at := float64(time.Now().UnixMicro()) / 1e6
	for i := range 5 {
		id := uuid.NewString()
		status, v = call("POST", "/spans", fmt.Sprintf(`[{"id": %q, "trace_id": %q, "name": "chat", "kind": "llm", "started_at": %f, "ended_at": %f,
			"input_data": "Question %d", "output_data": "Answer %d", "attributes": {"zeroeval": {"task": "support", "prompt_slug": "support"}}}]`,
			id, uuid.NewString(), at, at+1, i, i))
		require.Equal(t, http.StatusOK, status, "%v", v)
		status, v = call("POST", "/v1/prompts/support/completions/"+id+"/feedback", `{"thumbs_up": false, "reason": "too vague"}`)
		require.Equal(t, http.StatusOK, status, "%v", v)
	}
	status, run := call("POST", "/projects/"+project+"/prompts/support/optimization-runs", `{"optimizer_type": "quick_refine", "config": {"seed": 1}}`)
	require.Equal(t, http.StatusOK, status, "%v", run)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		status, got := call("GET", "/projects/"+project+"/optimization-runs/"+run["id"].(string), "")
		require.Equal(c, http.StatusOK, status)
		assert.Equal(c, "succeeded", got["status"], "error: %v", got["error"])
	}, 30*time.Second, 50*time.Millisecond, "the run never succeeded")
}
