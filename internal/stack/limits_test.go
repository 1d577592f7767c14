package stack_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/asyncinvoke"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/lambdahttp"
	"github.com/plumehq/plume/shared/monitor"
	otlpmap "github.com/plumehq/plume/shared/otlp"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/signal"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/webhook"
)

// TestEveryAnswerWithinLambda sends every route of every function of the stack, read from the
// functions' own routers, its largest answer: a project filled to the limits of what each
// input accepts (prompt versions of 256 KB of quotes and backslashes, spans of 1 MB inputs and
// outputs, a span of control characters through OTLP, a trace of 1,000 spans, judges of 32 KB
// templates and 20 long criteria, evaluations and feedback of the longest reasons, runs of the
// largest baseline) and each list asked at its largest limit. Through the stack as deployed
// (stack.Handler: lambdahttp.AsDeployed, which answers API Gateway's 500 for a payload Lambda
// refuses), gzipped and not, every answer is the route's own, at most api.MaxAnswerBytes, and
// its Lambda response payload at most 6 MB; a list past the budget says where the rest starts.
// A route without a request here fails the test: a new route needs its largest answer named.
func TestEveryAnswerWithinLambda(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a project to the limits of every input")
	}
	srv := apitest.New(t, apitest.Options{})
	srv.Optimizations.Serve(func(context.Context, []byte) error { return nil }, asyncinvoke.Config{Retries: -1}) // runs stay queued
	whole, err := stack.Handler(srv.Env)
	require.NoError(t, err)
	whole = srv.Applying(whole) // the aggregates follow its writes, as API.Handler's
	f := fill(t, srv, whole)

	requests := f.requests(t)
	covered := map[string]bool{}
	for _, fn := range stack.Functions {
		h, err := fn.Build(srv.Env)
		require.NoError(t, err)
		router, ok := h.(*auth.Router)
		require.True(t, ok, "%s: not an *auth.Router", fn.Name)
		for _, rt := range router.Routes() {
			covered[rt.Pattern] = true
			reqs := requests[rt.Pattern]
			if !assert.NotEmpty(t, reqs, "%s: no largest answer for route %s; add one to requests", fn.Name, rt.Pattern) {
				continue
			}
			for _, rq := range reqs {
				t.Run(rt.Pattern+" "+rq.path, func(t *testing.T) { f.check(t, rq) })
			}
		}
	}
	for pattern := range requests {
		assert.True(t, covered[pattern], "requests names %s, which no router serves", pattern)
	}
}

// request is one request of the table: its path, body (JSON unless a string or []byte) and
// headers, the status it must answer, whether it is sent with the dashboard's session and
// whether its answer must say that the list goes on.
type request struct {
	method, path string
	body         any
	header       http.Header
	status       int
	session      bool
	cut          string // the header that says a list goes on, when the answer must be cut
	// again is sent instead of the request the second time, for a request that changes what it
	// reads (a cancel, a pin with its precondition).
	again *request
	// other names the helper whose area bounds the route's answer, when it is not bounded yet:
	// its payload is checked, its body not.
	other string
}

// filled is the project the table fills, and what it stored.
type filled struct {
	srv     *apitest.API
	whole   http.Handler
	jar     http.CookieJar
	csrf    string
	asset   string // the dashboard's style sheet
	pid     string
	key     string
	now     time.Time
	content string // the largest version content, as stored
	version string // a version id of the big prompt
	traceID string // the trace of the 1 MB spans
	bigSpan string
	bigIDs  []string // the spans of 1 MB input and output
	ctlSpan string   // the OTLP span of control characters
	wide    string   // the trace of 1,000 spans
	wideIDs []string
	session string
	attach  string // a span with the most attachments
	judges  []string
	runs    []string
	llm     []string // the big prompt's completions
	link    string
	token   string
	keyID   string
	// dsVersion is a version of the dataset "big" (rows of the largest size), experiment an
	// experiment on it with the largest results, row one of its rows.
	dsVersion, experiment, row string
	hooks                      []string // webhooks of the longest URLs, all events
	dlv                        string   // a delivery of hooks[0], which has the most
	monitors                   []string // monitors of the longest names and filters, full histories, notifying every webhook
}

