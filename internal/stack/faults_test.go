package stack_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	wire "github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/faultproxy"
	"github.com/plumehq/plume/internal/webtest"
)

// faultOp is a write request of the fault table, as an SDK sends it.
type faultOp struct {
	name string
	// otlp: errors are answered as OTLP/HTTP requires (a google.rpc.Status), not in the shared
	// error shape.
	otlp bool
	// prepare stores what the request needs in tenant's project, without faults, and returns
	// the request.
	prepare func(t *testing.T, api *apitest.API, tenant apitest.Tenant) prepared
}

// prepared is a request ready to send, with how to read back what it stores.
type prepared struct {
	method, path string
	body         []byte
	// read reads back, through the API, what the request stores.
	read func(t *testing.T) state
	// traces and sessions are the aggregates the request changes, for RecountTrace and
	// RecountSession.
	traces, sessions []string
	// rejected is how many spans of the request are refused alone (stored under another
	// trace): a 200 reports them, and nothing else.
	rejected int
}

// state is what a request stored, as read back: the records of each kind and the numbers
// derived from them (aggregates, counters), by name. A value below the fault-free request's
// is data lost, one above is counted twice.
type state map[string]float64

// faultKind is a fault of the table: what a rule does, and to how many requests.
type faultKind struct {
	name      string
	fault     faultproxy.Fault
	following int
	throttle  bool // the API must answer 503 with Retry-After, not 500
}

var faultKinds = []faultKind{
	{"Throttle forever", faultproxy.Throttle, faultproxy.Forever, true},
	{"ServerError forever", faultproxy.ServerError, faultproxy.Forever, false},
	{"Drop once", faultproxy.Drop, 0, false},
	{"DropAfterForward once", faultproxy.DropAfterForward, 0, false},
	// As many as apitest's faulted clients attempt: the write happens, the SDK's retry meets
	// it, and that answer is lost too, so the API sees the failure and the client retries.
	{"DropAfterForward twice", faultproxy.DropAfterForward, 1, false},
}

// writeOps are the operations that change data, the ones faults are put on.
var writeOps = []string{
	"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem",
	"PUT object", "POST object", "DELETE object",
}

// maxNth bounds the requests of one operation that a request's faults start at.
const maxNth = 12

// refRuns is how many times the request is sent without faults to count its requests.
const refRuns = 3

// row is a line of the fault table: one operation under one fault.
type row struct {
	op, fault    string
	at           []string // where the faults started: "PutItem 1-4"
	tried, fired int
	failed, ok   int
	lost, double int
	// After the client's retry, the change stream applied: cases whose aggregates are exact,
	// and cases whose data reads differently from the fault-free request's; counts: the cases
	// with aggregates.
	exact, stale, counts int
}

// TestFaultTable sends each write request of the API once per fault: for every DynamoDB and
// S3 write operation the request uses, a throttle or a server error on every request of that
// operation from the Nth on, or the Nth dropped (before or after it takes effect), at each N
// the request reaches. Whatever the answer, it is 200 only if everything is stored, and
// otherwise a 503 with Retry-After (a throttle must be that) or a 500, in the shared error
// shape (OTLP: a google.rpc.Status, as OTLP/HTTP requires). Then the faults end and the client
// sends the same request again (its retry): the answer is 200 and the data is exactly what the
// request stores without a fault (in another project): nothing lost, nothing counted twice,
// every trace and session aggregate equal to a recount.
//
// The aggregates are checked once the change stream is applied to them, as RollupFunction
// applies it a second or so after each write: whatever the failed request stored, each span is
// counted once.
//
// Every case starts in a project of its own, and each operation has an API and a table of its
// own, so that operations run in parallel. The cases are the full cross product of operations,
// faults and N, as no request here sends more than maxNth requests of one operation. The
// number of requests varies a little between runs (two traces are written concurrently, and
// their puts of one session may conflict and retry), so a fault set at the last N may not
// fire: that case is then a fault-free request, checked all the same, and the fired column
// counts the cases that met their fault.
func TestFaultTable(t *testing.T) {
	ops := []faultOp{
		{name: "POST /spans", prepare: prepareSpans},
		{name: "POST /v1/traces", otlp: true, prepare: prepareOTLP},
		{name: "POST feedback", prepare: prepareFeedback},
		{name: "POST evaluations", prepare: prepareEvaluations},
		{name: "POST ensure (new version)", prepare: prepareEnsure(true)},
		{name: "POST ensure (new prompt)", prepare: prepareEnsure(false)},
	}
	rows := make([][]*row, len(ops))
	t.Run("ops", func(t *testing.T) {
		for i, op := range ops {
			t.Run(op.name, func(t *testing.T) {
				t.Parallel()
				rows[i] = runFaults(t, apitest.New(t, apitest.Options{Faults: true}), op)
			})
		}
	})
	all := slices.Concat(rows...)
	require.Len(t, all, len(ops)*len(faultKinds), "every operation ran")

	t.Logf("fault table (N: the requests of the operation the fault starts at):\n%s", formatTable(all))
	for _, r := range all {
		assert.Positive(t, r.fired, "%s, %s: some fault fired", r.op, r.fault)
		assert.Zero(t, r.lost, "%s, %s: data lost", r.op, r.fault)
		assert.Zero(t, r.double, "%s, %s: counted twice", r.op, r.fault)
		assert.Equal(t, r.counts, r.exact, "%s, %s: aggregates exact after the retry", r.op, r.fault)
		assert.Equal(t, r.tried, r.failed+r.ok, "%s, %s: every answer 200, 500 or 503", r.op, r.fault)
	}
}

