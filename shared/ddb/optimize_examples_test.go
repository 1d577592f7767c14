package ddb_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/optimize"
)

// exampleWorld is a prompt "support-bot" in tenant A with six completions c[0] (oldest) to
// c[5], ingested one batch each, and the same prompt in tenant B with three completions b, the
// last of which has the id of A's c[5], all through the API.
type exampleWorld struct {
	api   *apitest.API
	store *ddb.ExampleStore
	c     []string
	// other is a span of A linked to another prompt.
	other string
	// binary and scored are judges of A; judgeB is a judge of B.
	binary, scored, judgeB string
	b                      []string
}

const exampleSlug = "support-bot"

func newExampleWorld(t *testing.T) *exampleWorld {
	t.Helper()
	api := apitest.New(t, apitest.Options{})
	w := &exampleWorld{api: api, store: ddb.NewExampleStore(api.Table, api.Blobs)}
	versionA := api.EnsurePrompt(t, api.A, exampleSlug, "You answer support questions.")
	api.EnsurePrompt(t, api.A, "other-bot", "You write poems.")
	versionB := api.EnsurePrompt(t, api.B, exampleSlug, "You answer support questions.")

	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := range 6 {
		sp := apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", exampleSlug, versionA, fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i), start.Add(time.Duration(i)*time.Minute))
		attrs := sp["attributes"].(map[string]any)
		switch i {
		case 1:
			attrs["variables"] = map[string]any{"customer": "Ann", "tier": 2}
		case 3:
			attrs["zeroeval"].(map[string]any)["variables"] = map[string]any{"customer": "Bob"}
		}
		api.MustDo(t, "POST", "/spans", api.A.Key, []any{sp})
		w.c = append(w.c, sp["id"].(string))
	}
	other := apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", "other-bot", "", "a poem please", "roses", start)
	api.MustDo(t, "POST", "/spans", api.A.Key, []any{other})
	w.other = other["id"].(string)
	// B's spans: two of its own, and one with the id of A's newest (span ids are per project).
	for i, id := range []string{uuid.NewString(), uuid.NewString(), w.c[5]} {
		sp := apitest.LLMSpan(id, uuid.NewString(), "", exampleSlug, versionB, fmt.Sprintf("b question %d", i), fmt.Sprintf("b answer %d", i), start)
		api.MustDo(t, "POST", "/spans", api.B.Key, []any{sp})
		w.b = append(w.b, id)
	}

	w.binary = w.createJudge(t, api.A, map[string]any{"name": "Helpful", "evaluation_type": "binary"})
	w.scored = w.createJudge(t, api.A, map[string]any{"name": "Polite", "evaluation_type": "scored", "score_min": 1, "score_max": 5})
	w.judgeB = w.createJudge(t, api.B, map[string]any{"name": "Helpful", "evaluation_type": "binary"})
	return w
}

func (w *exampleWorld) createJudge(t *testing.T, tenant apitest.Tenant, body map[string]any) string {
	t.Helper()
	body["template"] = "Is the answer good?\n\nQuestion: {{input}}\nAnswer: {{output}}"
	res := w.api.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/judges", tenant.Key, body)
	return res.Map(t)["id"].(string)
}

// feedback posts completion feedback on span with key.
func (w *exampleWorld) feedback(t *testing.T, key, slug, span string, body map[string]any) {
	t.Helper()
	w.api.MustDo(t, "POST", "/v1/prompts/"+slug+"/completions/"+span+"/feedback", key, body)
}

// evaluate records judge's verdicts of tenant's project.
func (w *exampleWorld) evaluate(t *testing.T, tenant apitest.Tenant, judgeID string, evs ...map[string]any) {
	t.Helper()
	w.api.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/judges/"+judgeID+"/evaluations", tenant.Key, evs)
}

func (w *exampleWorld) load(t *testing.T, tenant apitest.Tenant, limit int, judges ...string) []optimize.Example {
	t.Helper()
	intents := make([]optimize.Intent, len(judges))
	for i, j := range judges {
		intents[i] = optimize.Intent{JudgeID: j, Weight: 1}
	}
	examples, err := optimize.LoadExamples(context.Background(), w.store, tenant.ProjectID, exampleSlug, intents, limit)
	require.NoError(t, err)
	return examples
}

