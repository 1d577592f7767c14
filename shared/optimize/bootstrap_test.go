package optimize_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/optimize"
)

// demoEvaluator is a fake Evaluator: a candidate scores, on every example, the share of its
// demonstrations taken from a "good" example (0 without demonstrations). It records what it
// was asked, fails with err on call failOn (1-based), and with ErrBudget once it has answered
// budget calls (0: no budget) or at once when broke.
type demoEvaluator struct {
	good   map[string]bool
	budget int
	broke  bool
	failOn int
	err    error

	calls      int
	candidates []optimize.Candidate
	evaluated  map[string]bool // example ids
}

func (f *demoEvaluator) Evaluate(_ context.Context, c optimize.Candidate, examples []optimize.Example) ([]optimize.Score, error) {
	if f.broke || f.budget > 0 && f.calls >= f.budget {
		return nil, fmt.Errorf("task model: %w", optimize.ErrBudget)
	}
	f.calls++
	if f.calls == f.failOn {
		return nil, f.err
	}
	f.candidates = append(f.candidates, c)
	if f.evaluated == nil {
		f.evaluated = map[string]bool{}
	}
	var overall float64
	for _, d := range c.Demonstrations {
		if f.good[d.ExampleID] {
			overall += 1 / float64(len(c.Demonstrations))
		}
	}
	out := make([]optimize.Score, len(examples))
	for i, ex := range examples {
		f.evaluated[ex.ID] = true
		out[i] = optimize.Score{ExampleID: ex.ID, Overall: overall}
	}
	return out, nil
}

// bootstrapExamples are n examples that all offer a demonstration: even ones a thumbs up,
// odd ones an expected output; every third is "good" for demoEvaluator.
func bootstrapExamples(n int) ([]optimize.Example, map[string]bool) {
	up := true
	good := map[string]bool{}
	out := examplesWithIDs(n)
	for i := range out {
		out[i].Output = fmt.Sprintf("answer %d", i)
		if i%2 == 0 {
			out[i].ThumbsUp = &up
		} else {
			out[i].ExpectedOutput = fmt.Sprintf("wanted %d", i)
		}
		if i%3 == 0 {
			good[out[i].ID] = true
		}
	}
	return out, good
}

// runBootstrap steps st to its end (at most 100 steps), through JSON between steps when
// roundTrip is set, and returns the final state.
func runBootstrap(t *testing.T, st *optimize.BootstrapState, ev optimize.Evaluator, roundTrip bool) *optimize.BootstrapState {
	t.Helper()
	for range 100 {
		done, err := optimize.BootstrapStep(context.Background(), st, ev)
		require.NoError(t, err)
		if done {
			return st
		}
		if roundTrip {
			b, err := json.Marshal(st)
			require.NoError(t, err)
			st = &optimize.BootstrapState{}
			require.NoError(t, json.Unmarshal(b, st))
		}
	}
	t.Fatal("the search did not end in 100 steps")
	return nil
}

func TestBootstrapDemonstrationsComeFromTrainOnly(t *testing.T) {
	examples, good := bootstrapExamples(40)
	split := optimize.SplitExamples(examples, 3)
	train := map[string]bool{}
	for _, ex := range split.Train {
		train[ex.ID] = true
	}
	validation := map[string]bool{}
	for _, ex := range split.Validation {
		validation[ex.ID] = true
	}

	ev := &demoEvaluator{good: good}
	st := optimize.NewBootstrap(optimize.Candidate{Content: "Answer briefly."}, split.Train, split.Validation, optimize.BootstrapOptions{Seed: 3, Trials: 30})
	runBootstrap(t, st, ev, false)

	require.NotEmpty(t, ev.candidates)
	assert.Empty(t, ev.candidates[0].Demonstrations, "trial 0 is the baseline without demonstrations")
	for _, c := range ev.candidates {
		assert.Equal(t, "Answer briefly.", c.Content)
		assert.LessOrEqual(t, len(c.Demonstrations), optimize.DefaultMaxDemos)
		seen := map[string]bool{}
		for _, d := range c.Demonstrations {
			assert.True(t, train[d.ExampleID], "demonstration from %s, not a train example", d.ExampleID)
			assert.False(t, seen[d.ExampleID], "example %s shown twice", d.ExampleID)
			seen[d.ExampleID] = true
		}
	}
	assert.Equal(t, validation, ev.evaluated, "candidates are scored on the validation examples only")
	for _, d := range st.Pool {
		assert.True(t, train[d.ExampleID])
	}
}

