package signals_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/judge"
)

// pythonSpan is one span of the Python SDK's /spans payload as json.dumps writes it (its
// default separators, the SDK's key order), carrying ab_choices as ze.choose appends them.
func pythonSpan(id, traceID, sessionID, abChoices string) string {
	at := float64(time.Now().Add(-time.Minute).UnixMicro()) / 1e6
	return fmt.Sprintf(`{"span_id": %q, "id": %q, "trace_id": %q, "parent_span_id": null, "name": "answer", "kind": "llm", `+
		`"started_at": %f, "ended_at": %f, "duration_ms": 12.5, "attributes": {"model": "gpt-4o"}, "status": "ok", `+
		`"session_id": %q, "tags": {}, "trace_tags": {}, "session_tags": {}, "input_data": "q", "output_data": "a", "ab_choices": %s}`,
		id, id, traceID, at, at, sessionID, abChoices)
}

// carried is an ab_choices array of one choice as the Python SDK appends it.
func carried(choiceID, test, variant string) string {
	return fmt.Sprintf(`[{"ab_choice_id": %q, "choice_name": %q, "variant_key": %q, "variant_value": "value-%s"}]`, choiceID, test, variant, variant)
}

// choiceID posts ze.choose's request and returns the id the SDK appends to its span.
func choiceID(t *testing.T, srv *apitest.API, key, entityType, entityID, test, variant string) string {
	t.Helper()
	var ans api.ABChoiceAnswer
	srv.MustDo(t, "POST", "/ab-choices", key, choiceBody(entityType, entityID, test, variant, 14)).Decode(t, &ans)
	require.NotNil(t, ans.ABChoiceID)
	return *ans.ABChoiceID
}

