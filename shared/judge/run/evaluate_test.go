package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
	"github.com/plumehq/plume/shared/trace"
)

// fakeClient is the real llm.Client against the fake model server, one attempt per call so
// that the server's call count is the number of model calls.
func fakeClient(t *testing.T, rules ...fakemodel.Rule) (*llm.Client, *fakemodeltest.Server) {
	srv := fakemodeltest.Start(t, fakemodel.WithRules(rules...))
	c := llm.New(llm.Config{Providers: map[string]llm.Endpoint{
		llm.ProviderOpenAI: {BaseURL: srv.OpenAIBaseURL(), APIKey: "k"},
	}}, llm.Options{MaxAttempts: 1})
	return c, srv
}

func spanIDs(ins []judge.EvaluationInput) []string {
	ids := make([]string, len(ins))
	for i, in := range ins {
		ids[i] = in.SpanID
	}
	return ids
}

func TestEvaluate(t *testing.T) {
	j := binaryJudge("Is the answer to {{input}} polite?\n\n{{output}}")
	j.TagFilter = &judge.TagFilter{Tags: map[string][]string{"env": {"prod"}}, Match: judge.MatchAll}
	prod := trace.TagsOf(map[string]string{"env": "prod"})
	span := func(id, input string) trace.Span {
		sp := llmSpan(id, input, "answer to "+input)
		sp.Tags = prod
		return sp
	}
	spans := []trace.Span{
		span("s1", "question one"),
		span("s2", "question boom"),
		{ID: "s3", Kind: trace.KindGeneric, Tags: prod}, // not llm
		span("s4", "question rude"),
		llmSpan("s5", "no tags", "o"), // fails the tag filter
		span("s6", "question six"),
	}
	c, srv := fakeClient(t,
		fakemodel.Rule{Match: fakemodel.Contains("question boom"), Reply: fakemodel.Reply{Status: 500}},
		fakemodel.Rule{Match: fakemodel.Contains("question rude"),
			Reply: fakemodel.Reply{JSON: json.RawMessage(`{"reason":"rude","confidence":0.8,"meets_criteria":false}`)}},
		fakemodel.Rule{Reply: fakemodel.Reply{JSON: json.RawMessage(`{"reason":"polite","confidence":0.9,"meets_criteria":true}`)}},
	)

	ins, errs := run.Evaluate(context.Background(), c, j, "openai/gpt-4o-mini", 2, spans, nil)

	assert.Equal(t, 4, srv.Count(), "one call per matching span")
	assert.Equal(t, []string{"s1", "s4", "s6"}, spanIDs(ins))
	require.Len(t, errs, 1)
	var se *run.SpanError
	require.ErrorAs(t, errs[0], &se)
	assert.Equal(t, "s2", se.SpanID)
	assert.ErrorIs(t, errs[0], llm.ErrUnavailable)

	byID := map[string]judge.EvaluationInput{}
	for _, in := range ins {
		byID[in.SpanID] = in
		assert.NotEmpty(t, in.Model)
		assert.NotNil(t, in.DurationMS)
	}
	assert.Equal(t, ptr(false), byID["s4"].Result)
	assert.Equal(t, "rude", byID["s4"].Reason)
	assert.Equal(t, ptr(true), byID["s1"].Result)

	evs, err := judge.BuildEvaluations(j, ins, time.Now())
	require.NoError(t, err)
	assert.Len(t, evs, 3)

	for _, call := range srv.Calls() {
		assert.Equal(t, "gpt-4o-mini", call.Model)
		assert.Equal(t, run.SchemaName, call.SchemaName)
		assert.Contains(t, call.System, `"Helpful"`)
		require.NotNil(t, call.Temperature)
		assert.Equal(t, 0.0, *call.Temperature)
	}
}

func TestEvaluateScoredDefaultAnswers(t *testing.T) {
	// With no rule the fake answers a valid instance of the schema (numbers at their minimum):
	// the schema Prompt sends is one a provider's strict mode and the client accept.
	j := withCriteria(scoredJudge("Rate {{output}}"))
	j.Model = "openai/gpt-4o"
	c, srv := fakeClient(t)
	spans := []trace.Span{llmSpan("a", "i", "o"), llmSpan("b", "i", "o")}

	ins, errs := run.Evaluate(context.Background(), c, j, "openai/gpt-4o-mini", 0, spans, []run.Correction{{Input: "x", Output: "y"}})

	require.Empty(t, errs)
	assert.Equal(t, 2, srv.Count())
	require.Len(t, ins, 2)
	for _, in := range ins {
		assert.Equal(t, ptr(1.0), in.Score)
		assert.Len(t, in.CriteriaScores, 2)
	}
	_, err := judge.BuildEvaluations(j, ins, time.Now())
	require.NoError(t, err)
	for _, call := range srv.Calls() {
		assert.Equal(t, "gpt-4o", call.Model)
		assert.Contains(t, call.System, "Correction 1")
	}
}