func TestBootstrapDemonstrationsWanted(t *testing.T) {
	up, down := true, false
	train := []optimize.Example{
		{ID: "a", Input: "qa", Output: "liked", ThumbsUp: &up},
		{ID: "b", Input: "qb", Output: "disliked", ThumbsUp: &down},
		{ID: "c", Input: "qc", Output: "disliked", ThumbsUp: &down, ExpectedOutput: "wanted c"},
		{ID: "d", Input: "qd", Output: "liked", ThumbsUp: &up, ExpectedOutput: "wanted d"},
		{ID: "e", Input: "qe", Output: "judged only", Judged: map[string]optimize.Verdict{"j": {Score: 1}}},
		{ID: "f", Input: "", Output: "no input", ThumbsUp: &up},
	}
	st := optimize.NewBootstrap(optimize.Candidate{Content: "p"}, train, nil, optimize.BootstrapOptions{})
	assert.Equal(t, []optimize.Demonstration{
		{Input: "qa", Output: "liked", ExampleID: "a"},
		{Input: "qc", Output: "wanted c", ExampleID: "c"},
		{Input: "qd", Output: "wanted d", ExampleID: "d"},
	}, st.Pool)
	assert.Equal(t, optimize.DefaultMaxDemos, st.MaxDemos)
	assert.Equal(t, optimize.DefaultBootstrapTrials, st.Trials)
}

func TestBootstrapDemoCounts(t *testing.T) {
	tests := []struct {
		name     string
		train    int
		maxDemos int
		want     int // the most demonstrations a candidate may have
	}{
		{"default", 30, 0, optimize.DefaultMaxDemos},
		{"two at most", 30, 2, 2},
		{"fewer demonstrations than the limit", 3, 0, 3},
		{"one demonstration", 1, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			train, good := bootstrapExamples(tt.train)
			validation := examplesWithIDs(3)
			for i := range validation {
				validation[i].ID = "validation-" + validation[i].ID
			}
			ev := &demoEvaluator{good: good}
			st := optimize.NewBootstrap(optimize.Candidate{Content: "p"}, train, validation, optimize.BootstrapOptions{MaxDemos: tt.maxDemos, Trials: 40, Seed: 11})
			runBootstrap(t, st, ev, false)
			most := 0
			for _, c := range ev.candidates[1:] {
				assert.NotEmpty(t, c.Demonstrations, "a trial after the baseline shows demonstrations")
				most = max(most, len(c.Demonstrations))
			}
			assert.LessOrEqual(t, most, tt.want)
			assert.Equal(t, tt.want, most, "40 trials reach the largest subset")
		})
	}
}

func TestBootstrapKeepsTheBest(t *testing.T) {
	examples, good := bootstrapExamples(30)
	split := optimize.SplitExamples(examples, 5)
	ev := &demoEvaluator{good: good}
	st := runBootstrap(t, optimize.NewBootstrap(optimize.Candidate{Content: "p"}, split.Train, split.Validation, optimize.BootstrapOptions{Seed: 5}), ev, false)

	assert.Equal(t, optimize.DefaultBootstrapTrials+1, st.Done, "the baseline and the default trials")
	assert.True(t, st.Finished)
	assert.Equal(t, 0.0, st.BaselineScore)
	best := 0.0
	for _, s := range st.Scored {
		best = max(best, s)
	}
	assert.Equal(t, best, st.BestScore)
	assert.Greater(t, st.BestScore, st.BaselineScore, "some subset shows a good demonstration")
	assert.Contains(t, st.Scored, st.Best.Hash())
	assert.LessOrEqual(t, ev.calls, st.Done, "a subset drawn again is not scored again")
}

func TestBootstrapIsDeterministic(t *testing.T) {
	examples, good := bootstrapExamples(30)
	split := optimize.SplitExamples(examples, 9)
	start := func(seed int64) *optimize.BootstrapState {
		return optimize.NewBootstrap(optimize.Candidate{Content: "p"}, split.Train, split.Validation, optimize.BootstrapOptions{Seed: seed, Trials: 12})
	}

	first, second, viaJSON := &demoEvaluator{good: good}, &demoEvaluator{good: good}, &demoEvaluator{good: good}
	a := runBootstrap(t, start(9), first, false)
	b := runBootstrap(t, start(9), second, false)
	c := runBootstrap(t, start(9), viaJSON, true)
	assert.Equal(t, a, b)
	assert.Equal(t, first.candidates, second.candidates)
	assert.Equal(t, a, c, "a search checkpointed as JSON between steps ends the same")
	assert.Equal(t, first.candidates, viaJSON.candidates)

	other := &demoEvaluator{good: good}
	runBootstrap(t, start(10), other, false)
	assert.NotEqual(t, first.candidates, other.candidates, "another seed draws other subsets")
}