// TestSpanChoicesJoinVariants replays the Python SDK: ze.choose on a trace, on a session and
// inside a span, then /spans payloads whose spans carry those choices in ab_choices. Each
// span's judge verdicts and feedback count for its carried variant, once: a span that carries
// the choice made on itself counts once, a span whose verdict came before it (a late span)
// and a span whose choice is posted after it (a late choice) join, carried choices of unknown
// tests or variants join nothing, and a carried choice is not one of the variant's choices.
// The payload sent again and the stream applied again change nothing.
func TestSpanChoicesJoinVariants(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	ctx := context.Background()
	const test = "model_test"
	trace1, session := uuid.NewString(), uuid.NewString()
	s := map[string]string{}
	for _, n := range []string{"inTrace", "inSession", "itself", "unknown", "lateChoice", "lateSpan", "none"} {
		s[n] = uuid.NewString()
	}
	srv.EnsurePrompt(t, a, "bot", "be brief")
	onTrace := choiceID(t, srv, a.Key, "trace", trace1, test, "b")
	onSession := choiceID(t, srv, a.Key, "session", session, test, "a")
	onItself := choiceID(t, srv, a.Key, "span", s["itself"], test, "b")

	res := srv.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "helpful", "template": "Helpful? {{output}}"})
	judgeID := res.Map(t)["id"].(string)
	j, err := srv.Env.JudgeStore().Judge(ctx, a.ProjectID, judgeID)
	require.NoError(t, err)
	verdicts := func(passed map[string]bool) {
		var evs []judge.Evaluation
		for span, p := range passed {
			evs = append(evs, judge.Evaluation{ID: uuid.NewString(), SpanID: span, JudgeID: judgeID, EvaluationType: "binary", Result: p, CreatedAt: time.Now().UTC()})
		}
		_, err := srv.Env.JudgeStore().PutEvaluations(ctx, j, evs)
		require.NoError(t, err)
	}
	thumbs := func(span string, up bool) {
		srv.MustDo(t, "POST", "/v1/prompts/bot/completions/"+span+"/feedback", a.Key, map[string]any{"thumbs_up": up})
	}
	thumbs(s["lateSpan"], false) // before its span arrives

	payload := "[" + strings.Join([]string{
		pythonSpan(s["inTrace"], trace1, uuid.NewString(), carried(onTrace, test, "b")),
		pythonSpan(s["inSession"], uuid.NewString(), session, carried(onSession, test, "a")),
		pythonSpan(s["itself"], uuid.NewString(), uuid.NewString(), carried(onItself, test, "b")),
		pythonSpan(s["unknown"], uuid.NewString(), uuid.NewString(),
			`[{"ab_choice_id": null, "choice_name": "never-defined", "variant_key": "a", "variant_value": "x"}, `+
				`{"ab_choice_id": null, "choice_name": "model_test", "variant_key": "zzz", "variant_value": "x"}]`),
		pythonSpan(s["lateChoice"], uuid.NewString(), uuid.NewString(), carried(uuid.NewString(), test, "a")),
		pythonSpan(s["lateSpan"], uuid.NewString(), uuid.NewString(), carried(uuid.NewString(), test, "b")),
		pythonSpan(s["none"], uuid.NewString(), uuid.NewString(), `[]`),
	}, ", ") + "]"
	res = srv.Do(t, "POST", "/spans", a.Key, payload)
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	srv.DrainStream(t)

	verdicts(map[string]bool{s["inTrace"]: true, s["inSession"]: false, s["itself"]: true, s["unknown"]: true, s["lateChoice"]: false, s["none"]: true})
	thumbs(s["inTrace"], true)
	srv.DrainStream(t)
	lateChoice := choiceID(t, srv, a.Key, "span", s["lateChoice"], test, "a")
	assert.NotEmpty(t, lateChoice)
	srv.DrainStream(t)

	want := map[string]api.ABVariantResult{
		// b: the trace's and the span's own choices; verdicts of inTrace and itself, the
		// feedback of inTrace and of lateSpan (sent before its span).
		"b": {Key: "b", Choices: 2, Judges: []api.ABJudgeStats{{JudgeID: judgeID, Evaluations: 2, Passed: 2, PassRate: 1}}, Feedback: api.ABFeedback{Spans: 2, Up: 1, Down: 1}},
		// a: the session's choice and the late one; verdicts of inSession and lateChoice.
		"a": {Key: "a", Choices: 2, Judges: []api.ABJudgeStats{{JudgeID: judgeID, Evaluations: 2, Passed: 0, PassRate: 0}}},
	}
	check := func(when string) {
		t.Helper()
		rep := report(t, srv, a, test)
		require.Len(t, rep.Results, 2)
		for _, r := range rep.Results {
			w := want[r.Key]
			assert.Equal(t, w.Choices, r.Choices, "%s: choices of %s", when, r.Key)
			assert.Equal(t, w.Feedback, r.Feedback, "%s: feedback of %s", when, r.Key)
			assert.Equal(t, w.Judges, r.Judges, "%s: judges of %s", when, r.Key)
		}
	}
	check("joined")

	// The SDK's flush sent again, a later write of a span with other choices, the stream
	// applied again: nothing counts twice, and the first variant of a test stays.
	res = srv.Do(t, "POST", "/spans", a.Key, payload)
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	res = srv.Do(t, "POST", "/spans", a.Key, "["+pythonSpan(s["inTrace"], trace1, uuid.NewString(), carried(onTrace, test, "a"))+"]")
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	srv.DrainStream(t)
	srv.ReplayEvents(t)
	srv.DrainStream(t)
	check("replayed")

	var span api.Span
	srv.MustDo(t, "GET", "/spans/"+s["inTrace"], a.Key, nil).Decode(t, &span)
	assert.Equal(t, []api.SpanABChoice{{ABChoiceID: onTrace, ChoiceName: test, VariantKey: "b", VariantValue: "value-b"}}, span.ABChoices)
	var unknown api.Span
	srv.MustDo(t, "GET", "/spans/"+s["unknown"], a.Key, nil).Decode(t, &unknown)
	assert.Len(t, unknown.ABChoices, 2, "kept on the span, joined nowhere")
	assert.Empty(t, entitySignals(t, srv, a.Key, "span", s["unknown"]), "a span of no defined test gets no derived signal")
	assert.Empty(t, entitySignals(t, srv, a.Key, "span", s["none"]))
}