// runFaults sends op without faults for the reference, then once per fault, operation and N.
func runFaults(t *testing.T, api *apitest.API, op faultOp) []*row {
	// The reference: the request without faults, a few times, for the most requests of each
	// operation it sends.
	var want state
	var writes []opCount
	for range refRuns {
		tenant := webtest.NewTenant(t, api.Auth)
		ref := op.prepare(t, api, tenant)
		resetFaults(api)
		res := send(t, api, ref, tenant.Key)
		require.Equal(t, http.StatusOK, res.Status, "without faults: %s", res.Body)
		writes = maxCounts(writes, writeCounts(api))
		got := ref.read(t)
		if want == nil {
			want = got
		}
		require.Equal(t, want, got, "the request without faults stores the same each time")
	}
	require.NotEmpty(t, writes, "the request writes")
	t.Logf("%s writes %v and stores %v", op.name, writes, want)

	var rows []*row
	for _, fk := range faultKinds {
		r := &row{op: op.name, fault: fk.name}
		rows = append(rows, r)
		for _, w := range writes {
			n := min(w.count, maxNth)
			r.at = append(r.at, fmt.Sprintf("%s 1-%d", w.op, n))
			for nth := 1; nth <= n; nth++ {
				label := fmt.Sprintf("%s, %s at %s #%d", op.name, fk.name, w.op, nth)
				runCase(t, api, op, fk, w.op, nth, want, r, label)
			}
		}
	}
	return rows
}

// runCase runs one case of the table and adds its outcome to r.
func runCase(t *testing.T, api *apitest.API, op faultOp, fk faultKind, writeOp string, nth int, want state, r *row, label string) {
	t.Helper()
	tenant := webtest.NewTenant(t, api.Auth)
	p := op.prepare(t, api, tenant)
	resetFaults(api)
	proxy := api.DDBFaults
	if strings.Contains(writeOp, " ") {
		proxy = api.S3Faults
	}
	proxy.Fail(faultproxy.Rule{Op: writeOp, Nth: nth, Following: fk.following, Fault: fk.fault})
	res := send(t, api, p, tenant.Key)
	fired := proxy.Count(writeOp) >= nth
	resetFaults(api)

	r.tried++
	if fired {
		r.fired++
	}
	switch res.Status {
	case http.StatusOK:
		r.ok++
		// 200: everything is stored, and only the spans refused by design are reported, as read
		// back before any retry.
		checkRejected(t, op, p, res, label)
		lost, double := compare(t, want, p.read(t), label+", answered 200")
		r.lost += lost
		r.double += double
	case http.StatusServiceUnavailable, http.StatusInternalServerError:
		r.failed++
		checkFailure(t, op, fk, res, label)
	default:
		t.Errorf("%s: answered %d, want 200, 500 or 503: %s", label, res.Status, res.Body)
	}

	// The client's retry.
	again := send(t, api, p, tenant.Key)
	if !assert.Equal(t, http.StatusOK, again.Status, "%s: retry: %s", label, again.Body) {
		r.lost++
		return
	}
	checkRejected(t, op, p, again, label+", retry")
	if len(p.traces)+len(p.sessions) > 0 {
		api.ApplyStream(t)
		r.counts++
		bad := inexact(t, api, tenant.ProjectID, p)
		for _, b := range bad {
			t.Errorf("%s, retried: %s", label, b)
		}
		if len(bad) == 0 {
			r.exact++
		}
		if lost, double := deviations(want, p.read(t)); len(lost)+len(double) > 0 {
			r.stale++
			t.Errorf("%s: after the retry (200): %s", label, strings.Join(slices.Concat(lost, double), ", "))
		}
	}
	lost, double := compare(t, want, p.read(t), label+", retried")
	r.lost += lost
	r.double += double
}

