package signals_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/judge"
)

// TestJudgesAndFeedbackPerVariant: spans chosen into variants a and b (ze.choose inside the
// span) are judged and given feedback; from the table's stream the report gets, per variant,
// each judge's pass rate and the thumbs, exactly, whichever came first (one span's feedback
// and verdict come before its choice), with a verdict changed and the stream replayed. A span
// in no test gets no record.
func TestJudgesAndFeedbackPerVariant(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	ctx := context.Background()
	versionID := srv.EnsurePrompt(t, a, "bot", "be brief")
	spans := map[string][]string{"a": {uuid.NewString(), uuid.NewString(), uuid.NewString()}, "b": {uuid.NewString(), uuid.NewString()}}
	outside := uuid.NewString()
	var payload []map[string]any
	for _, id := range append(append(append([]string{}, spans["a"]...), spans["b"]...), outside) {
		payload = append(payload, apitest.LLMSpan(id, uuid.NewString(), "", "bot", versionID, "q", "a", time.Now().Add(-time.Minute)))
	}
	srv.MustDo(t, "POST", "/spans", a.Key, payload)
	late := spans["b"][1] // judged and given feedback before its choice
	for v, ids := range spans {
		for _, id := range ids {
			if id != late {
				srv.MustDo(t, "POST", "/ab-choices", a.Key, choiceBody("span", id, "judged", v, 14))
			}
		}
	}
	res := srv.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "helpful", "template": "Helpful? {{output}}"})
	judgeID := res.Map(t)["id"].(string)
	j, err := srv.Env.JudgeStore().Judge(ctx, a.ProjectID, judgeID)
	require.NoError(t, err)
	verdict := func(span string, passed bool) judge.Evaluation {
		return judge.Evaluation{ID: uuid.NewString(), SpanID: span, JudgeID: judgeID, EvaluationType: "binary", Result: passed, CreatedAt: time.Now().UTC()}
	}
	_, err = srv.Env.JudgeStore().PutEvaluations(ctx, j, []judge.Evaluation{
		verdict(spans["a"][0], true), verdict(spans["a"][1], false), verdict(spans["a"][2], false),
		verdict(spans["b"][0], true), verdict(late, true), verdict(outside, true)})
	require.NoError(t, err)
	thumbs := func(span string, up bool, key string) {
		srv.MustDo(t, "POST", "/v1/prompts/bot/completions/"+span+"/feedback", key, map[string]any{"thumbs_up": up})
	}
	other := srv.KeyFor(t, a, "second-reviewer")
	thumbs(spans["a"][0], true, a.Key)
	thumbs(spans["a"][0], false, other)
	thumbs(late, true, a.Key)
	thumbs(outside, false, a.Key)
	srv.DrainStream(t)

	srv.MustDo(t, "POST", "/ab-choices", a.Key, choiceBody("span", late, "judged", "b", 14))
	_, err = srv.Env.JudgeStore().PutEvaluations(ctx, j, []judge.Evaluation{verdict(spans["a"][2], true)}) // changed: now passes
	require.NoError(t, err)
	srv.DrainStream(t)
	srv.ReplayEvents(t)
	srv.DrainStream(t)

	rep := report(t, srv, a, "judged")
	want := map[string]api.ABVariantResult{
		"a": {Key: "a", Choices: 3, Judges: []api.ABJudgeStats{{JudgeID: judgeID, Evaluations: 3, Passed: 2, PassRate: 2.0 / 3}},
			Feedback: api.ABFeedback{Spans: 1, Up: 1, Down: 1}},
		"b": {Key: "b", Choices: 2, Judges: []api.ABJudgeStats{{JudgeID: judgeID, Evaluations: 2, Passed: 2, PassRate: 1}},
			Feedback: api.ABFeedback{Spans: 1, Up: 1}},
	}
	for _, r := range rep.Results {
		w := want[r.Key]
		assert.Equal(t, w.Choices, r.Choices, "variant %s", r.Key)
		assert.Equal(t, w.Feedback, r.Feedback, "variant %s", r.Key)
		require.Len(t, r.Judges, 1, "variant %s", r.Key)
		assert.Equal(t, w.Judges[0].Evaluations, r.Judges[0].Evaluations, "variant %s", r.Key)
		assert.Equal(t, w.Judges[0].Passed, r.Judges[0].Passed, "variant %s", r.Key)
		assert.InDelta(t, w.Judges[0].PassRate, r.Judges[0].PassRate, 1e-9, "variant %s", r.Key)
	}
	var outsideSignals []api.Signal
	srv.MustDo(t, "GET", "/signals/entity/span/"+outside, a.Key, nil).Decode(t, &outsideSignals)
	assert.Empty(t, outsideSignals, "a span in no test gets no derived signal")
	res = srv.Do(t, "POST", "/signals/", a.Key, map[string]any{"entity_type": "span", "entity_id": outside, "name": "plume.judge.x", "value": true})
	assert.Equal(t, 400, res.Status, "clients may not send Plume's own signals: %s", res.Body)
	t.Log(fmt.Sprintf("%+v", rep.Results))
}
