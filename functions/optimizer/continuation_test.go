package optimizer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
	"github.com/plumehq/plume/shared/llm/pricetable"
	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/optimize/gepa"
	"github.com/plumehq/plume/shared/pricing"
)

// newStackWith is newStack with the in-process worker changed by change.
func newStackWith(t *testing.T, change func(*optimizer.Worker)) *stack {
	t.Helper()
	fake := fakemodeltest.Start(t, scriptedModels())
	models := llm.New(llm.Config{
		Providers:  map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: fake.OpenAIBaseURL(), APIKey: "sk-test"}},
		JudgeModel: "openai/gpt-4o-mini",
	}, llm.Options{Pricer: pricetable.New(pricing.Default()), BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond})
	api := apitest.New(t, apitest.Options{Models: models, Optimizer: change})
	return &stack{api: api, fake: fake, pid: api.A.ProjectID}
}

// seedDemos makes prompt "support" with a linked judge and n completions with the same ids in
// every stack (a run's split depends on the ids): people failed them, and wrote the expected
// output, which dspy_bootstrap takes demonstrations from.
func (s *stack) seedDemos(t *testing.T, n int) {
	t.Helper()
	versionID := s.api.EnsurePrompt(t, s.api.A, "support", baselinePrompt)
	judgeID := s.api.MustDo(t, "POST", "/projects/"+s.pid+"/judges", s.api.A.Key, map[string]any{
		"name": "cites policy", "template": "Does the answer cite the policy that applies?\n{{input}}\n{{output}}",
	}).Map(t)["id"].(string)
	s.api.MustDo(t, "PUT", "/projects/"+s.pid+"/prompts/support/judges/"+judgeID, s.api.A.Key, nil)
	var spans []any
	for i := range n {
		id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "completion %d", i)).String()
		sp := apitest.LLMSpan(id, uuid.NewString(), "", "support", versionID, fmt.Sprintf("Can I return order %d?", i), "Sure, no problem.", time.Now().Add(-time.Hour))
		spans = append(spans, sp)
	}
	s.api.MustDo(t, "POST", "/spans", s.api.A.Key, spans)
	for _, sp := range spans {
		id := sp.(map[string]any)["id"].(string)
		s.api.MustDo(t, "POST", "/v1/prompts/support/completions/"+id+"/feedback", s.api.A.Key, map[string]any{
			"thumbs_up": false, "reason": "It must cite the refund policy.",
			"expected_output": "Per the refund policy, you can return it within 30 days.",
		})
	}
}

// bootstrapRun runs a dspy_bootstrap run with seed 11 on s and returns it, ended.
func (s *stack) bootstrapRun(t *testing.T) map[string]any {
	t.Helper()
	s.seedDemos(t, 20)
	run := s.await(t, s.start(t, map[string]any{"optimizer_type": "dspy_bootstrap", "config": map[string]any{"seed": 11}}))
	require.Equal(t, "succeeded", run["status"], "error: %v", run["error"])
	return run
}

// TestContinuation: a run handed on to a new invocation after every 2 steps (5 invocations)
// ends as the uninterrupted run does, with the same model calls reaching the provider; a worker
// that dies mid-step resumes from its last checkpoint without calling the provider for what
// it had asked already.
func TestContinuation(t *testing.T) {
	whole := newStack(t)
	want := whole.bootstrapRun(t)
	assert.Equal(t, "publish", want["recommendation"], "the demonstrations teach the model to cite the policy: %v", want["metrics"])

	split := newStackWith(t, func(w *optimizer.Worker) { w.YieldAfter(2) })
	got := split.bootstrapRun(t)
	assert.GreaterOrEqual(t, split.api.Optimizations.Stats().Invocations, 3, "the run spans invocations")
	assert.Equal(t, want["candidate"].(map[string]any)["hash"], got["candidate"].(map[string]any)["hash"])
	assert.Equal(t, want["progress"], got["progress"], "the same calls, cost and iterations")
	assert.Equal(t, want["metrics"].(map[string]any)["holdout_ids"], got["metrics"].(map[string]any)["holdout_ids"])
	assert.Equal(t, want["metrics"].(map[string]any)["candidate"].(map[string]any)["overall"], got["metrics"].(map[string]any)["candidate"].(map[string]any)["overall"])
	assert.Equal(t, whole.fake.Count(), split.fake.Count(), "the same model calls reached the provider")

	var made atomic.Int64
	crashed := newStackWith(t, func(w *optimizer.Worker) {
		w.ScoreOneAtATime().WrapModels(func(next run.Caller) run.Caller { return &dying{next: next, after: 30, made: &made} })
	})
	got = crashed.bootstrapRun(t)
	assert.Equal(t, want["candidate"].(map[string]any)["hash"], got["candidate"].(map[string]any)["hash"])
	assert.Equal(t, want["progress"], got["progress"])
	assert.Equal(t, whole.fake.Count(), crashed.fake.Count(), "the resumed worker replayed its calls from the cache")
	assert.GreaterOrEqual(t, crashed.api.Optimizations.Stats().Retries, 1, "the worker died once")
}