// resetFaults removes every rule of both proxies and their counts.
func resetFaults(api *apitest.API) {
	api.DDBFaults.Reset()
	api.S3Faults.Reset()
}

// opCount is how many requests of a write operation a request sends.
type opCount struct {
	op    string
	count int
}

// writeCounts returns the write operations the proxies saw since their last Reset, in the
// order of their first request.
func writeCounts(api *apitest.API) []opCount {
	var out []opCount
	for _, op := range slices.Concat(api.DDBFaults.Log(), api.S3Faults.Log()) {
		if !slices.Contains(writeOps, op) {
			continue
		}
		i := slices.IndexFunc(out, func(c opCount) bool { return c.op == op })
		if i < 0 {
			out = append(out, opCount{op: op})
			i = len(out) - 1
		}
		out[i].count++
	}
	return out
}

// maxCounts returns the larger count of each operation of a and b, in a's order, then b's.
func maxCounts(a, b []opCount) []opCount {
	out := slices.Clone(a)
	for _, c := range b {
		i := slices.IndexFunc(out, func(o opCount) bool { return o.op == c.op })
		if i < 0 {
			out = append(out, c)
			continue
		}
		out[i].count = max(out[i].count, c.count)
	}
	return out
}

// send sends a prepared request with key.
func send(t *testing.T, api *apitest.API, p prepared, key string) apitest.Response {
	t.Helper()
	return api.Do(t, p.method, p.path, key, p.body)
}

// checkRejected checks that a 200 reports as rejected exactly the spans p's request sends to be
// refused.
func checkRejected(t *testing.T, op faultOp, p prepared, res apitest.Response, label string) {
	t.Helper()
	if op.otlp {
		var body struct {
			PartialSuccess struct {
				RejectedSpans string `json:"rejectedSpans"`
			} `json:"partialSuccess"`
		}
		require.NoError(t, json.Unmarshal(res.Body, &body), "%s: body %s", label, res.Body)
		want := ""
		if p.rejected > 0 {
			want = fmt.Sprint(p.rejected)
		}
		assert.Equal(t, want, body.PartialSuccess.RejectedSpans, "%s: spans rejected: %s", label, res.Body)
		return
	}
	want := ""
	if p.rejected > 0 {
		want = fmt.Sprint(p.rejected)
	}
	assert.Equal(t, want, res.Header.Get("X-Plume-Rejected"), "%s: spans rejected: %s", label, res.Header.Get("X-Plume-Rejected-Spans"))
}

// checkFailure checks a 5xx answer: 503 with Retry-After, or 500, and a throttle always 503;
// the body in the shared error shape (OTLP: a google.rpc.Status) with a request id and
// nothing of the storage error's own text.
func checkFailure(t *testing.T, op faultOp, fk faultKind, res apitest.Response, label string) {
	t.Helper()
	if res.Status == http.StatusServiceUnavailable {
		assert.NotEmpty(t, res.Header.Get("Retry-After"), "%s: 503 without Retry-After", label)
	}
	if fk.throttle {
		assert.Equal(t, http.StatusServiceUnavailable, res.Status, "%s: a throttle outlasting the retries is 503 with Retry-After: %s", label, res.Body)
	}
	assert.NotContains(t, string(res.Body), "faultproxy", "%s: the storage error's text reached the client", label)
	if op.otlp {
		var st status.Status
		require.NoError(t, protojson.Unmarshal(res.Body, &st), "%s: body %s", label, res.Body)
		wantCode := map[int]int32{http.StatusServiceUnavailable: 14, http.StatusInternalServerError: 13}[res.Status]
		assert.Equal(t, wantCode, st.GetCode(), "%s: google.rpc.Code", label)
		assert.Contains(t, st.GetMessage(), "request id", label)
		return
	}
	var body wire.ErrorBody
	require.NoError(t, json.Unmarshal(res.Body, &body), "%s: body %s", label, res.Body)
	wantCode := map[int]wire.ErrorCode{http.StatusServiceUnavailable: "unavailable", http.StatusInternalServerError: "internal"}[res.Status]
	assert.Equal(t, wantCode, body.Error.Code, "%s: error code", label)
	assert.NotEmpty(t, body.Error.Message, label)
	assert.NotEmpty(t, body.Error.RequestID, label)
}

