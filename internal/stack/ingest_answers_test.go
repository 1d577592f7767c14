package stack_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
	"github.com/plumehq/plume/shared/prompt"
)

// TestIngestKeyLearnsNothing sends every route an ingest key may call (ingestRoutes) a request
// that names what a member of the same project stored: the same span, trace, session and
// completion ids, a span moved to another trace, over the SDK's API and OTLP. An ingest key
// reads nothing, so each answer may carry what its request carried, ids and statuses, and
// nothing else that is stored: no input or output, no verdict or feedback, no session or trace
// id the request did not name (a wrong trace id must not be answered with the right one).
func TestIngestKeyLearnsNothing(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey("sk-test"))
	models := llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: fake.OpenAIBaseURL(), APIKey: "sk-test"}}},
		llm.Options{BaseDelay: time.Millisecond})
	srv := apitest.New(t, apitest.Options{Models: models})
	v := seedVictim(t, srv)
	whole, err := stack.Handler(srv.Env)
	require.NoError(t, err)
	whole = srv.Applying(whole) // the aggregates follow its writes, as API.Handler's
	key := newKey(t, srv, v.project, auth.RoleIngest)

	// A span whose id an OpenTelemetry exporter can name (8 bytes, then zeros), stored by a
	// member under the victim's trace.
	const otlpSpanHex = "0123456789abcdef"
	otlpSpanID := "01234567-89ab-cdef-0000-000000000000"
	srv.MustDo(t, "POST", "/spans", srv.B.Key, []any{map[string]any{
		"id": otlpSpanID, "trace_id": v.traceID, "session_id": v.sessionID, "name": "stored by a member",
		"started_at": float64(time.Now().UnixMicro()) / 1e6, "input_data": "B's private tool input",
	}})
	otherTrace := uuid.NewString()
	stored := []string{"B's private input", "B's private tool input", "B's private verdict", "B's private judge",
		"stored by a member", v.secrets[len(v.secrets)-1], v.secrets[3]} // the feedback's reason, the completion's output
	at := float64(time.Now().UnixMicro()) / 1e6

	tests := []struct {
		route string
		path  string
		body  any
		// header is sent with the request (OTLP's content type).
		header http.Header
		// named are stored ids the request names itself: the answer may carry them.
		named []string
		check func(t *testing.T, res webtest.Response)
	}{
		{
			route: "POST /spans", path: "/spans",
			body:  []any{map[string]any{"id": v.spanID, "trace_id": v.traceID, "name": "renamed", "started_at": at}},
			named: []string{v.spanID, v.traceID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
				var spans []api.Span
				res.Decode(t, &spans)
				require.Len(t, spans, 1)
				assert.Equal(t, "renamed", spans[0].Name)
				assert.Nil(t, spans[0].InputData, "the stored input")
				assert.Nil(t, spans[0].OutputData, "the stored output")
				assert.Nil(t, spans[0].SessionID, "the stored session")
				assert.Nil(t, spans[0].Cost, "the stored cost")
				assert.Nil(t, spans[0].PromptLink, "the stored linkage")
			},
		},
		{
			route: "POST /spans", path: "/spans",
			body: []any{
				map[string]any{"id": v.spanID, "trace_id": otherTrace, "name": "moved", "started_at": at},
				map[string]any{"id": uuid.NewString(), "trace_id": otherTrace, "name": "new", "started_at": at},
			},
			named: []string{v.spanID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "the valid span is stored: %s", res.Body)
				assert.Equal(t, "1", res.Header.Get("X-Plume-Rejected"))
				var rejected []api.RejectedSpan
				require.NoError(t, json.Unmarshal([]byte(res.Header.Get("X-Plume-Rejected-Spans")), &rejected))
				require.Len(t, rejected, 1)
				assert.Equal(t, 0, rejected[0].Index)
				assert.Equal(t, v.spanID, rejected[0].ID)
			},
		},
		{
			route: "POST /spans", path: "/spans",
			body:  []any{map[string]any{"id": v.spanID, "trace_id": otherTrace, "name": "moved", "started_at": at}},
			named: []string{v.spanID},
			check: func(t *testing.T, res webtest.Response) {
				assert.Equal(t, http.StatusBadRequest, res.Status, "no span stored: %s", res.Body)
			},
		},
		{
			route: "POST /traces", path: "/traces",
			body:  []any{map[string]any{"id": v.traceID, "session_id": v.sessionID, "name": "renamed", "started_at": at}},
			named: []string{v.traceID, v.sessionID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
				var traces []api.Trace
				res.Decode(t, &traces)
				require.Len(t, traces, 1)
				assert.Equal(t, "renamed", traces[0].Name)
				assert.Zero(t, traces[0].SpanCount, "the stored count")
				assert.Nil(t, traces[0].RootSpanInput)
				assert.Nil(t, traces[0].RootSpanOutput)
			},
		},
		{
			route: "POST /sessions", path: "/sessions",
			body:  []any{map[string]any{"id": v.sessionID, "project_id": v.project}},
			named: []string{v.sessionID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
				var sessions []api.Session
				res.Decode(t, &sessions)
				require.Len(t, sessions, 1)
				assert.Zero(t, sessions[0].TraceCount, "the stored count")
				assert.Zero(t, sessions[0].Cost, "the stored cost")
			},
		},
		{
			route: "POST /spans/{span_id}/attachments", path: "/spans/" + v.spanID + "/attachments",
			body:  map[string]any{"content_type": "image/png", "size": 10},
			named: []string{v.spanID},
		},
		{
			route: "POST /v1/traces", path: "/v1/traces",
			header: http.Header{"Content-Type": {"application/json"}},
			body: map[string]any{"resourceSpans": []any{map[string]any{"scopeSpans": []any{map[string]any{"spans": []any{
				map[string]any{"traceId": strings.ReplaceAll(otherTrace, "-", ""), "spanId": otlpSpanHex, "name": "moved",
					"startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000"},
			}}}}}},
			named: []string{otlpSpanID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
				var out struct {
					PartialSuccess struct {
						RejectedSpans string `json:"rejectedSpans"`
						ErrorMessage  string `json:"errorMessage"`
					} `json:"partialSuccess"`
				}
				res.Decode(t, &out)
				assert.Equal(t, "1", out.PartialSuccess.RejectedSpans, "the moved span, named: %s", res.Body)
				assert.Contains(t, out.PartialSuccess.ErrorMessage, otlpSpanID)
			},
		},
		{route: "POST /v1/metrics", path: "/v1/metrics", header: http.Header{"Content-Type": {"application/json"}}, body: map[string]any{}},
		{route: "POST /v1/logs", path: "/v1/logs", header: http.Header{"Content-Type": {"application/json"}}, body: map[string]any{}},
		{
			route: "POST /v1/prompts/{slug}/completions/{completion_id}/feedback",
			path:  "/v1/prompts/" + v.slug + "/completions/" + v.spanID + "/feedback",
			body:  map[string]any{"thumbs_up": true, "reason": "the ingest key's own"},
			named: []string{v.spanID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
				var f api.Feedback
				res.Decode(t, &f)
				assert.Equal(t, "the ingest key's own", *f.Reason)
				assert.Nil(t, f.TraceID, "the completion's trace")
				assert.Nil(t, f.PromptVersionID, "the completion's version")
			},
		},
		// The prompt routes answer prompts, which an ingest key reads by design (the SDKs fetch
		// them): none of them answers what spans, judges or feedback stored.
		{route: "GET /v1/prompts/{slug}", path: "/v1/prompts/" + v.slug},
		{route: "POST /v1/tasks/{task}/prompt/versions/ensure", path: "/v1/tasks/" + v.slug + "/prompt/versions/ensure", body: map[string]any{"content": v.content}},
		{route: "GET /v1/tasks/{task}/prompt/versions/by-hash/{hash}", path: "/v1/tasks/" + v.slug + "/prompt/versions/by-hash/" + prompt.Hash(v.content)},
		{route: "GET /v1/tasks/{task}/prompt/latest", path: "/v1/tasks/" + v.slug + "/prompt/latest"},
		{route: "GET /v1/prompt-versions/{version_id}/model", path: "/v1/prompt-versions/" + v.versionID + "/model"},
		{route: "POST /v1/chat/completions", path: "/v1/chat/completions",
			body: map[string]any{"model": "zeroeval/gpt-4o-mini", "messages": []any{map[string]any{"role": "user", "content": "hi"}}},
			check: func(t *testing.T, res webtest.Response) {
				assert.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
			}},
		{route: "GET /v1/models", path: "/v1/models"},
		// Signals on B's span: the answer counts what was sent.
		{route: "POST /signals", path: "/signals",
			body:  map[string]any{"entity_type": "span", "entity_id": v.spanID, "name": "B's private signal", "value": 2},
			named: []string{v.spanID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
				assert.NotContains(t, string(res.Body), "0.25", "the stored value")
			}},
		{route: "POST /signals/{$}", path: "/signals/",
			body:  map[string]any{"entity_type": "span", "entity_id": v.spanID, "name": "the ingest key's", "value": true},
			named: []string{v.spanID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
			}},
		{route: "POST /signals/bulk", path: "/signals/bulk",
			body: map[string]any{"signals": []any{
				map[string]any{"entity_type": "span", "entity_id": v.spanID, "name": "x", "value": 1},
				map[string]any{"entity_type": "span", "entity_id": v.spanID, "name": "y", "value": "maybe"}}},
			named: []string{v.spanID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
				var ans api.SignalsAnswer
				res.Decode(t, &ans)
				assert.Equal(t, 1, ans.ProcessedCount)
				assert.Equal(t, 1, ans.FailedCount)
			}},
		// B's test, named with another definition and on B's span, which has B's variant: the
		// answer is the test's status and the id derived from the request, no more.
		{route: "POST /ab-choices", path: "/ab-choices",
			body: map[string]any{"entity_type": "span", "entity_id": v.spanID, "choice_name": victimTest, "variant_key": "other",
				"variant_value": "mine", "variants": map[string]any{"other": "mine", "control": "mine too"},
				"weights": map[string]any{"control": 0.1, "other": 0.9}, "duration_days": 3},
			named: []string{v.spanID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
				var ans map[string]any
				res.Decode(t, &ans)
				assert.Equal(t, "running", ans["test_status"])
				assert.NotNil(t, ans["ab_choice_id"])
				for _, stored := range []string{"definition_kept", "recorded", "ends_at"} {
					assert.NotContains(t, ans, stored)
				}
				assert.NotContains(t, ans["message"], "kept")
			}},
		{route: "POST /projects/{project_id}/prompts/{slug}/completions", path: "/projects/%7Bproject_id%7D/prompts/" + v.slug + "/completions",
			body: map[string]any{"output_text": "logged", "prompt_version_id": v.versionID}, named: []string{v.versionID},
			check: func(t *testing.T, res webtest.Response) {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
				assert.ElementsMatch(t, []string{"id", "span_id", "trace_id"}, slices.Collect(maps.Keys(res.Map(t))))
			}},
		// An experiment's writes answer the id of what was written, never what is stored.
		{route: "POST /v1/experiments", path: "/v1/experiments",
			body: map[string]any{"dataset_version_id": v.datasetVersionID, "name": "run"}, check: answersIDOnly},
		{route: "POST /v1/experiments/{experiment_id}/results", path: "/v1/experiments/" + v.experimentID + "/results",
			body: map[string]any{"dataset_row_id": v.rowID, "result": "again", "run_number": 1}, named: []string{v.resultID}, check: answersIDOnly},
		{route: "POST /v1/experiments/{experiment_id}/evaluators", path: "/v1/experiments/" + v.experimentID + "/evaluators",
			body: map[string]any{"name": "exact", "evaluation_mode": "row"}, check: answersIDOnly},
		{route: "POST /v1/experiments/{experiment_id}/evaluations", path: "/v1/experiments/" + v.experimentID + "/evaluations",
			body: map[string]any{"evaluator_id": uuid.NewString(), "experiment_result_id": v.resultID, "evaluation_value": "1"},
			check: func(t *testing.T, res webtest.Response) {
				assert.Equal(t, http.StatusNotFound, res.Status, "body: %s", res.Body)
			}},
		{route: "POST /v1/column-evaluations", path: "/v1/column-evaluations",
			body: map[string]any{"evaluator_id": uuid.NewString(), "experiment_id": v.experimentID, "run_number": 1},
			check: func(t *testing.T, res webtest.Response) {
				assert.Equal(t, http.StatusNotFound, res.Status, "body: %s", res.Body)
			}},
		{route: "POST /v1/column-metrics", path: "/v1/column-metrics",
			body: map[string]any{"metric_name": "acc", "experiment_id": v.experimentID, "run_number": 1, "results": 1}, check: answersIDOnly},
		{route: "POST /v1/run-metrics", path: "/v1/run-metrics",
			body: map[string]any{"metric_name": "acc", "experiment_id": v.experimentID, "total_runs": 1, "results": 1}, check: answersIDOnly},
	}

	var covered []string
	for _, tt := range tests {
		covered = append(covered, tt.route)
	}
	slices.Sort(covered)
	want := slices.Clone(ingestRoutes)
	slices.Sort(want)
	require.Equal(t, want, slices.Compact(covered), "a case for every route an ingest key may call")

	for _, tt := range tests {
		t.Run(tt.route, func(t *testing.T) {
			method, _, _ := strings.Cut(tt.route, " ")
			req := webtest.NewRequest(t, method, tt.path, key, tt.body)
			maps.Copy(req.Header, tt.header)
			res := webtest.Serve(whole, req)
			assert.Less(t, res.Status, 500, "body: %s", res.Body)
			answer := string(res.Body) + headerText(res.Header)
			for _, s := range stored {
				assert.NotContains(t, answer, s, "a stored value in the answer")
			}
			for _, id := range []string{v.traceID, v.sessionID, v.spanID, otlpSpanID} {
				if !slices.Contains(tt.named, id) {
					assert.NotContains(t, answer, id, "a stored id the request did not name")
					assert.NotContains(t, answer, strings.ReplaceAll(id, "-", ""), "a stored id the request did not name, as hex")
				}
			}
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}

// headerText is every header value of h, one per line.
func headerText(h http.Header) string {
	var sb strings.Builder
	for k, vs := range h {
		for _, v := range vs {
			sb.WriteString(k + ": " + v + "\n")
		}
	}
	return sb.String()
}

// answersIDOnly checks an answer to an experiment write: 200 with the id of what was written.
func answersIDOnly(t *testing.T, res webtest.Response) {
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	assert.Equal(t, []string{"id"}, slices.Collect(maps.Keys(res.Map(t))))
}