// dying is a model client whose worker dies (the invocation fails) once, after a number of
// calls, in the middle of a step: between two calls, since the worker makes them one at a
// time.
type dying struct {
	next  run.Caller
	after int64
	made  *atomic.Int64
}

var errWorkerDied = errors.New("the worker died")

func (d *dying) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if d.made.Add(1) == d.after+1 {
		return llm.Response{}, errWorkerDied
	}
	return d.next.Complete(ctx, req)
}

// TestBudgetIsNeverExceeded: a run spends at most its max_model_calls, the comparison on the
// holdout included, and ends with what it found when the budget runs out mid-search.
func TestBudgetIsNeverExceeded(t *testing.T) {
	s := newStack(t)
	s.seedDemos(t, 20) // 4 holdout examples, 1 intent: the comparison costs 16 calls
	const budget = 30
	run := s.await(t, s.start(t, map[string]any{"optimizer_type": "dspy_bootstrap",
		"config": map[string]any{"seed": 3, "budget": map[string]any{"max_model_calls": budget}}}))
	require.Equal(t, "succeeded", run["status"], "error: %v", run["error"])
	calls := run["progress"].(map[string]any)["model_calls"].(float64)
	assert.LessOrEqual(t, calls, float64(budget))
	assert.Greater(t, calls, float64(budget-8), "the search spent what the comparison left it, trial by trial")
	assert.LessOrEqual(t, s.fake.Count(), budget, "no call beyond the budget reached the provider")

	res := s.api.Do(t, "POST", "/projects/"+s.pid+"/prompts/support/optimization-runs", s.api.A.Key,
		map[string]any{"optimizer_type": "dspy_bootstrap", "config": map[string]any{"budget": map[string]any{"max_model_calls": 10}}})
	require.Equal(t, 200, res.Status, "%s", res.Body)
	small := s.await(t, res.Map(t)["id"].(string))
	assert.Equal(t, "failed", small["status"], "a budget that cannot pay for the comparison")
	assert.Contains(t, small["error"], "does not cover the comparison")
}

// TestCancelWithinOneModelCall: a run cancelled while its worker calls the model stops before
// its next call.
func TestCancelWithinOneModelCall(t *testing.T) {
	var (
		s       *stack
		calls   atomic.Int64
		started string
		ready   = make(chan struct{}) // closed once started is set
	)
	s = newStackWith(t, func(w *optimizer.Worker) {
		w.ScoreOneAtATime().WrapModels(func(next run.Caller) run.Caller {
			return callerFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
				if calls.Add(1) == 5 { // a person cancels while the 5th call is on its way
					<-ready
					s.api.MustDo(t, "POST", "/projects/"+s.pid+"/optimization-runs/"+started+":cancel", s.api.A.Key, nil)
				}
				return next.Complete(ctx, req)
			})
		})
	})
	s.seedDemos(t, 20)
	started = s.start(t, map[string]any{"optimizer_type": "dspy_bootstrap", "config": map[string]any{"seed": 5}})
	close(ready)
	run := s.await(t, started)
	assert.Equal(t, "cancelled", run["status"])
	// The run reads cancelled as soon as the cancel is stored, while the 5th call may still be
	// on its way: count the provider's calls once the worker is done with the run.
	require.Eventually(t, func() bool {
		st := s.api.Optimizations.Stats()
		return st.Invocations > 0 && st.Successes+st.Failures == st.Invocations
	}, time.Minute, 10*time.Millisecond, "the worker never finished the run")
	assert.Equal(t, 5, s.fake.Count(), "the call under way ends; no other starts")
	assert.Nil(t, run["candidate"])
}

// callerFunc is a run.Caller made of a function.
type callerFunc func(ctx context.Context, req llm.Request) (llm.Response, error)

func (f callerFunc) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	return f(ctx, req)
}

// member is what the history of a GEPA run keeps of a candidate: the same in every stack (the
// judges' ids, which differ, are left out).
type member struct {
	Content   string
	Origin    string
	Parents   []int
	Iteration int
}