// compare fails t for every value of got that differs from want, the fault-free request's
// state, and returns how many are below (lost) and above (counted twice).
func compare(t *testing.T, want, got state, label string) (lost, double int) {
	t.Helper()
	l, d := deviations(want, got)
	for _, e := range l {
		t.Errorf("%s: %s (lost)", label, e)
	}
	for _, e := range d {
		t.Errorf("%s: %s (counted twice)", label, e)
	}
	return len(l), len(d)
}

// deviations describes the values of got below want's (or missing) and above (or extra), in
// name order. Costs are on a 1e-12 grid: a difference under 1e-9 is none.
func deviations(want, got state) (lost, double []string) {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		w := want[k]
		switch g, ok := got[k]; {
		case !ok:
			lost = append(lost, fmt.Sprintf("%s missing (want %v)", k, w))
		case g < w-1e-9:
			lost = append(lost, fmt.Sprintf("%s=%v (want %v)", k, g, w))
		case g > w+1e-9:
			double = append(double, fmt.Sprintf("%s=%v (want %v)", k, g, w))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			double = append(double, fmt.Sprintf("%s=%v (not in the fault-free request's state)", k, got[k]))
		}
	}
	return lost, double
}

// inexact describes every trace and session of p whose stored aggregates differ from a
// recount.
func inexact(t *testing.T, api *apitest.API, projectID string, p prepared) []string {
	t.Helper()
	var out []string
	store := api.Env.Traces()
	for _, id := range p.traces {
		r, err := store.RecountTrace(t.Context(), projectID, id)
		require.NoError(t, err)
		if !r.Exact() {
			out = append(out, fmt.Sprintf("trace %s: %+v", id, r))
		}
	}
	for _, id := range p.sessions {
		r, err := store.RecountSession(t.Context(), projectID, id)
		require.NoError(t, err)
		if !r.Exact() {
			out = append(out, fmt.Sprintf("session %s: %+v", id, r))
		}
	}
	return out
}

// formatTable renders the rows as a text table.
func formatTable(rows []*row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-25s %-22s %-67s %5s %5s %4s %4s %4s %6s %-12s %s\n",
		"operation", "fault", "N", "tried", "fired", "5xx", "200", "lost", "double", "exact(retry)", "stale(retry)")
	for _, r := range rows {
		exact, stale := "n/a", "n/a"
		if r.counts > 0 {
			exact = fmt.Sprintf("%d/%d", r.exact, r.counts)
			stale = fmt.Sprintf("%d/%d", r.stale, r.counts)
		}
		fmt.Fprintf(&b, "%-25s %-22s %-67s %5d %5d %4d %4d %4d %6d %-12s %s\n",
			r.op, r.fault, strings.Join(r.at, ", "), r.tried, r.fired, r.failed, r.ok, r.lost, r.double, exact, stale)
	}
	return b.String()
}

// ---- The operations.

// spanTime is when the spans of the table happened: an hour ago.
func spanTime() time.Time { return time.Now().Add(-time.Hour).Truncate(time.Millisecond) }

func secs(at time.Time) float64 { return float64(at.UnixMicro()) / 1e6 }