func TestEvaluateInvalidAnswer(t *testing.T) {
	// The client checks the answer against the schema; an answer out of range, again after
	// the client's repair retry, fails its span and no other.
	c, srv := fakeClient(t,
		fakemodel.Rule{Match: fakemodel.AnyContains("bad"), Reply: fakemodel.Reply{JSON: json.RawMessage(`{"reason":"r","confidence":1,"score":11}`)}},
		fakemodel.Rule{Reply: fakemodel.Reply{JSON: json.RawMessage(`{"reason":"r","confidence":1,"score":4}`)}},
	)
	j := scoredJudge("{{input}}")
	j.Model = ""
	ins, errs := run.Evaluate(context.Background(), c, j, "openai/gpt-4o-mini", 4,
		[]trace.Span{llmSpan("good", "fine", "o"), llmSpan("bad", "bad", "o")}, nil)
	assert.Equal(t, []string{"good"}, spanIDs(ins))
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], llm.ErrInvalidOutput)
	var se *run.SpanError
	require.ErrorAs(t, errs[0], &se)
	assert.Equal(t, "bad", se.SpanID)
	assert.Equal(t, 3, srv.Count(), "good once, bad twice (the repair retry)")
}

func TestEvaluateSpanSentTwice(t *testing.T) {
	c, srv := fakeClient(t, fakemodel.Rule{Reply: fakemodel.Reply{JSON: json.RawMessage(`{"reason":"r","confidence":1,"meets_criteria":true}`)}})
	spans := []trace.Span{llmSpan("s1", "first version", "o"), llmSpan("s2", "i", "o"), llmSpan("s1", "second version", "o")}

	ins, errs := run.Evaluate(context.Background(), c, binaryJudge("{{input}}"), "openai/gpt-4o-mini", 1, spans, nil)

	require.Empty(t, errs)
	assert.Equal(t, []string{"s2", "s1"}, spanIDs(ins))
	require.Equal(t, 2, srv.Count())
	var users []string
	for _, call := range srv.Calls() {
		users = append(users, call.LastUser())
	}
	assert.Contains(t, users, "second version\n\n<output>\no\n</output>")
}

// countingCaller answers every call after a pause and records the most calls in flight.
type countingCaller struct {
	mu       sync.Mutex
	inFlight int
	max      int
	calls    int
}

func (c *countingCaller) Complete(ctx context.Context, _ llm.Request) (llm.Response, error) {
	c.mu.Lock()
	c.calls++
	c.inFlight++
	c.max = max(c.max, c.inFlight)
	c.mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	c.mu.Lock()
	c.inFlight--
	c.mu.Unlock()
	return llm.Response{JSON: json.RawMessage(`{"reason":"r","confidence":1,"meets_criteria":true}`)}, nil
}

func TestEvaluateConcurrency(t *testing.T) {
	spans := make([]trace.Span, 20)
	for i := range spans {
		spans[i] = llmSpan(fmt.Sprintf("s%02d", i), "i", "o")
	}
	tests := []struct {
		name        string
		concurrency int
		wantMax     int
	}{
		{name: "one at a time", concurrency: 1, wantMax: 1},
		{name: "three", concurrency: 3, wantMax: 3},
		{name: "default", concurrency: 0, wantMax: run.DefaultConcurrency},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &countingCaller{}
			ins, errs := run.Evaluate(context.Background(), c, binaryJudge("t"), "m", tt.concurrency, spans, nil)
			require.Empty(t, errs)
			assert.Equal(t, 20, c.calls)
			assert.LessOrEqual(t, c.max, tt.wantMax)
			ids := spanIDs(ins)
			assert.True(t, slices.IsSorted(ids), "verdicts in the order of spans")
		})
	}
}

func TestEvaluateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &countingCaller{}
	ins, errs := run.Evaluate(ctx, c, binaryJudge("t"), "m", 2, []trace.Span{llmSpan("a", "i", "o"), llmSpan("b", "i", "o")}, nil)
	assert.Empty(t, ins)
	require.Len(t, errs, 2)
	for _, err := range errs {
		assert.True(t, errors.Is(err, context.Canceled))
	}
	assert.Zero(t, c.calls)
}