// fill stores the project's largest inputs through whole, as a client of a deployment would
// send them.
func fill(t *testing.T, srv *apitest.API, whole http.Handler) *filled {
	t.Helper()
	f := &filled{srv: srv, whole: whole, pid: srv.A.ProjectID, key: srv.A.Key, now: time.Now().UTC(),
		traceID: uuid.NewString(), wide: uuid.NewString(), session: uuid.NewString()}
	must := func(method, path string, body any) webtest.Response {
		t.Helper()
		res := webtest.Serve(whole, webtest.NewRequest(t, method, path, f.key, body))
		require.Equal(t, http.StatusOK, res.Status, "%s %s: %.300s", method, path, res.Body)
		return res
	}

	// Prompts: 8 versions of the big prompt and 7 more prompts, each of the most content, every
	// byte of which JSON escapes (a version answers 512 KB).
	contentOf := func(i int) string {
		prefix := fmt.Sprintf("version %d: ", i)
		return prefix + strings.Repeat(`"\`, (prompt.MaxContentBytes-len(prefix))/2)
	}
	for i := range 8 {
		f.version = must("POST", "/v1/tasks/big/prompt/versions/ensure", map[string]any{"content": contentOf(i)}).Map(t)["id"].(string)
	}
	f.content = contentOf(7)
	for i := range 7 {
		must("POST", fmt.Sprintf("/v1/tasks/big-%d/prompt/versions/ensure", i), map[string]any{"content": contentOf(100 + i)})
	}
	must("POST", "/projects/"+f.pid+"/prompts/big/tags/production:pin", map[string]any{"version": 8})

	// Spans: three of 1 MB input and output (what one request carries), a trace of 1,000 spans
	// of long names, a span of the most attachments, and through OTLP (gzipped: the event
	// carries it) a span whose input and output are 1 MB of control characters, six bytes each
	// in JSON.
	at := float64(f.now.Add(-time.Hour).UnixMicro()) / 1e6
	for i := range 3 {
		id := uuid.NewString()
		f.bigSpan = id
		f.bigIDs = append(f.bigIDs, id)
		must("POST", "/spans", []any{map[string]any{"id": id, "trace_id": f.traceID, "session_id": f.session, "name": "big",
			"started_at": at + float64(i), "ended_at": at + float64(i) + 1,
			"input_data": strings.Repeat("i", trace.MaxDataBytes), "output_data": strings.Repeat("o", trace.MaxDataBytes)}})
	}
	var wide []any
	for i := range api.SpanTreeWholeMax {
		id := uuid.NewString()
		f.wideIDs = append(f.wideIDs, id)
		wide = append(wide, map[string]any{"id": id, "trace_id": f.wide, "session_id": f.session, "name": fmt.Sprintf("%04d %s", i, strings.Repeat("n", trace.MaxNameLen-5)),
			"started_at": at + float64(i)/1000, "ended_at": at + 1, "status": "error", "error_code": strings.Repeat("e", 100),
			"tags": map[string]any{"a": strings.Repeat("t", 200), "b": strings.Repeat("u", 200)}})
	}
	must("POST", "/spans", wide)
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n" + strings.Repeat("x", 64)))
	var files []any
	for i := range trace.DefaultMaxAttachmentsPerSpan {
		files = append(files, map[string]any{"type": "image", "label": fmt.Sprintf("%02d %s", i, strings.Repeat("l", 200)), "base64": png})
	}
	f.attach = uuid.NewString()
	must("POST", "/spans", []any{map[string]any{"id": f.attach, "trace_id": f.wide, "name": "files", "started_at": at,
		"attributes": map[string]any{"attachments": files}}})
	f.ctlSpan = f.postControlSpan(t, at)
	// Signals: the most an entity holds, of the longest names, on the control-character span
	// (its answer is cut to fit beside them), the big trace and the session.
	for _, e := range [][2]string{{"span", f.ctlSpan}, {"trace", f.traceID}, {"session", f.session}} {
		sigs := make([]any, signal.MaxSignals)
		for i := range sigs {
			sigs[i] = map[string]any{"entity_type": e[0], "entity_id": e[1], "name": fmt.Sprintf("%03d%s", i, strings.Repeat("n", 253)), "value": i}
		}
		must("POST", "/signals/bulk", map[string]any{"signals": sigs})
	}

	// Judges: 25 of the longest template and criteria (about 150 KB each in JSON).
	var criteria []any
	for i := range judge.MaxCriteria {
		criteria = append(criteria, map[string]any{"key": fmt.Sprintf("c%02d", i), "label": strings.Repeat("l", judge.MaxCriterionLabel),
			"description": strings.Repeat(`"`, judge.MaxCriterionDesc)})
	}
	for i := range 25 {
		res := must("POST", "/projects/"+f.pid+"/judges", map[string]any{"name": fmt.Sprintf("judge %d", i),
			"template": strings.Repeat(`"`, judge.MaxTemplateBytes-100) + " {{output}}", "criteria": criteria})
		f.judges = append(f.judges, res.Map(t)["id"].(string))
	}
	for i := range 4 {
		must("PATCH", "/projects/"+f.pid+"/judges/"+f.judges[0], map[string]any{"template": fmt.Sprintf("%d ", i) + strings.Repeat(`"`, judge.MaxTemplateBytes-100) + " {{output}}"})
	}
	must("PUT", "/projects/"+f.pid+"/prompts/big/judges/"+f.judges[0], nil)

	// Evaluations of the longest reasons: 80 by the first judge, and one by every judge of the
	// same span.
	evaluation := func(spanID string) map[string]any {
		scores := map[string]any{}
		for i := range judge.MaxCriteria {
			scores[fmt.Sprintf("c%02d", i)] = map[string]any{"score": 1, "reason": strings.Repeat("c", judge.MaxCriterionReasonBytes)}
		}
		return map[string]any{"span_id": spanID, "evaluation_result": true, "evaluation_reason": strings.Repeat("r", judge.MaxReasonBytes),
			"criteria_scores": scores}
	}
	for page := range 2 {
		var evs []any
		for _, id := range f.wideIDs[page*40 : page*40+40] {
			evs = append(evs, evaluation(id))
		}
		must("POST", "/projects/"+f.pid+"/judges/"+f.judges[0]+"/evaluations", evs)
	}
	for _, j := range f.judges[1:] {
		must("POST", "/projects/"+f.pid+"/judges/"+j+"/evaluations", []any{evaluation(f.wideIDs[0])})
	}

	// Completions of the big prompt, each with the feedback of three people of the longest
	// texts (96 KB each).
	var llm []any
	for i := range 12 {
		id := uuid.NewString()
		f.llm = append(f.llm, id)
		llm = append(llm, apitest.LLMSpan(id, f.traceID, "", "big", f.version, strings.Repeat("q", 4000), strings.Repeat("a", 4000), f.now.Add(-time.Duration(i)*time.Minute)))
	}
	must("POST", "/spans", llm)
	for u := range 3 {
		userKey := srv.KeyFor(t, srv.A, fmt.Sprintf("reviewer-%d", u))
		for _, id := range f.llm {
			res := webtest.Serve(whole, webtest.NewRequest(t, "POST", "/v1/prompts/big/completions/"+id+"/feedback", userKey, map[string]any{
				"thumbs_up": false, "reason": strings.Repeat("w", 16<<10), "expected_output": strings.Repeat("x", 64<<10),
				"metadata": map[string]any{"m": strings.Repeat("y", 16<<10-20)}}))
			require.Equal(t, http.StatusOK, res.Status, "%.300s", res.Body)
		}
	}

	// Optimization runs of a prompt of the most content: each answers its 256 KB baseline. (A
	// baseline of content that JSON escapes, as the big prompt's, does not fit a run's DynamoDB
	// item: 500, a bug of its own.)
	must("POST", "/v1/tasks/plain/prompt/versions/ensure", map[string]any{"content": strings.Repeat("p", prompt.MaxContentBytes)})
	must("PUT", "/projects/"+f.pid+"/prompts/plain/judges/"+f.judges[0], nil)
	for range 12 {
		f.runs = append(f.runs, must("POST", "/projects/"+f.pid+"/prompts/plain/optimization-runs", map[string]any{"optimizer_type": "quick_refine"}).Map(t)["id"].(string))
	}

	// Webhooks: as many as a project may have, of the longest URLs (a non-public address: no
	// delivery leaves the machine), and the most deliveries a log page shows.
	for i := range webhook.MaxPerProject {
		hookURL := fmt.Sprintf("http://192.0.2.1/%d/", i) + strings.Repeat("u", 2000)
		f.hooks = append(f.hooks, must("POST", "/projects/"+f.pid+"/webhooks", map[string]any{"url": hookURL, "events": api.EventTypes}).Map(t)["id"].(string))
	}
	for i := range 200 {
		ev := api.Event{ID: fmt.Sprintf("evt_%032d", i), Type: api.EventPromptTagMoved, Time: f.now.Add(time.Duration(i) * time.Millisecond), ProjectID: f.pid, Data: []byte(`{}`)}
		d := webhook.Delivery{ID: webhook.DeliveryID(ev, f.hooks[0]), ProjectID: f.pid, WebhookID: f.hooks[0], EventID: ev.ID, EventType: ev.Type, Event: []byte(`{}`),
			Status: api.DeliveryFailed, Attempts: 100, LastStatusCode: 500, LastError: strings.Repeat("e", 200), CreatedAt: f.now, UpdatedAt: f.now, WindowStart: f.now}
		_, _, err := srv.Env.WebhookStore().PutDelivery(context.Background(), d)
		require.NoError(t, err)
		f.dlv = d.ID
	}

	// Monitors: as many as a project may have, of the longest name and filter, notifying
	// every webhook, each with a full history of state changes of the largest values.
	for i := range monitor.MaxPerProject {
		id := must("POST", "/projects/"+f.pid+"/monitors", map[string]any{"name": fmt.Sprintf("%03d", i) + strings.Repeat("\u00e9", 125), "metric": "cost",
			"filters": map[string]any{"tag": "k:" + strings.Repeat("v", 254)}, "window": "7d", "comparison": "gt", "threshold": 1, "notify": f.hooks}).Map(t)["id"].(string)
		f.monitors = append(f.monitors, id)
		m, err := srv.Env.MonitorStore().Monitor(context.Background(), f.pid, id)
		require.NoError(t, err)
		next, value := m, -1.2345678901234567e+100 // as long as a float64 prints
		for range monitor.HistoryLen {
			next.History = append(next.History, api.MonitorStateChange{From: api.MonitorNoData, To: api.MonitorAlerting, At: f.now, Value: &value, Samples: 1 << 62, Reminder: true})
		}
		next.Seq, next.Value, next.Samples = m.Seq+1, &value, 1<<62
		ok, err := srv.Env.MonitorStore().RecordState(context.Background(), m, next)
		require.NoError(t, err)
		require.True(t, ok)
	}

	// A dataset of rows of the largest size, as many as one push takes, and an experiment of
	// the largest results with evaluations and metrics.
	must("POST", "/v1/datasets", map[string]any{"name": "big", "description": strings.Repeat("d", 1000)})
	var rows []any
	for i := range 5 {
		rows = append(rows, map[string]any{"i": fmt.Sprint(i), "text": strings.Repeat("r", api.MaxDatasetRowBytes-100)})
	}
	f.dsVersion = must("POST", "/v1/datasets/big/data", map[string]any{"data": rows}).Map(t)["id"].(string)
	f.row = must("GET", "/v1/datasets/big/data?limit=1", nil).Map(t)["rows"].([]any)[0].(map[string]any)["row_id"].(string)
	f.experiment = must("POST", "/v1/experiments", map[string]any{"dataset_version_id": f.dsVersion, "name": "big"}).Map(t)["id"].(string)
	evaluator := must("POST", "/v1/experiments/"+f.experiment+"/evaluators", map[string]any{"name": "exact", "evaluation_mode": "row"}).Map(t)["id"].(string)
	for run := 1; run <= 12; run++ {
		result := must("POST", "/v1/experiments/"+f.experiment+"/results", map[string]any{"dataset_row_id": f.row, "run_number": run,
			"result": strings.Repeat("x", api.MaxExperimentResultBytes-1000)}).Map(t)["id"].(string)
		must("POST", "/v1/experiments/"+f.experiment+"/evaluations", map[string]any{"evaluator_id": evaluator, "experiment_result_id": result,
			"evaluation_value": strings.Repeat("v", 1000)})
	}

	// Settings and links.
	must("PUT", "/projects/"+f.pid+"/model-prices/"+strings.Repeat("m", 200), map[string]any{"input": 1, "output": 2})
	f.keyID = must("POST", "/projects/"+f.pid+"/api-keys", map[string]any{"role": "member", "name": strings.Repeat("k", 100)}).Map(t)["id"].(string)
	link := must("POST", "/feedback-links", map[string]any{"prompt_slug": "big", "link_type": "prompt_completion"}).Map(t)
	f.link = link["id"].(string)
	u, err := url.Parse(link["url"].(string))
	require.NoError(t, err)
	f.token = strings.TrimPrefix(u.Path, "/f/")

	// The metrics are asked at their most buckets; their lists of models, prompts and judges
	// are cut to fit by the rule TestFitMetrics holds at its worst (DynamoDB Local serves a
	// table with a stream ten times slower, so this one has none).
	f.signIn(t)
	return f
}

// postControlSpan exports, through OTLP gzipped as the Collector sends it, a span whose input
// and output are 1 MB of control characters each, and returns its id.
func (f *filled) postControlSpan(t *testing.T, at float64) string {
	t.Helper()
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	traceID, spanID := pcommon.TraceID(uuid.New()), pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8}
	sp.SetTraceID(traceID)
	sp.SetSpanID(spanID)
	sp.SetName("control characters")
	start := time.UnixMicro(int64(at * 1e6))
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
	sp.Attributes().PutStr("input.value", strings.Repeat("\x01", trace.MaxDataBytes))
	sp.Attributes().PutStr("output.value", strings.Repeat("\x02", trace.MaxDataBytes))
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(body)
	require.NoError(t, zw.Close())
	req := webtest.NewRequest(t, "POST", "/v1/traces", f.key, gz.Bytes())
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "gzip")
	res := webtest.Serve(f.whole, req)
	require.Equal(t, http.StatusOK, res.Status, "%.300s", res.Body)
	return otlpmap.SpanID([8]byte(spanID))
}