// gepaHistory runs a dspy_gepa run with seed 13 and a budget of 150 calls on s and returns it,
// ended, with the candidate history of its last checkpoint.
func (s *stack) gepaHistory(t *testing.T) (map[string]any, []member) {
	t.Helper()
	s.seedDemos(t, 20)
	id := s.start(t, map[string]any{"optimizer_type": "dspy_gepa", "config": map[string]any{"seed": 13, "budget": map[string]any{"max_model_calls": 150}}})
	run := s.await(t, id)
	require.Equal(t, "succeeded", run["status"], "error: %v", run["error"])
	r, err := s.api.Env.Optimizations().Run(context.Background(), s.pid, id)
	require.NoError(t, err)
	require.NotEmpty(t, r.Checkpoint, "a GEPA run checkpoints")
	body, err := s.api.Blobs.Get(context.Background(), r.Checkpoint)
	require.NoError(t, err)
	var st gepa.State
	require.NoError(t, json.Unmarshal(body, &st))
	var history []member
	for _, m := range st.Pool {
		history = append(history, member{m.Candidate.Content, m.Origin, m.Parents, m.Iteration})
	}
	return run, history
}

// TestGEPAContinuation: a GEPA run handed on every 3 steps, and one whose worker dies mid-step,
// make the uninterrupted run's candidates in the same order from the same parents, with the
// same model calls at the provider.
func TestGEPAContinuation(t *testing.T) {
	whole := newStack(t)
	want, wantHistory := whole.gepaHistory(t)
	require.GreaterOrEqual(t, len(wantHistory), 2, "the search made candidates")

	split := newStackWith(t, func(w *optimizer.Worker) { w.YieldAfter(3) })
	got, gotHistory := split.gepaHistory(t)
	assert.GreaterOrEqual(t, split.api.Optimizations.Stats().Invocations, 3, "the run spans invocations")
	assert.Equal(t, wantHistory, gotHistory)
	assert.Equal(t, want["progress"], got["progress"])
	assert.Equal(t, want["candidate"].(map[string]any)["hash"], got["candidate"].(map[string]any)["hash"])
	assert.Equal(t, whole.fake.Count(), split.fake.Count())

	var made atomic.Int64
	crashed := newStackWith(t, func(w *optimizer.Worker) {
		w.ScoreOneAtATime().WrapModels(func(next run.Caller) run.Caller { return &dying{next: next, after: 25, made: &made} })
	})
	got, gotHistory = crashed.gepaHistory(t)
	assert.Equal(t, wantHistory, gotHistory, "no candidate made twice")
	assert.Equal(t, want["progress"], got["progress"])
	assert.Equal(t, whole.fake.Count(), crashed.fake.Count(), "the resumed worker replayed its calls from the cache")
	assert.GreaterOrEqual(t, crashed.api.Optimizations.Stats().Retries, 1, "the worker died once")
	assert.LessOrEqual(t, got["progress"].(map[string]any)["model_calls"].(float64), 150.0, "within the budget")
}

// TestStaleRunIsResumed: a run left running by a worker that is gone (its message lost) is
// queued again by the worker's schedule and ends; one resumed too often fails with the reason.
func TestStaleRunIsResumed(t *testing.T) {
	s := newStack(t)
	s.seed(t, 10)
	ctx := context.Background()
	store := s.api.Env.Optimizations()
	judges, err := s.api.Env.JudgeStore().Judges(ctx, s.pid)
	require.NoError(t, err)
	old := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	orphan := func(resumes int) string {
		r, err := store.CreateRun(ctx, optimize.Run{
			ID: uuid.Must(uuid.NewV7()).String(), ProjectID: s.pid, Target: optimize.Target{Kind: optimize.TargetPrompt, Slug: "support"},
			Requested: optimize.TypeQuickRefine, Status: optimize.StatusRunning, Resumes: resumes,
			Config:   optimize.Config{Intents: []optimize.Intent{{JudgeID: judges[0].ID, Weight: 1}}, Seed: 7},
			Baseline: optimize.Baseline{Content: baselinePrompt}, CreatedAt: old, StartedAt: &old, UpdatedAt: old,
		})
		require.NoError(t, err)
		return r.ID
	}
	lost, hopeless := orphan(0), orphan(optimizer.MaxResumes)
	fresh := s.start(t, map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{"seed": 7}})
	s.await(t, fresh)

	require.NoError(t, s.api.Optimizations.Send(ctx, []byte(`{"source":"aws.events","detail-type":"Scheduled Event","detail":{}}`)))
	run := s.await(t, lost)
	assert.Equal(t, "succeeded", run["status"], "error: %v", run["error"])
	assert.Equal(t, improvedPrompt, run["candidate"].(map[string]any)["content"])
	r, err := store.Run(ctx, s.pid, lost)
	require.NoError(t, err)
	assert.Equal(t, 1, r.Resumes)
	run = s.await(t, hopeless)
	assert.Equal(t, "failed", run["status"])
	assert.Contains(t, run["error"], "stopped")
}
