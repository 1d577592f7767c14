package stack_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/evaluator"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/awstest"
	"github.com/plumehq/plume/shared/asyncinvoke"
	"github.com/plumehq/plume/shared/awsjson"
	"github.com/plumehq/plume/shared/deadletter"
	"github.com/plumehq/plume/shared/lambdaemu"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// evaluatorStack is the API with EvaluatorFunction's real bootstrap beside it, under the
// Runtime API emulator, calling the fake model server: the keys of the objects the API stores
// are what the bucket's events carry to it.
type evaluatorStack struct {
	api  *apitest.API
	fake *fakemodeltest.Server
	env  []string

	mu   sync.Mutex
	keys []string
}

func newEvaluatorStack(t *testing.T) *evaluatorStack {
	t.Helper()
	s := &evaluatorStack{api: apitest.New(t, apitest.Options{}), fake: fakemodeltest.Start(t)}
	s.env = functionEnv(t, s.api, "TABLE_NAME="+s.api.TableName,
		"OPENAI_BASE_URL="+s.fake.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test", "PLUME_JUDGE_MODEL=openai/gpt-4o-mini")
	s.api.Blobs.OnCreated(func(key string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.keys = append(s.keys, key)
	})
	prebuild(t, []string{mainPackages(t)["EvaluatorFunction"]})
	return s
}

// emulator starts one execution environment of EvaluatorFunction, with its deployed deadline:
// an invocation cut at the emulator's default (30 s, reached on a loaded machine) would keep
// its claims' leases, and its event's redelivery would rightly find them busy.
func (s *evaluatorStack) emulator(t *testing.T) *lambdaemu.Emulator {
	t.Helper()
	return startDeployed(t, t.Context(), "EvaluatorFunction", s.env)
}

func (s *evaluatorStack) takeKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys
	s.keys = nil
	return k
}

func (s *evaluatorStack) judge(t *testing.T, body map[string]any) string {
	t.Helper()
	body["template"] = "Does the answer address the question?\n{{input}}\n{{output}}"
	return s.api.MustDo(t, "POST", "/projects/"+s.api.A.ProjectID+"/judges", s.api.A.Key, body).Map(t)["id"].(string)
}

func (s *evaluatorStack) evaluated(t *testing.T, judgeID string) map[string]bool {
	t.Helper()
	res := s.api.MustDo(t, "GET", fmt.Sprintf("/projects/%s/judges/%s/evaluations?limit=100", s.api.A.ProjectID, judgeID), s.api.A.Key, nil)
	out := map[string]bool{}
	for _, e := range res.Map(t)["evaluations"].([]any) {
		out[e.(map[string]any)["span_id"].(string)] = true
	}
	return out
}

func llmSpan(slug string, tags map[string]string) map[string]any {
	sp := apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", slug, "", "question "+uuid.NewString(), "an answer", time.Now().Add(-time.Minute))
	if tags != nil {
		sp["tags"] = tags
	}
	return sp
}

func objectEvent(t *testing.T, key string) []byte {
	t.Helper()
	b, err := evaluator.ObjectEvent("plume-test", key, time.Now())
	require.NoError(t, err)
	return b
}

// invoke is an asynchronous invoker of emu: Lambda's two retries (a millisecond apart), and
// dead letters to OnFailure.
func invoke(emu *lambdaemu.Emulator, onFailure func(context.Context, deadletter.Record) error) *asyncinvoke.Invoker {
	return asyncinvoke.New(func(ctx context.Context, payload []byte) error {
		_, err := emu.Invoke(ctx, payload)
		return err
	}, asyncinvoke.Config{Retries: 2, Delay: func(int) time.Duration { return time.Millisecond }, OnFailure: onFailure})
}

func closeInvoker(t *testing.T, inv *asyncinvoke.Invoker) asyncinvoke.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, inv.Close(ctx))
	return inv.Stats()
}

// TestEvaluatorBootstrap: spans ingested through the API, their batches' events delivered to
// the real evaluator bootstrap: an evaluation for every span a judge takes and no other.
func TestEvaluatorBootstrap(t *testing.T) {
	s := newEvaluatorStack(t)
	linked := s.judge(t, map[string]any{"name": "support", "target_prompt": "support"})
	scored := s.judge(t, map[string]any{"name": "prod", "evaluation_type": "scored", "score_min": 0, "score_max": 10,
		"tag_filter": map[string]any{"tags": map[string]any{"env": []string{"prod"}}}})
	anyTag := s.judge(t, map[string]any{"name": "prod or gold",
		"tag_filter": map[string]any{"tags": map[string]any{"env": []string{"prod"}, "tier": []string{"gold"}}, "match": "any"},
		"criteria":   []map[string]any{{"key": "accuracy", "label": "Accuracy"}}})
	paused := s.judge(t, map[string]any{"name": "paused", "paused": true})
	spans := []map[string]any{llmSpan("support", map[string]string{"env": "prod"}), llmSpan("support", nil),
		llmSpan("billing", map[string]string{"env": "prod"}), llmSpan("billing", map[string]string{"tier": "gold"})}
	s.api.MustDo(t, "POST", "/spans", s.api.A.Key, spans)
	id := func(i int) string { return spans[i]["id"].(string) }

	inv := invoke(s.emulator(t), nil)
	for _, key := range s.takeKeys() {
		inv.Invoke(objectEvent(t, key))
	}
	stats := closeInvoker(t, inv)
	assert.Equal(t, 1, stats.Successes)
	assert.Zero(t, stats.Failures)
	assert.Equal(t, map[string]bool{id(0): true, id(1): true}, s.evaluated(t, linked))
	assert.Equal(t, map[string]bool{id(0): true, id(2): true}, s.evaluated(t, scored))
	assert.Equal(t, map[string]bool{id(0): true, id(2): true, id(3): true}, s.evaluated(t, anyTag))
	assert.Empty(t, s.evaluated(t, paused))
	assert.Equal(t, 7, s.fake.Count())
	res := s.api.MustDo(t, "GET", fmt.Sprintf("/projects/%s/spans/%s/evaluations", s.api.A.ProjectID, id(3)), s.api.A.Key, nil)
	ev := res.Map(t)["evaluations"].([]any)[0].(map[string]any)
	assert.Contains(t, ev["criteria_scores"], "accuracy", "criteria scores written")
	assert.Equal(t, "gpt-4o-mini", ev["model_used"])
}