// prepareSpans: a batch of two traces and a session, as the SDKs send it. The first trace
// existed before without a session (one span, which the batch moves and re-prices; an llm span
// of the prompt, which the batch ends), joins the session with this batch, has an error and an
// llm span linked to a prompt version (priced by the price table); the second is new. A span
// stored under the second trace is sent with the first: it is refused alone.
func prepareSpans(t *testing.T, api *apitest.API, tenant apitest.Tenant) prepared {
	t.Helper()
	slug := "support-bot"
	versionID := api.EnsurePrompt(t, tenant, slug, "You help with refunds.")
	t1, t2, session := uuid.NewString(), uuid.NewString(), uuid.NewString()
	at := spanTime()
	early := map[string]any{"id": uuid.NewString(), "trace_id": t1, "name": "retrieve", "started_at": secs(at), "ended_at": secs(at.Add(100 * time.Millisecond)), "cost": 0.25}
	started := apitest.LLMSpan(uuid.NewString(), t1, "", slug, versionID, "And my order?", "", at.Add(700*time.Millisecond))
	delete(started, "ended_at")
	delete(started, "output_data")
	stray := map[string]any{"id": uuid.NewString(), "trace_id": t2, "name": "stray", "started_at": secs(at), "cost": 2.0}
	api.MustDo(t, "POST", "/spans", tenant.Key, []any{early, started, stray})
	ended := maps.Clone(started)
	ended["ended_at"], ended["output_data"] = secs(at.Add(1500*time.Millisecond)), "It shipped."
	stray = maps.Clone(stray)
	stray["trace_id"] = t1

	moved := map[string]any{"id": early["id"], "trace_id": t1, "name": "retrieve", "started_at": secs(at.Add(time.Second)), "ended_at": secs(at.Add(2 * time.Second)), "cost": 0.5}
	rootID := uuid.NewString()
	root := map[string]any{
		"id": rootID, "trace_id": t1, "name": "handle", "session_id": session, "session_name": "chat",
		"started_at": secs(at.Add(500 * time.Millisecond)), "ended_at": secs(at.Add(3500 * time.Millisecond)),
		"status": "error", "error_message": "tool failed", "cost": 0.125,
	}
	llm := apitest.LLMSpan(uuid.NewString(), t1, session, slug, versionID, "Where is my refund?", "On its way.", at.Add(600*time.Millisecond))
	llm["parent_span_id"] = rootID
	other := map[string]any{"id": uuid.NewString(), "trace_id": t2, "name": "other", "session_id": session, "started_at": secs(at), "ended_at": secs(at.Add(50 * time.Millisecond)), "cost": 1.0}
	body, err := json.Marshal([]any{moved, root, llm, other, ended, stray})
	require.NoError(t, err)
	return prepared{
		method: "POST", path: "/spans", body: body,
		read: func(t *testing.T) state {
			s := readTraces(t, api, tenant, []string{t1, t2}, session)
			addCompletions(t, api, tenant, slug, s)
			return s
		},
		traces: []string{t1, t2}, sessions: []string{session}, rejected: 1,
	}
}

// addCompletions adds the completions of a prompt to s: how many, and how many distinct.
func addCompletions(t *testing.T, api *apitest.API, tenant apitest.Tenant, slug string, s state) {
	t.Helper()
	var page wire.CompletionList
	api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/prompts/"+slug+"/completions?limit=50", tenant.Key, nil).Decode(t, &page)
	ids := map[string]bool{}
	for _, c := range page.Completions {
		ids[c.SpanID] = true
		if c.Output.Text != nil {
			s["completions with an output"]++
		}
	}
	s["completions"], s["completions distinct"] = float64(len(page.Completions)), float64(len(ids))
}