// TestSpanChoicesLimit: a span with more than api.MaxSpanABChoices choices is rejected alone,
// with a reason naming the field; the others of the batch are stored.
func TestSpanChoicesLimit(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	var many []string
	for i := range api.MaxSpanABChoices + 1 {
		many = append(many, fmt.Sprintf(`{"choice_name": "t%d", "variant_key": "a"}`, i))
	}
	ok, over := uuid.NewString(), uuid.NewString()
	res := srv.Do(t, "POST", "/spans", srv.A.Key, "["+pythonSpan(ok, uuid.NewString(), uuid.NewString(), carried(uuid.NewString(), "t", "a"))+", "+
		pythonSpan(over, uuid.NewString(), uuid.NewString(), "["+strings.Join(many, ", ")+"]")+"]")
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	assert.Equal(t, "1", res.Header.Get("X-Plume-Rejected"))
	assert.Contains(t, res.Header.Get("X-Plume-Rejected-Spans"), "ab_choices: more than 8 choices")
	assert.Equal(t, http.StatusOK, srv.Do(t, "GET", "/spans/"+ok, srv.A.Key, nil).Status)
	assert.Equal(t, http.StatusNotFound, srv.Do(t, "GET", "/spans/"+over, srv.A.Key, nil).Status)

	res = srv.Do(t, "POST", "/spans", srv.A.Key, "["+pythonSpan(over, uuid.NewString(), uuid.NewString(), "["+strings.Join(many, ", ")+"]")+"]")
	assert.Equal(t, http.StatusBadRequest, res.Status, "no valid span: body %s", res.Body)
}

// TestSignalsOnUpperCaseIDs: a signal sent on a span's or trace's id written in upper case (or
// without hyphens) is stored on the id as ingestion stores it, so the span and trace answers
// show it and both spellings read it.
func TestSignalsOnUpperCaseIDs(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	spanID, traceID := uuid.NewString(), uuid.NewString()
	res := srv.Do(t, "POST", "/spans", a.Key, "["+pythonSpan(strings.ToUpper(spanID), strings.ToUpper(traceID), uuid.NewString(), "null")+"]")
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	srv.MustDo(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": []any{
		map[string]any{"entity_type": "span", "entity_id": strings.ToUpper(spanID), "name": "converted", "value": true, "signal_type": "boolean"},
		map[string]any{"entity_type": "trace", "entity_id": strings.ReplaceAll(strings.ToUpper(traceID), "-", ""), "name": "revenue", "value": 12.5, "signal_type": "numerical"},
	}})
	srv.MustDo(t, "POST", "/signals/", a.Key, map[string]any{"entity_type": "span", "entity_id": strings.ToUpper(spanID), "name": "clicks", "value": "3", "signal_type": "numerical"})

	var span struct {
		ID      string       `json:"id"`
		Signals []api.Signal `json:"signals"`
	}
	srv.MustDo(t, "GET", "/spans/"+spanID, a.Key, nil).Decode(t, &span)
	assert.Equal(t, spanID, span.ID)
	assert.Equal(t, []string{"clicks", "converted"}, signalNames(span.Signals))
	var tr struct {
		Signals []api.Signal `json:"signals"`
	}
	srv.MustDo(t, "GET", "/traces/"+traceID, a.Key, nil).Decode(t, &tr)
	assert.Equal(t, []string{"revenue"}, signalNames(tr.Signals))
	assert.Len(t, entitySignals(t, srv, a.Key, "span", strings.ToUpper(spanID)), 2, "the upper-case id reads the same record")
	assert.Len(t, entitySignals(t, srv, a.Key, "span", spanID), 2)
}

func signalNames(sigs []api.Signal) []string {
	var out []string
	for _, s := range sigs {
		out = append(out, s.Name)
	}
	return out
}