// TestEvaluatorSameEventThreeTimes: one event delivered to three execution environments at
// once calls the model once per matching span; the deliveries that met spans in progress fail,
// and their retries, after the first has finished, call nothing.
func TestEvaluatorSameEventThreeTimes(t *testing.T) {
	s := newEvaluatorStack(t)
	s.fake.SetRules(fakemodel.Rule{Reply: fakemodel.Reply{Latency: 20 * time.Millisecond}})
	j := s.judge(t, map[string]any{"name": "every span"})
	var spans []map[string]any
	for range 30 {
		spans = append(spans, llmSpan("support", nil))
	}
	s.api.MustDo(t, "POST", "/spans", s.api.A.Key, spans)
	keys := s.takeKeys()
	require.Len(t, keys, 1)
	event := objectEvent(t, keys[0])

	emus := []*lambdaemu.Emulator{s.emulator(t), s.emulator(t), s.emulator(t)}
	failed := make([]bool, len(emus))
	var wg sync.WaitGroup
	for i, emu := range emus {
		wg.Go(func() {
			_, err := emu.Invoke(t.Context(), event)
			var fe *lambdaemu.FunctionError
			if err != nil {
				require.True(t, errors.As(err, &fe), "a function error, not %v", err)
				failed[i] = true
			}
		})
	}
	wg.Wait()
	for i, f := range failed {
		if f { // Lambda's retry, now that every delivery has ended
			_, err := emus[i].Invoke(t.Context(), event)
			require.NoError(t, err)
		}
	}
	assert.Equal(t, 30, s.fake.Count(), "one model call per span")
	assert.Len(t, s.evaluated(t, j), 30)
	judge := s.api.MustDo(t, "GET", "/projects/"+s.api.A.ProjectID+"/judges/"+j, s.api.A.Key, nil).Map(t)
	assert.Equal(t, 30.0, judge["evaluation_count"])
}

// TestEvaluatorDeadLetters: 429s and 500s are absorbed; a provider that always fails sends the
// event, after Lambda's retries, to the dead-letter queue, and replaying the queue once the
// provider is back completes it.
func TestEvaluatorDeadLetters(t *testing.T) {
	s := newEvaluatorStack(t)
	j := s.judge(t, map[string]any{"name": "every span"})
	emu := s.emulator(t)
	queue := deadletter.New(awsjson.New(awstest.Config(t), awsjson.SQS), awstest.NewQueue(t, "evaluations-dlq"))

	s.fake.SetRules(
		fakemodel.Rule{Times: 1, Reply: fakemodel.Reply{Status: 429, RetryAfter: time.Millisecond}},
		fakemodel.Rule{Times: 1, Reply: fakemodel.Reply{Status: 500}},
	)
	flaky := llmSpan("support", nil)
	s.api.MustDo(t, "POST", "/spans", s.api.A.Key, []any{flaky})
	inv := invoke(emu, queue.Send)
	for _, key := range s.takeKeys() {
		inv.Invoke(objectEvent(t, key))
	}
	stats := closeInvoker(t, inv)
	assert.Equal(t, 1, stats.Successes, "faults retried by the model client")
	assert.True(t, s.evaluated(t, j)[flaky["id"].(string)])

	s.fake.SetRules(fakemodel.Rule{Reply: fakemodel.Reply{Status: 500, RetryAfter: time.Millisecond}})
	down := llmSpan("support", nil)
	s.api.MustDo(t, "POST", "/spans", s.api.A.Key, []any{down})
	inv = invoke(emu, queue.Send)
	for _, key := range s.takeKeys() {
		inv.Invoke(objectEvent(t, key))
	}
	stats = closeInvoker(t, inv)
	assert.Equal(t, 1, stats.Failures, "given up after the retries")
	assert.Equal(t, 2, stats.Retries)
	assert.False(t, s.evaluated(t, j)[down["id"].(string)])

	s.fake.SetRules()
	res, err := queue.Replay(t.Context(), func(ctx context.Context, payload []byte) error {
		_, err := emu.Invoke(ctx, payload)
		return err
	}, deadletter.ReplayOptions{WaitTime: time.Second})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Replayed)
	assert.True(t, s.evaluated(t, j)[down["id"].(string)], "the replay completed it")
}