// prepareOTLP: an OTLP/JSON export of two traces, one a session's with an llm span, the other
// an error, and a span stored under the second trace sent with the first (refused alone).
func prepareOTLP(t *testing.T, api *apitest.API, tenant apitest.Tenant) prepared {
	t.Helper()
	t1, t2, session := uuid.NewString(), uuid.NewString(), uuid.NewString()
	api.MustDo(t, "POST", "/spans", tenant.Key, []any{map[string]any{"id": "00f067aa-0ba9-02c0-0000-000000000000", "trace_id": t2,
		"name": "stray", "started_at": secs(spanTime()), "session_id": session, "cost": 2.0}})
	hex := func(u string) string { return strings.ReplaceAll(u, "-", "") }
	at := spanTime()
	nanos := func(d time.Duration) string { return fmt.Sprint(at.Add(d).UnixNano()) }
	str := func(k, v string) map[string]any {
		return map[string]any{"key": k, "value": map[string]any{"stringValue": v}}
	}
	num := func(k string, v int) map[string]any {
		return map[string]any{"key": k, "value": map[string]any{"intValue": fmt.Sprint(v)}}
	}
	spans := []any{
		map[string]any{"traceId": hex(t1), "spanId": "00f067aa0ba902b7", "name": "handle", "kind": 2,
			"startTimeUnixNano": nanos(0), "endTimeUnixNano": nanos(2 * time.Second), "attributes": []any{str("session.id", session)}},
		map[string]any{"traceId": hex(t1), "spanId": "00f067aa0ba902b8", "parentSpanId": "00f067aa0ba902b7", "name": "chat gpt-4o-mini",
			"startTimeUnixNano": nanos(100 * time.Millisecond), "endTimeUnixNano": nanos(time.Second), "attributes": []any{
				str("gen_ai.operation.name", "chat"), str("gen_ai.provider.name", "openai"), str("gen_ai.request.model", "gpt-4o-mini"),
				num("gen_ai.usage.input_tokens", 1000), num("gen_ai.usage.output_tokens", 200), str("session.id", session)}},
		map[string]any{"traceId": hex(t2), "spanId": "00f067aa0ba902b9", "name": "batch job",
			"startTimeUnixNano": nanos(0), "endTimeUnixNano": nanos(time.Second), "status": map[string]any{"code": 2, "message": "boom"},
			"attributes": []any{str("session.id", session), map[string]any{"key": "gen_ai.usage.cost", "value": map[string]any{"doubleValue": 0.5}}}},
		map[string]any{"traceId": hex(t1), "spanId": "00f067aa0ba902c0", "name": "stray",
			"startTimeUnixNano": nanos(0), "endTimeUnixNano": nanos(time.Second), "attributes": []any{str("session.id", session)}},
	}
	body, err := json.Marshal(map[string]any{"resourceSpans": []any{map[string]any{
		"resource":   map[string]any{"attributes": []any{str("service.name", "support-bot")}},
		"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "plume-test"}, "spans": spans}},
	}}})
	require.NoError(t, err)
	return prepared{
		method: "POST", path: "/v1/traces", body: body,
		read:   func(t *testing.T) state { return readTraces(t, api, tenant, []string{t1, t2}, session) },
		traces: []string{t1, t2}, sessions: []string{session}, rejected: 1,
	}
}

// readTraces reads the spans of traces, the traces and the session through the query API.
func readTraces(t *testing.T, api *apitest.API, tenant apitest.Tenant, traceIDs []string, sessionID string) state {
	t.Helper()
	s := state{}
	for i, id := range traceIDs {
		var spans []wire.Span
		api.MustDo(t, "GET", "/spans?limit=100&trace_id="+id, tenant.Key, nil).Decode(t, &spans)
		s["spans"] += float64(len(spans))
		var traces []wire.Trace
		api.MustDo(t, "GET", "/traces?id="+id, tenant.Key, nil).Decode(t, &traces)
		s["traces"] += float64(len(traces))
		for _, tr := range traces {
			name := fmt.Sprintf("trace %d ", i+1)
			s[name+"span_count"] = float64(tr.SpanCount)
			s[name+"error_count"] = float64(tr.ErrorCount)
			s[name+"cost"] = tr.Cost
		}
	}
	var sessions []wire.Session
	api.MustDo(t, "GET", "/sessions?id="+sessionID, tenant.Key, nil).Decode(t, &sessions)
	s["sessions"] = float64(len(sessions))
	for _, se := range sessions {
		s["session trace_count"] = float64(se.TraceCount)
		s["session error_count"] = float64(se.ErrorCount)
		s["session cost"] = se.Cost
	}
	return s
}

// prepareFeedback: a user's thumbs-down on an llm span, calibrating the judge that evaluated
// it (the feedback, then the evaluation's flag).
func prepareFeedback(t *testing.T, api *apitest.API, tenant apitest.Tenant) prepared {
	t.Helper()
	slug := "support-bot"
	versionID := api.EnsurePrompt(t, tenant, slug, "You help with refunds.")
	spanID := uuid.NewString()
	api.MustDo(t, "POST", "/spans", tenant.Key, []any{apitest.LLMSpan(spanID, uuid.NewString(), "", slug, versionID, "Refund?", "No.", spanTime())})
	judgeID := createJudge(t, api, tenant)
	api.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/judges/"+judgeID+"/evaluations", tenant.Key,
		[]any{map[string]any{"span_id": spanID, "evaluation_result": true, "evaluation_reason": "polite"}})
	body, err := json.Marshal(map[string]any{"thumbs_up": false, "reason": "wrong refund amount", "expected_output": "$20", "judge_id": judgeID})
	require.NoError(t, err)
	return prepared{
		method: "POST", path: "/v1/prompts/" + slug + "/completions/" + spanID + "/feedback", body: body,
		read: func(t *testing.T) state {
			var u wire.UnifiedFeedback
			api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/feedback/span/"+spanID, tenant.Key, nil).Decode(t, &u)
			s := state{"human feedback": float64(u.Summary.HumanFeedbackCount), "judge evaluations": float64(u.Summary.JudgeEvaluationCount)}
			var evs wire.SpanEvaluations
			api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/spans/"+spanID+"/evaluations", tenant.Key, nil).Decode(t, &evs)
			for _, e := range evs.Evaluations {
				if e.HasUserFeedback {
					s["evaluations flagged"]++
				}
			}
			addJudge(t, api, tenant, judgeID, s)
			return s
		},
	}
}