func TestBootstrapStopsAtBudget(t *testing.T) {
	examples, good := bootstrapExamples(30)
	split := optimize.SplitExamples(examples, 1)
	unlimited := &demoEvaluator{good: good}
	full := runBootstrap(t, optimize.NewBootstrap(optimize.Candidate{Content: "p"}, split.Train, split.Validation, optimize.BootstrapOptions{Seed: 1}), unlimited, false)
	require.Greater(t, unlimited.calls, 3)

	ev := &demoEvaluator{good: good, budget: 3}
	st := optimize.NewBootstrap(optimize.Candidate{Content: "p"}, split.Train, split.Validation, optimize.BootstrapOptions{Seed: 1})
	steps := 0
	for {
		done, err := optimize.BootstrapStep(context.Background(), st, ev)
		require.NoError(t, err, "a spent budget ends the search, it is no error")
		steps++
		if done {
			break
		}
	}
	assert.Equal(t, 3, ev.calls)
	assert.True(t, st.Finished)
	assert.Less(t, st.Done, full.Done)
	best := 0.0
	for _, c := range ev.candidates {
		s, ok := st.Scored[c.Hash()]
		require.True(t, ok)
		best = max(best, s)
	}
	assert.Equal(t, best, st.BestScore, "the best of what the budget paid for")
	assert.Equal(t, ev.candidates[:3], unlimited.candidates[:3], "the same trials as without a budget, until it is spent")

	done, err := optimize.BootstrapStep(context.Background(), st, ev)
	require.NoError(t, err)
	assert.True(t, done, "a finished search stays finished")
	assert.Equal(t, 3, ev.calls)
}

func TestBootstrapBudgetBeforeTheBaseline(t *testing.T) {
	examples, good := bootstrapExamples(10)
	split := optimize.SplitExamples(examples, 1)
	baseline := optimize.Candidate{Content: "p", Demonstrations: []optimize.Demonstration{{Input: "old", Output: "old"}}}
	st := optimize.NewBootstrap(baseline, split.Train, split.Validation, optimize.BootstrapOptions{})
	done, err := optimize.BootstrapStep(context.Background(), st, &demoEvaluator{good: good, broke: true})
	require.NoError(t, err)
	assert.True(t, done)
	assert.Equal(t, optimize.Candidate{Content: "p"}, st.Best, "the baseline's content stays the best")
	assert.Zero(t, st.Done)
}

func TestBootstrapFailedStepChangesNothing(t *testing.T) {
	examples, good := bootstrapExamples(30)
	split := optimize.SplitExamples(examples, 4)
	boom := errors.New("provider down")
	ev := &demoEvaluator{good: good, failOn: 3, err: boom}
	st := optimize.NewBootstrap(optimize.Candidate{Content: "p"}, split.Train, split.Validation, optimize.BootstrapOptions{Seed: 4})
	for range 2 {
		_, err := optimize.BootstrapStep(context.Background(), st, ev)
		require.NoError(t, err)
	}
	before, err := json.Marshal(st)
	require.NoError(t, err)

	done, err := optimize.BootstrapStep(context.Background(), st, ev)
	require.ErrorIs(t, err, boom)
	assert.False(t, done)
	after, err := json.Marshal(st)
	require.NoError(t, err)
	assert.JSONEq(t, string(before), string(after), "a failed step leaves the state as it was")

	// Tried again, the step goes on as if nothing had failed.
	final := runBootstrap(t, st, ev, false)
	clean := &demoEvaluator{good: good}
	want := runBootstrap(t, optimize.NewBootstrap(optimize.Candidate{Content: "p"}, split.Train, split.Validation, optimize.BootstrapOptions{Seed: 4}), clean, false)
	assert.Equal(t, want, final)
}

func TestBootstrapWithNothingToChoose(t *testing.T) {
	down := false
	train := []optimize.Example{{ID: "a", Input: "q", Output: "no", ThumbsUp: &down}}
	validation := []optimize.Example{{ID: "b", Input: "q2"}}
	ev := &demoEvaluator{}
	st := optimize.NewBootstrap(optimize.Candidate{Content: "p"}, train, validation, optimize.BootstrapOptions{})
	done, err := optimize.BootstrapStep(context.Background(), st, ev)
	require.NoError(t, err)
	assert.True(t, done, "no demonstration to choose: nothing to search")
	assert.Zero(t, ev.calls, "and nothing paid for")
	assert.Equal(t, optimize.Candidate{Content: "p"}, st.Best)
	assert.True(t, slices.Equal(st.Pool, nil))
}