func byID(examples []optimize.Example) map[string]optimize.Example {
	out := make(map[string]optimize.Example, len(examples))
	for _, ex := range examples {
		out[ex.ID] = ex
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

func TestLoadExamples(t *testing.T) {
	w := newExampleWorld(t)
	api := w.api
	carol := api.KeyFor(t, api.A, "carol")

	// c[1]: a thumbs down with the output wanted, then someone else's thumbs up.
	w.feedback(t, api.A.Key, exampleSlug, w.c[1], map[string]any{"thumbs_up": false, "reason": "too curt", "expected_output": "Hello Ann, here is how."})
	w.feedback(t, carol, exampleSlug, w.c[1], map[string]any{"thumbs_up": true, "reason": "fine by me"})
	// c[3]: a thumbs up.
	w.feedback(t, api.A.Key, exampleSlug, w.c[3], map[string]any{"thumbs_up": true})
	// c[4]: the judges' verdicts only, and a calibration of one of them, which is no
	// feedback on the completion.
	w.evaluate(t, api.A, w.binary, map[string]any{"span_id": w.c[4], "evaluation_result": true, "evaluation_reason": "helps"},
		map[string]any{"span_id": w.c[3], "evaluation_result": false, "evaluation_reason": "does not help"})
	w.evaluate(t, api.A, w.scored, map[string]any{"span_id": w.c[4], "score": 4, "evaluation_reason": "polite enough"})
	w.feedback(t, api.A.Key, exampleSlug, w.c[4], map[string]any{"thumbs_up": false, "judge_id": w.binary})
	// Feedback under this prompt on a completion of another prompt.
	w.feedback(t, api.A.Key, exampleSlug, w.other, map[string]any{"thumbs_up": true, "expected_output": "a haiku"})

	// Tenant B: its own feedback and verdicts, on its spans, one of which has an id of A's, and
	// on another of A's span ids.
	w.feedback(t, api.B.Key, exampleSlug, w.b[0], map[string]any{"thumbs_up": true, "expected_output": "b wanted"})
	w.feedback(t, api.B.Key, exampleSlug, w.c[5], map[string]any{"thumbs_up": false, "reason": "B's"})
	w.feedback(t, api.B.Key, exampleSlug, w.c[0], map[string]any{"thumbs_up": false, "expected_output": "B's opinion of A's span"})
	w.evaluate(t, api.B, w.judgeB, map[string]any{"span_id": w.b[1], "evaluation_result": true},
		map[string]any{"span_id": w.c[5], "evaluation_result": true})

	t.Run("every completion, with what people and judges said", func(t *testing.T) {
		api.DDB.Reset()
		api.S3.Reset()
		examples := w.load(t, api.A, 100, w.binary, w.scored, w.judgeB)
		assert.Equal(t, map[string]int{"Query": 2, "BatchGetItem": 2}, api.DDB.Counts(),
			"completions and feedback: a Query each; evaluations and summaries: a BatchGetItem each")
		assert.Equal(t, 7, api.S3.Count("GetObject"), "a ranged GET per batch object: the six completions' and the other prompt's span's, read and passed over")

		got := byID(examples)
		require.Len(t, got, 6, "A's six completions, not the other prompt's span nor B's")
		assert.ElementsMatch(t, w.c, slices.Collect(maps.Keys(got)))

		c1 := got[w.c[1]]
		assert.Equal(t, "question 1", c1.Input)
		assert.Equal(t, "answer 1", c1.Output)
		assert.Equal(t, map[string]string{"customer": "Ann", "tier": "2"}, c1.Variables)
		assert.Equal(t, ptr(true), c1.ThumbsUp, "the last feedback decides")
		assert.Equal(t, "fine by me", c1.Reason)
		assert.Equal(t, "Hello Ann, here is how.", c1.ExpectedOutput, "the expected output given earlier stays")
		assert.Empty(t, c1.Judged)

		c3 := got[w.c[3]]
		assert.Equal(t, map[string]string{"customer": "Bob"}, c3.Variables, "attributes.zeroeval.variables")
		assert.Equal(t, ptr(true), c3.ThumbsUp)
		assert.Equal(t, map[string]optimize.Verdict{w.binary: {Score: 0, Reason: "does not help"}}, c3.Judged)

		c4 := got[w.c[4]]
		assert.Nil(t, c4.ThumbsUp, "a calibration is feedback on the judge, not the completion")
		assert.Equal(t, map[string]optimize.Verdict{
			w.binary: {Score: 1, Reason: "helps"},
			w.scored: {Score: 0.75, Reason: "polite enough"},
		}, c4.Judged)

		assert.Equal(t, "question 5", got[w.c[5]].Input, "A's span, not B's of the same id")
		for _, id := range []string{w.c[0], w.c[2], w.c[5]} {
			assert.Nil(t, got[id].ThumbsUp, "B's feedback on A's span ids is B's")
			assert.Empty(t, got[id].ExpectedOutput)
			assert.Empty(t, got[id].Judged, "B's judge's verdicts are B's")
			assert.Nil(t, got[id].Variables)
		}
	})

	t.Run("judged completions first, however old", func(t *testing.T) {
		examples := w.load(t, api.A, 3, w.binary, w.scored)
		// c[3] and c[1] have people's feedback (c[1] is older than the newest three), c[4]
		// the judges' verdicts only; the other prompt's span is passed over.
		assert.Equal(t, []string{w.c[3], w.c[1], w.c[4]}, idsOfExamples(examples))
	})

	t.Run("without intents, people's feedback first", func(t *testing.T) {
		examples := w.load(t, api.A, 4)
		assert.Equal(t, []string{w.c[3], w.c[1], w.c[5], w.c[4]}, idsOfExamples(examples))
		assert.Empty(t, byID(examples)[w.c[4]].Judged)
	})

	t.Run("another project sees its own", func(t *testing.T) {
		examples := w.load(t, api.B, 100, w.judgeB, w.binary)
		got := byID(examples)
		require.Len(t, got, 3)
		assert.Equal(t, ptr(true), got[w.b[0]].ThumbsUp)
		assert.Equal(t, "b wanted", got[w.b[0]].ExpectedOutput)
		assert.Equal(t, map[string]optimize.Verdict{w.judgeB: {Score: 1}}, got[w.b[1]].Judged)
		assert.Equal(t, "b question 1", got[w.b[1]].Input)
		assert.Equal(t, optimize.Example{
			ID: w.c[5], Input: "b question 2", Output: "b answer 2", ThumbsUp: ptr(false), Reason: "B's",
			Judged: map[string]optimize.Verdict{w.judgeB: {Score: 1}},
		}, got[w.c[5]], "B's span of the id, with B's feedback and verdicts only")
	})

	t.Run("a prompt without completions", func(t *testing.T) {
		examples, err := optimize.LoadExamples(context.Background(), w.store, api.A.ProjectID, "nobody", nil, 10)
		require.NoError(t, err)
		assert.Empty(t, examples)
	})
}

func TestExampleStoreRequests(t *testing.T) {
	w := newExampleWorld(t)
	api := w.api
	ctx := context.Background()
	pid := api.A.ProjectID
	w.evaluate(t, api.A, w.binary, map[string]any{"span_id": w.c[0], "evaluation_result": true})

	tests := []struct {
		name string
		call func() error
		want map[string]int
	}{
		{"completion ids", func() error {
			ids, err := w.store.CompletionIDs(ctx, pid, exampleSlug, 4)
			assert.Equal(t, []string{w.c[5], w.c[4], w.c[3], w.c[2]}, ids, "newest first")
			return err
		}, map[string]int{"Query": 1}},
		{"feedback", func() error {
			_, err := w.store.CompletionFeedback(ctx, pid, exampleSlug, 10)
			return err
		}, map[string]int{"Query": 1}},
		{"evaluations of 120 spans by 2 judges", func() error {
			spans := slices.Clone(w.c)
			for len(spans) < 120 {
				spans = append(spans, uuid.NewString())
			}
			evs, err := w.store.Evaluations(ctx, pid, spans, []string{w.binary, w.scored})
			assert.Len(t, evs, 1)
			return err
		}, map[string]int{"BatchGetItem": 3}},
		{"spans", func() error {
			spans, err := w.store.Spans(ctx, pid, append(slices.Clone(w.c), uuid.NewString()))
			assert.Len(t, spans, 6, "an unknown span is left out")
			return err
		}, map[string]int{"BatchGetItem": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api.DDB.Reset()
			require.NoError(t, tt.call())
			assert.Equal(t, tt.want, api.DDB.Counts())
		})
	}
}

func idsOfExamples(examples []optimize.Example) []string {
	out := make([]string, len(examples))
	for i, ex := range examples {
		out[i] = ex.ID
	}
	return out
}