// prepareEvaluations: a judge's verdicts on two spans, one pass and one fail.
func prepareEvaluations(t *testing.T, api *apitest.API, tenant apitest.Tenant) prepared {
	t.Helper()
	at := spanTime()
	a, b, traceID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	api.MustDo(t, "POST", "/spans", tenant.Key, []any{
		map[string]any{"id": a, "trace_id": traceID, "name": "answer", "started_at": secs(at)},
		map[string]any{"id": b, "trace_id": traceID, "name": "answer", "started_at": secs(at.Add(time.Second))},
	})
	judgeID := createJudge(t, api, tenant)
	body, err := json.Marshal([]any{
		map[string]any{"span_id": a, "evaluation_result": true, "evaluation_reason": "polite", "model_used": "gpt-4o-mini"},
		map[string]any{"span_id": b, "evaluation_result": false, "evaluation_reason": "rude", "model_used": "gpt-4o-mini"},
	})
	require.NoError(t, err)
	return prepared{
		method: "POST", path: "/projects/" + tenant.ProjectID + "/judges/" + judgeID + "/evaluations", body: body,
		read: func(t *testing.T) state {
			var page wire.EvaluationPage
			api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/judges/"+judgeID+"/evaluations", tenant.Key, nil).Decode(t, &page)
			s := state{"evaluations": float64(len(page.Evaluations)), "evaluations total": float64(page.Total)}
			addJudge(t, api, tenant, judgeID, s)
			return s
		},
	}
}

func createJudge(t *testing.T, api *apitest.API, tenant apitest.Tenant) string {
	t.Helper()
	return api.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/judges", tenant.Key,
		map[string]any{"name": "Polite", "template": "Is the answer polite?"}).Map(t)["id"].(string)
}

// addJudge adds the judge's counters to s.
func addJudge(t *testing.T, api *apitest.API, tenant apitest.Tenant, judgeID string, s state) {
	t.Helper()
	var j wire.Judge
	api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/judges/"+judgeID, tenant.Key, nil).Decode(t, &j)
	s["judge evaluation_count"] = float64(j.EvaluationCount)
	if j.PassRate != nil {
		s["judge pass_rate"] = *j.PassRate
	}
}

// prepareEnsure: the SDK's ensure of a prompt's content; with existing, the prompt has a first
// version already and this is its second.
func prepareEnsure(existing bool) func(t *testing.T, api *apitest.API, tenant apitest.Tenant) prepared {
	return func(t *testing.T, api *apitest.API, tenant apitest.Tenant) prepared {
		t.Helper()
		slug, content := "support-bot", "You help with refunds. Be brief."
		if existing {
			api.EnsurePrompt(t, tenant, slug, "You help with refunds.")
		}
		body, err := json.Marshal(map[string]any{"content": content})
		require.NoError(t, err)
		return prepared{
			method: "POST", path: "/v1/tasks/" + slug + "/prompt/versions/ensure", body: body,
			read: func(t *testing.T) state {
				var versions []wire.PromptVersion
				api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/prompts/"+slug+"/versions", tenant.Key, nil).Decode(t, &versions)
				s := state{"versions": float64(len(versions))}
				ids := map[string]bool{}
				for _, v := range versions {
					ids[v.ID] = true
					s["highest version number"] = math.Max(s["highest version number"], float64(v.Version))
					if v.Content == content {
						s["versions of the content"]++
					}
				}
				s["version ids"] = float64(len(ids))
				var latest wire.PromptVersion
				api.MustDo(t, "GET", "/v1/prompts/"+slug, tenant.Key, nil).Decode(t, &latest)
				s["latest version"] = float64(latest.Version)
				return s
			},
		}
	}
}