// signIn signs in to the dashboard with the project's key: the session's cookie and CSRF token.
func (f *filled) signIn(t *testing.T) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	f.jar = jar
	res := f.serve(t, request{method: "GET", path: "/ui/login", session: true}, "")
	f.csrf = csrfField.FindStringSubmatch(string(res.Body))[1]
	f.asset = regexp.MustCompile(`/ui/assets/app\.[0-9a-f]+\.css`).FindString(string(res.Body))
	res = f.serve(t, request{method: "POST", path: "/ui/login", session: true, body: url.Values{"api_key": {f.key}, "csrf": {f.csrf}}.Encode(),
		header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Origin": {"https://example.com"}}}, "")
	require.Equal(t, http.StatusSeeOther, res.Status, "%.300s", res.Body)
	res = f.serve(t, request{method: "GET", path: "/ui/", session: true}, "")
	require.Equal(t, http.StatusOK, res.Status, "%.300s", res.Body)
	f.csrf = csrfField.FindStringSubmatch(string(res.Body))[1]
}

// site is the origin the dashboard's requests are made to.
var site, _ = url.Parse("https://example.com/")

// serve sends rq through the stack with acceptEncoding ("" for none), the key (or the
// session's cookies) and rq's headers.
func (f *filled) serve(t *testing.T, rq request, acceptEncoding string) webtest.Response {
	t.Helper()
	key := f.key
	if rq.session || strings.HasPrefix(rq.path, "/f/") {
		key = ""
	}
	req := webtest.NewRequest(t, rq.method, rq.path, key, rq.body)
	req.Host = site.Host
	maps.Copy(req.Header, rq.header)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	at := site.ResolveReference(&url.URL{Path: req.URL.Path})
	if rq.session {
		for _, c := range f.jar.Cookies(at) {
			req.AddCookie(c)
		}
	}
	rec := httptest.NewRecorder()
	f.whole.ServeHTTP(rec, req)
	res := rec.Result()
	if rq.session {
		f.jar.SetCookies(at, res.Cookies())
	}
	return webtest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// check sends rq as a client that does not accept gzip and as one that does, and checks both
// answers.
func (f *filled) check(t *testing.T, rq request) {
	for _, enc := range []string{"", "gzip"} {
		if enc != "" && rq.again != nil {
			rq = *rq.again
		}
		want := cmpOr(rq.status, http.StatusOK)
		res := f.serve(t, rq, enc)
		require.Equal(t, want, res.Status, "Accept-Encoding %q: %.300s", enc, res.Body)
		assert.NotEqual(t, `{"message":"Internal Server Error"}`, strings.TrimSpace(string(res.Body)), "Lambda refused the answer")
		payload := lambdahttp.Payload(res.Status, res.Header, res.Body)
		assert.LessOrEqual(t, payload, lambdahttp.MaxResponsePayload)
		if enc == "" && rq.other == "" {
			assert.LessOrEqual(t, len(res.Body), api.MaxAnswerBytes, "the answer's body")
			if rq.cut != "" {
				assert.NotEmpty(t, res.Header.Get(rq.cut), "the answer is cut and says so (%s)", rq.cut)
			}
		}
		t.Logf("Accept-Encoding %-4q: %3d, body %9d bytes, Lambda payload %9d bytes", enc, res.Status, len(res.Body), payload)
	}
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// mcpCall is the JSON-RPC request of a tools/call of tool with args.
func mcpCall(tool string, args map[string]any) request {
	return request{method: "POST", path: "/mcp", body: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}}, header: http.Header{"Accept": {"application/json, text/event-stream"}}}
}

// requests are the table: for every route pattern, the requests of its largest answers.
func (f *filled) requests(t *testing.T) map[string][]request {
	p := "/projects/" + f.pid
	hash := prompt.Hash(f.content)
	ids := strings.Join(f.wideIDs[:api.MaxSummaryIDs], ",")
	page := func(path string) request { return request{method: "GET", path: path, session: true} }
	at := float64(f.now.UnixMicro()) / 1e6
	sigEntity := uuid.NewString()
	bigSignals := make([]any, 200)
	for i := range bigSignals {
		bigSignals[i] = map[string]any{"entity_type": "span", "entity_id": sigEntity, "name": fmt.Sprintf("%03d%s", i, strings.Repeat("n", 253)), "value": i}
	}
	resend := []any{} // the big spans named again: answered as stored, 2 MB each
	for _, id := range f.bigIDs {
		resend = append(resend, map[string]any{"id": id, "trace_id": f.traceID, "name": "big", "started_at": at})
	}
	form := func(path string, values url.Values) request {
		values.Set("csrf", f.csrf)
		return request{method: "POST", path: path, session: true, body: values.Encode(), status: http.StatusSeeOther,
			header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Origin": {"https://example.com"}}}
	}
	get := func(path string) request { return request{method: "GET", path: path} }
	paged := func(path string) request { return request{method: "GET", path: path, cut: api.NextOffsetHeader} }
	return map[string][]request{
		// Prompts.
		"GET /healthz":                                                   {get("/healthz")},
		"GET /openapi.json":                                              {get("/openapi.json")},
		"GET /v1/prompts/{slug}":                                         {get("/v1/prompts/big"), get("/v1/prompts/big?tag=production")},
		"POST /v1/tasks/{task}/prompt/versions/ensure":                   {{method: "POST", path: "/v1/tasks/big/prompt/versions/ensure", body: map[string]any{"content": f.content}}},
		"GET /v1/tasks/{task}/prompt/versions/by-hash/{hash}":            {get("/v1/tasks/big/prompt/versions/by-hash/" + hash)},
		"GET /v1/tasks/{task}/prompt/latest":                             {get("/v1/tasks/big/prompt/latest")},
		"GET /v1/prompt-versions/{version_id}/model":                     {get("/v1/prompt-versions/" + f.version + "/model")},
		"GET /projects/{project_id}/prompts":                             {paged(p + "/prompts")},
		"GET /projects/{project_id}/prompts/{slug}/versions":             {paged(p + "/prompts/big/versions")},
		"PATCH /projects/{project_id}/prompts/{slug}/versions/{version}": {{method: "PATCH", path: p + "/prompts/big/versions/8", body: map[string]any{"model_id": strings.Repeat("g", 200)}}},
		"GET /projects/{project_id}/prompts/{slug}/tags":                 {get(p + "/prompts/big/tags")},
		"POST /projects/{project_id}/prompts/{slug}/tags/{tag_action}":   {{method: "POST", path: p + "/prompts/big/tags/staging:pin", body: map[string]any{"version": 8}}},

		// Tracing.
		"POST /spans":                       {{method: "POST", path: "/spans", body: resend, cut: api.OmittedHeader}},
		"POST /traces":                      {{method: "POST", path: "/traces", body: []any{map[string]any{"id": f.traceID, "session_id": f.session, "name": "big", "started_at": at}, map[string]any{"id": f.wide, "session_id": f.session, "name": "wide", "started_at": at}}}},
		"POST /sessions":                    {{method: "POST", path: "/sessions", body: []any{map[string]any{"id": f.session, "project_id": f.pid, "name": strings.Repeat("s", 200)}}}},
		"POST /spans/{span_id}/attachments": {{method: "POST", path: "/spans/" + f.bigSpan + "/attachments", body: map[string]any{"content_type": "image/png", "size": 1 << 20}}},
		"GET /spans": {
			paged("/spans?trace_id=" + f.traceID + "&limit=10000"),
			get("/spans?id=" + f.ctlSpan),
			paged("/spans?limit=10000"),
			get("/spans?trace_id=" + f.wide + "&limit=10000"),
		},
		"GET /traces":                      {get("/traces?limit=500"), get("/traces?limit=500&sort_by=cost")},
		"GET /sessions":                    {get("/sessions?limit=500")},
		"GET /spans/{span_id}/attachments": {get("/spans/" + f.attach + "/attachments")},
		"GET /traces/{trace_id}/tree":      {get("/traces/" + f.wide + "/tree?limit=" + fmt.Sprint(api.SpanTreeMaxLimit)), get("/traces/" + f.traceID + "/tree")},
		"GET /spans/summaries":             {get("/spans/summaries?ids=" + ids)},
		"GET /spans/{span_id}":             {get("/spans/" + f.ctlSpan), get("/spans/" + f.bigSpan)},
		"GET /traces/{trace_id}":           {get("/traces/" + f.traceID)},
		"GET /sessions/{session_id}":       {get("/sessions/" + f.session)},
		"GET /projects/{project_id}/metrics": {
			get(p + "/metrics?" + window(f.now, time.Hour, 2160)), get(p + "/metrics?" + window(f.now, time.Minute, 1440)),
			get(p + "/metrics?" + window(f.now, 24*time.Hour, 400)),
		},

		// OTLP.
		"POST /v1/traces":  {{method: "POST", path: "/v1/traces", body: `{"resourceSpans":[]}`}},
		"POST /v1/metrics": {{method: "POST", path: "/v1/metrics", body: `{"resourceMetrics":[]}`}},
		"POST /v1/logs":    {{method: "POST", path: "/v1/logs", body: `{"resourceLogs":[]}`}},

		// Settings.
		"GET /projects/{project_id}/model-prices":               {get(p + "/model-prices")},
		"GET /projects/{project_id}/model-prices/{model...}":    {get(p + "/model-prices/" + strings.Repeat("m", 200))},
		"PUT /projects/{project_id}/model-prices/{model...}":    {{method: "PUT", path: p + "/model-prices/" + strings.Repeat("m", 200), body: map[string]any{"input": 1, "output": 2}}},
		"DELETE /projects/{project_id}/model-prices/{model...}": {{method: "DELETE", path: p + "/model-prices/" + strings.Repeat("z", 200), status: http.StatusNotFound}},
		"GET /projects/{project_id}/api-keys":                   {get(p + "/api-keys")},
		"POST /projects/{project_id}/api-keys":                  {{method: "POST", path: p + "/api-keys", body: map[string]any{"role": "ingest", "name": strings.Repeat("k", 100)}}},
		"DELETE /projects/{project_id}/api-keys/{key_id}":       {{method: "DELETE", path: p + "/api-keys/" + f.keyID}},
		"GET /projects/{project_id}/gateway":                    {get(p + "/gateway")},

		// Judges.
		"POST /projects/{project_id}/judges":                             {{method: "POST", path: p + "/judges", body: map[string]any{"name": "one more", "template": strings.Repeat(`"`, judge.MaxTemplateBytes-100) + " {{output}}"}}},
		"GET /projects/{project_id}/judges":                              {paged(p + "/judges")},
		"GET /projects/{project_id}/judges/{judge_id}":                   {get(p + "/judges/" + f.judges[0])},
		"PATCH /projects/{project_id}/judges/{judge_id}":                 {{method: "PATCH", path: p + "/judges/" + f.judges[1], body: map[string]any{"name": "renamed"}}},
		"GET /projects/{project_id}/judges/{judge_id}/criteria":          {get(p + "/judges/" + f.judges[0] + "/criteria")},
		"GET /projects/{project_id}/judges/{judge_id}/evaluations":       {paged(p + "/judges/" + f.judges[0] + "/evaluations?limit=500")},
		"POST /projects/{project_id}/judges/{judge_id}/evaluations":      {{method: "POST", path: p + "/judges/" + f.judges[2] + "/evaluations", body: f.evaluationsOf(40), cut: api.OmittedHeader}},
		"GET /projects/{project_id}/judges/{judge_id}/performance":       {get(p + "/judges/" + f.judges[0] + "/performance")},
		"POST /projects/{project_id}/judges/{judge_id}/backfill":         {{method: "POST", path: p + "/judges/" + f.judges[0] + "/backfill", body: map[string]any{"count": judge.MaxBackfill}}},
		"GET /projects/{project_id}/judges/{judge_id}/versions":          {get(p + "/judges/" + f.judges[0] + "/versions")},
		"GET /projects/{project_id}/spans/{span_id}/evaluations":         {get(p + "/spans/" + f.wideIDs[0] + "/evaluations")},
		"PUT /projects/{project_id}/prompts/{slug}/judges/{judge_id}":    {{method: "PUT", path: p + "/prompts/big/judges/" + f.judges[1]}},
		"DELETE /projects/{project_id}/prompts/{slug}/judges/{judge_id}": {{method: "DELETE", path: p + "/prompts/big/judges/" + f.judges[1]}},

		// Feedback.
		"POST /v1/prompts/{slug}/completions/{completion_id}/feedback": {{method: "POST", path: "/v1/prompts/big/completions/" + f.llm[0] + "/feedback",
			body: map[string]any{"thumbs_up": true, "reason": strings.Repeat(`"`, 16<<10), "expected_output": strings.Repeat(`"`, 64<<10)}}},
		"GET /projects/{project_id}/feedback/{entity_type}/{entity_id}": {
			get(p + "/feedback/trace/" + f.traceID),
			get(p + "/feedback/span/" + f.wideIDs[0]),
		},
		"GET /projects/{project_id}/prompts/{slug}/completions": {{method: "GET", path: p + "/prompts/big/completions?limit=50"}},
		// Signals: the largest bulk on one entity (200 signals of 256-byte names: 98 stored, 102
		// refused by index), that entity's signals, and a test's report.
		"POST /signals":      {{method: "POST", path: "/signals", body: map[string]any{"entity_type": "span", "entity_id": sigEntity, "name": "one", "value": 1}}},
		"POST /signals/{$}":  {{method: "POST", path: "/signals/", body: map[string]any{"entity_type": "span", "entity_id": sigEntity, "name": "two", "value": true}}},
		"POST /signals/bulk": {{method: "POST", path: "/signals/bulk", body: map[string]any{"signals": bigSignals}}},
		"GET /signals/entity/{signal_entity_type}/{entity_id}": {get("/signals/entity/span/" + sigEntity)},
		"POST /ab-choices": {{method: "POST", path: "/ab-choices", body: map[string]any{"entity_type": "span", "entity_id": sigEntity, "choice_name": "big",
			"variant_key": "a", "variant_value": "x", "variants": map[string]any{"a": "x", "b": "y"}, "weights": map[string]any{"a": 0.5, "b": 0.5}, "duration_days": 3}}},
		"GET /projects/{project_id}/ab-tests":             {get(p + "/ab-tests")},
		"GET /projects/{project_id}/ab-tests/{test_name}": {get(p + "/ab-tests/big")},
		"POST /feedback-links":                            {{method: "POST", path: "/feedback-links", body: map[string]any{"prompt_slug": "big", "link_type": "prompt_completion"}}},
		"GET /feedback-links":                             {get("/feedback-links")},
		"DELETE /feedback-links/{link_id}":                {{method: "DELETE", path: "/feedback-links/" + uuid.NewString(), status: http.StatusNotFound}},
		"GET /f/{token}":                                  {get("/f/" + f.token)},
		"POST /f/{token}":                                 {{method: "POST", path: "/f/" + f.token, body: url.Values{"completion_id": {f.llm[0]}, "thumbs": {"up"}, "reason": {strings.Repeat("r", 1000)}}.Encode(), status: http.StatusSeeOther, header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}}},

		// Optimization.
		"POST /projects/{project_id}/prompts/{slug}/optimization-runs":    {{method: "POST", path: p + "/prompts/plain/optimization-runs", body: map[string]any{"optimizer_type": "quick_refine"}}},
		"GET /projects/{project_id}/prompts/{slug}/optimization-runs":     {paged(p + "/prompts/plain/optimization-runs?limit=100")},
		"POST /projects/{project_id}/judges/{judge_id}/optimization-runs": {{method: "POST", path: p + "/judges/" + f.judges[0] + "/optimization-runs", body: map[string]any{}}},
		"GET /projects/{project_id}/judges/{judge_id}/optimization-runs":  {get(p + "/judges/" + f.judges[0] + "/optimization-runs?limit=100")},
		"GET /projects/{project_id}/optimization-runs/{run_id}":           {get(p + "/optimization-runs/" + f.runs[0])},
		"POST /projects/{project_id}/monitors":                            {{method: "POST", path: p + "/monitors", body: map[string]any{"name": "one more", "metric": "cost", "window": "5m", "comparison": "gt", "threshold": 1}, status: http.StatusConflict}},
		"GET /projects/{project_id}/monitors":                             {get(p + "/monitors")},
		"GET /projects/{project_id}/monitors/{monitor_id}":                {get(p + "/monitors/" + f.monitors[0])},
		"PATCH /projects/{project_id}/monitors/{monitor_id}":              {{method: "PATCH", path: p + "/monitors/" + f.monitors[0], body: map[string]any{"threshold": 2}}},
		"DELETE /projects/{project_id}/monitors/{monitor_id}": {{method: "DELETE", path: p + "/monitors/" + f.monitors[len(f.monitors)-1],
			again: &request{method: "DELETE", path: p + "/monitors/" + f.monitors[len(f.monitors)-2]}}},
		"POST /projects/{project_id}/webhooks":                                                 {{method: "POST", path: p + "/webhooks", body: map[string]any{"url": "http://192.0.2.1/", "events": api.EventTypes}, status: http.StatusConflict}},
		"GET /projects/{project_id}/webhooks":                                                  {get(p + "/webhooks")},
		"GET /projects/{project_id}/webhooks/{webhook_id}":                                     {get(p + "/webhooks/" + f.hooks[0])},
		"DELETE /projects/{project_id}/webhooks/{webhook_id}":                                  {{method: "DELETE", path: p + "/webhooks/" + f.hooks[len(f.hooks)-1], again: &request{method: "DELETE", path: p + "/webhooks/" + f.hooks[len(f.hooks)-2]}}},
		"GET /projects/{project_id}/webhooks/{webhook_id}/deliveries":                          {get(p + "/webhooks/" + f.hooks[0] + "/deliveries?limit=200")},
		"POST /projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": {{method: "POST", path: p + "/webhooks/" + f.hooks[0] + "/deliveries/" + f.dlv + "/redeliver"}},
		"GET /projects/{project_id}/events":                                                    {get(p + "/events?limit=200")},
		"POST /projects/{project_id}/optimization-runs/{run_action}":                           {{method: "POST", path: p + "/optimization-runs/" + f.runs[1] + ":cancel", again: &request{method: "POST", path: p + "/optimization-runs/" + f.runs[3] + ":cancel"}}, {method: "POST", path: p + "/optimization-runs/" + f.runs[2] + ":preview-deploy", status: http.StatusConflict}},
		"GET /projects/{project_id}/prompts/{slug}/issues":                                     {get(p + "/prompts/big/issues?window_hours=" + fmt.Sprint(api.MaxIssueWindowHours))},
		"GET /projects/{project_id}/judges/{judge_id}/issues":                                  {get(p + "/judges/" + f.judges[0] + "/issues?window_hours=" + fmt.Sprint(api.MaxIssueWindowHours))},
		"GET /projects/{project_id}/prompts/{slug}/optimization-preview":                       {get(p + "/prompts/big/optimization-preview")},
		"GET /projects/{project_id}/judges/{judge_id}/optimization-preview":                    {get(p + "/judges/" + f.judges[0] + "/optimization-preview")},

		// Datasets and experiments.
		"POST /v1/datasets":                                      {{method: "POST", path: "/v1/datasets", body: map[string]any{"name": "big"}, status: http.StatusConflict}},
		"GET /v1/datasets":                                       {get("/v1/datasets?limit=" + fmt.Sprint(api.MaxDatasetListLimit))},
		"GET /v1/datasets/{dataset}":                             {get("/v1/datasets/big")},
		"POST /v1/datasets/{dataset}/data":                       {{method: "POST", path: "/v1/datasets/big/data", body: map[string]any{"data": []any{map[string]any{"q": strings.Repeat("q", api.MaxDatasetRowBytes-100)}}}}},
		"GET /v1/datasets/{dataset}/data":                        {get("/v1/datasets/big/data?version_number=1&limit=" + fmt.Sprint(api.MaxDatasetRowsLimit))},
		"GET /v1/datasets/{dataset}/versions":                    {get("/v1/datasets/big/versions?limit=" + fmt.Sprint(api.MaxDatasetListLimit))},
		"POST /v1/datasets/{dataset}/uploads":                    {{method: "POST", path: "/v1/datasets/big/uploads", body: map[string]any{"bytes": api.MaxDatasetUploadBytes}}},
		"POST /v1/datasets/{dataset}/uploads/{upload_id}/commit": {{method: "POST", path: "/v1/datasets/big/uploads/" + uuid.NewString() + "/commit", status: http.StatusNotFound}},
		"POST /v1/experiments":                                   {{method: "POST", path: "/v1/experiments", body: map[string]any{"dataset_version_id": f.dsVersion, "name": strings.Repeat("e", 100)}}},
		"GET /v1/experiments":                                    {get("/v1/experiments?dataset=big&limit=" + fmt.Sprint(api.MaxDatasetListLimit))},
		"GET /v1/experiments/compare":                            {get("/v1/experiments/compare?ids=" + f.experiment + "," + f.experiment + "&limit=" + fmt.Sprint(api.MaxDatasetListLimit))},
		"GET /v1/experiments/{experiment_id}":                    {get("/v1/experiments/" + f.experiment)},
		"GET /v1/experiments/{experiment_id}/results":            {get("/v1/experiments/" + f.experiment + "/results?limit=" + fmt.Sprint(api.MaxDatasetListLimit))},
		"POST /v1/experiments/{experiment_id}/results": {{method: "POST", path: "/v1/experiments/" + f.experiment + "/results",
			body: map[string]any{"dataset_row_id": f.row, "run_number": 1, "result": strings.Repeat("x", api.MaxExperimentResultBytes-1000)}}},
		"POST /v1/experiments/{experiment_id}/evaluators": {{method: "POST", path: "/v1/experiments/" + f.experiment + "/evaluators", body: map[string]any{"name": "exact", "evaluation_mode": "column"}}},
		"POST /v1/experiments/{experiment_id}/evaluations": {{method: "POST", path: "/v1/experiments/" + f.experiment + "/evaluations",
			body: map[string]any{"evaluator_id": uuid.NewString(), "experiment_result_id": uuid.NewString(), "evaluation_value": "1"}, status: http.StatusNotFound}},
		"POST /v1/experiments/{experiment_id}/judges": {{method: "POST", path: "/v1/experiments/" + f.experiment + "/judges", body: map[string]any{"judge_id": f.judges[0]}}},
		"POST /v1/column-evaluations":                 {{method: "POST", path: "/v1/column-evaluations", body: map[string]any{"evaluator_id": uuid.NewString(), "experiment_id": f.experiment, "run_number": 1}, status: http.StatusNotFound}},
		"POST /v1/column-metrics":                     {{method: "POST", path: "/v1/column-metrics", body: map[string]any{"metric_name": "acc", "experiment_id": f.experiment, "run_number": 1, "results": 1}}},
		"POST /v1/run-metrics":                        {{method: "POST", path: "/v1/run-metrics", body: map[string]any{"metric_name": "acc", "experiment_id": f.experiment, "total_runs": 12, "results": 1}}},
		"POST /projects/{project_id}/prompts/{slug}/completions": {{method: "POST", path: "/projects/%7Bproject_id%7D/prompts/big/completions",
			body: map[string]any{"output_text": strings.Repeat("o", 100_000), "prompt_version_id": f.version}}},

		// MCP: the tools of the largest answers.
		"POST /mcp": {
			mcpCall("list-prompts", map[string]any{}), mcpCall("list-prompt-versions", map[string]any{"prompt_slug": "big"}),
			mcpCall("get-prompt", map[string]any{"prompt_slug": "big"}),
			mcpCall("list-traces", map[string]any{"limit": 100}),
			mcpCall("get-trace", map[string]any{"trace_id": f.traceID, "span_limit": 500}),
			mcpCall("get-trace", map[string]any{"trace_id": f.wide, "span_limit": 500}),
			mcpCall("list-judges", map[string]any{}), mcpCall("get-judge", map[string]any{"judge_id": f.judges[0]}),
			mcpCall("list-judge-evaluations", map[string]any{"judge_id": f.judges[0], "limit": 100}),
			mcpCall("get-judge-criteria", map[string]any{"judge_id": f.judges[0]}),
			mcpCall("list-optimization-runs", map[string]any{"prompt_slug": "plain", "limit": 100}),
			mcpCall("get-optimization-run", map[string]any{"run_id": f.runs[0]}),
			mcpCall("get-project-summary", map[string]any{"window_hours": 720}),
			{method: "POST", path: "/mcp", body: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, header: http.Header{"Accept": {"application/json, text/event-stream"}}},
		},
		"GET /mcp":    {{method: "GET", path: "/mcp", header: http.Header{"Accept": {"text/event-stream"}}, status: http.StatusMethodNotAllowed}},
		"DELETE /mcp": {{method: "DELETE", path: "/mcp", status: http.StatusMethodNotAllowed}},

		// Gateway: no model is configured here; the answer of a model is bounded by its own
		// output limit, not Plume's.
		"POST /v1/chat/completions": {{method: "POST", path: "/v1/chat/completions", body: map[string]any{"model": "gpt-4o-mini", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, status: http.StatusServiceUnavailable}},
		"GET /v1/models":            {get("/v1/models")},

		// Dashboard: every page of the largest data.
		"GET /ui":         {{method: "GET", path: "/ui", session: true, status: http.StatusSeeOther}},
		"GET /ui/assets/": {get(f.asset)},
		"GET /ui/login":   {{method: "GET", path: "/ui/login"}},
		"POST /ui/login":  {{method: "POST", path: "/ui/login", body: url.Values{"api_key": {"plm_wrong"}}.Encode(), header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Origin": {"https://example.com"}}, status: http.StatusForbidden}},
		"POST /ui/": {func() request {
			r := form("/ui/prompts/big/pin", url.Values{"tag": {"production"}, "version": {"7"}, "expected": {"8"}})
			back := form("/ui/prompts/big/pin", url.Values{"tag": {"production"}, "version": {"8"}, "expected": {"7"}})
			r.again = &back
			return r
		}()},
		"GET /ui/": {
			page("/ui/"), page("/ui/traces"), page("/ui/traces/" + f.traceID), page("/ui/traces/" + f.wide),
			page("/ui/traces/" + f.traceID + "/spans/" + f.bigSpan), page("/ui/traces/" + f.wide + "/spans/" + f.wideIDs[0]),
			page("/ui/spans"), page("/ui/sessions"), page("/ui/sessions/" + f.session),
			page("/ui/prompts"), page("/ui/prompts/big"), page("/ui/prompts/big/completions"), page("/ui/prompts/big/links"),
			page("/ui/prompts/big/optimize"), page("/ui/prompts/big/pin?tag=production&version=1"),
			page("/ui/judges"), page("/ui/judges/" + f.judges[0]), page("/ui/judges/" + f.judges[0] + "/edit"), page("/ui/judges/new"),
			page("/ui/optimization-runs/" + f.runs[0]), page("/ui/settings"), page("/ui/gateway"),
			page("/ui/datasets"), page("/ui/datasets/big"), page("/ui/experiments/" + f.experiment), page("/ui/experiments/" + f.experiment + "?run=12"),
			page("/ui/experiments/compare?ids=" + f.experiment + "," + f.experiment),
			page("/ui/ab-tests"), page("/ui/monitors"), page("/ui/webhooks"), page("/ui/events"),
		},
	}
}

// evaluationsOf is n evaluations of the longest reasons, of the wide trace's spans.
func (f *filled) evaluationsOf(n int) []any {
	var out []any
	for _, id := range f.wideIDs[100 : 100+n] {
		scores := map[string]any{}
		for i := range judge.MaxCriteria {
			scores[fmt.Sprintf("c%02d", i)] = map[string]any{"score": 1, "reason": strings.Repeat("c", judge.MaxCriterionReasonBytes)}
		}
		out = append(out, map[string]any{"span_id": id, "evaluation_result": false, "evaluation_reason": strings.Repeat("r", judge.MaxReasonBytes), "criteria_scores": scores})
	}
	return out
}

// window is the metrics query of the n buckets of step that end with the one now is in.
func window(now time.Time, step time.Duration, n int) string {
	to := now.Truncate(step).Add(step)
	bucket := map[time.Duration]string{time.Minute: "minute", time.Hour: "hour", 24 * time.Hour: "day"}[step]
	return url.Values{"bucket": {bucket}, "from": {to.Add(-time.Duration(n) * step).Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}}.Encode()
}
