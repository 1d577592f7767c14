package gepa_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/optimize/gepa"
)

// contentScores scores a candidate by its content alone, the same on every example; content
// it does not list scores 0.
func contentScores(byContent map[string]float64) func(optimize.Candidate, optimize.Example) optimize.Score {
	return func(c optimize.Candidate, _ optimize.Example) optimize.Score {
		return optimize.Score{Overall: byContent[c.Content]}
	}
}

// idExamples are n examples with ids prefix0, prefix1, ...
func idExamples(prefix string, n int) []optimize.Example {
	out := make([]optimize.Example, n)
	for i := range out {
		out[i] = optimize.Example{ID: fmt.Sprintf("%s%d", prefix, i), Input: fmt.Sprintf("input %d", i)}
	}
	return out
}

func TestFirstStepScoresTheBaseline(t *testing.T) {
	train, validation := keywordExamples()
	ev := &scriptEvaluator{score: keywordScore}
	rf := &keywordReflector{}
	st := gepa.New(1, optimize.Candidate{Content: "Answer."}, train, validation, gepa.Config{})

	done, err := gepa.Step(t.Context(), st, ev, rf)
	require.NoError(t, err)

	assert.False(t, done)
	assert.Equal(t, 1, st.Iteration)
	assert.Equal(t, [][]string{{"v1", "v3", "v5", "v7"}}, ev.batches, "one call, on the whole validation set")
	assert.Zero(t, rf.calls)
	require.Len(t, st.Pool, 1)
	assert.Equal(t, gepa.Member{
		Candidate: optimize.Candidate{Content: "Answer."}, Origin: gepa.OriginSeed, Iteration: 0,
		Scores: map[string]gepa.ExampleScore{
			"v1": {Overall: 1.0 / 2, Intents: map[string]float64{"tone": 0.5}},
			"v3": {Overall: 1.0 / 2, Intents: map[string]float64{"tone": 0.5}},
			"v5": {Overall: 1.0 / 2, Intents: map[string]float64{"tone": 0.5}},
			"v7": {Overall: 1.0 / 3, Intents: map[string]float64{"tone": 0.5}},
		},
	}, st.Pool[0])
	assert.Equal(t, gepa.Config{MinibatchSize: gepa.DefaultMinibatchSize, MaxMerges: gepa.DefaultMaxMerges,
		MergeSubsample: gepa.DefaultMergeSubsample, MaxIterations: gepa.DefaultMaxIterations}, st.Config)
}

func TestAcceptanceIsStrictImprovementOnTheMinibatch(t *testing.T) {
	tests := []struct {
		name string
		// child is the child's score on each training example; the parent scores 0.5 on all.
		child    func(id string) float64
		accepted bool
	}{
		{name: "higher on every example", child: func(string) float64 { return 0.75 }, accepted: true},
		{name: "higher on one, equal on the others", child: func(id string) float64 { return map[string]float64{"t0": 0.5, "t1": 0.75, "t2": 0.5}[id] }, accepted: true},
		{name: "equal", child: func(string) float64 { return 0.5 }},
		{name: "higher on one, lower on another, the same sum", child: func(id string) float64 { return map[string]float64{"t0": 0.75, "t1": 0.25, "t2": 0.5}[id] }},
		{name: "lower", child: func(string) float64 { return 0.25 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &scriptEvaluator{score: func(c optimize.Candidate, ex optimize.Example) optimize.Score {
				if c.Content == "child" && ex.ID[0] == 't' {
					return optimize.Score{Overall: tt.child(ex.ID)}
				}
				return optimize.Score{Overall: 0.5}
			}}
			rf := reflectFunc(func(string, []optimize.Reflection) (string, error) { return "child", nil })
			st := gepa.New(1, optimize.Candidate{Content: "base"}, idExamples("t", 3), idExamples("v", 2), gepa.Config{})

			for range 2 {
				_, err := gepa.Step(t.Context(), st, ev, rf)
				require.NoError(t, err)
			}

			assert.Equal(t, 2, st.Iteration)
			assert.Equal(t, 1, st.Counters.Mutations)
			if !tt.accepted {
				assert.Len(t, st.Pool, 1)
				assert.Equal(t, 1, st.Counters.Rejected)
				assert.Zero(t, st.Counters.Accepted)
				assert.False(t, st.MergeDue)
				assert.Equal(t, 3, ev.calls, "baseline, parent and child: a rejected child is not scored on validation")
				return
			}
			require.Len(t, st.Pool, 2)
			assert.Equal(t, 1, st.Counters.Accepted)
			assert.Zero(t, st.Counters.Rejected)
			assert.True(t, st.MergeDue)
			assert.Equal(t, 4, ev.calls)
			assert.Equal(t, []string{"v0", "v1"}, ev.batches[3], "an accepted child is scored on the whole validation set")
			child := st.Pool[1]
			assert.Equal(t, optimize.Candidate{Content: "child"}, child.Candidate)
			assert.Equal(t, gepa.OriginMutation, child.Origin)
			assert.Equal(t, []int{0}, child.Parents)
			assert.Equal(t, 1, child.Iteration)
			assert.Equal(t, map[string]gepa.ExampleScore{"v0": {Overall: 0.5}, "v1": {Overall: 0.5}}, child.Scores)
		})
	}
}

func TestMinibatchesWalkTheTrainingExamples(t *testing.T) {
	tests := []struct {
		name       string
		train      int
		size       int
		wantSize   int
		perEpoch   int
		iterations int
	}{
		{name: "seven examples, three at a time", train: 7, size: 3, wantSize: 3, perEpoch: 3, iterations: 9},
		{name: "six examples, three at a time", train: 6, size: 3, wantSize: 3, perEpoch: 2, iterations: 6},
		{name: "fewer examples than a minibatch", train: 2, size: 3, wantSize: 2, perEpoch: 1, iterations: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			train := idExamples("t", tt.train)
			ev := &scriptEvaluator{score: keywordScore}
			rf := &keywordReflector{}
			// No keyword is wanted: every score is 1 and no reflection is asked for. The
			// parents' evaluations are the minibatches.
			st := gepa.New(5, optimize.Candidate{Content: "base"}, train, idExamples("v", 2), gepa.Config{MinibatchSize: tt.size})
			for range tt.iterations + 1 {
				_, err := gepa.Step(t.Context(), st, ev, rf)
				require.NoError(t, err)
			}
			require.Len(t, ev.batches, tt.iterations+1)
			assert.Equal(t, tt.iterations, st.Counters.Perfect)
			assert.Zero(t, rf.calls, "a parent perfect on its minibatch is not reflected on")

			batches := ev.batches[1:]
			for i := 0; i < len(batches); i += tt.perEpoch {
				var epoch []string
				for _, b := range batches[i : i+tt.perEpoch] {
					assert.Len(t, b, tt.wantSize)
					assert.Len(t, unique(b), len(b), "a minibatch holds an example once")
					epoch = append(epoch, b...)
				}
				assert.Len(t, unique(epoch), tt.train, "an epoch reflects on every training example")
			}
		})
	}
}

func unique(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

func TestReflectionsShowTheParentOnTheMinibatch(t *testing.T) {
	train, validation := keywordExamples()
	ev := &scriptEvaluator{score: keywordScore}
	rf := &keywordReflector{}
	st := gepa.New(2, optimize.Candidate{Content: "Answer."}, train, validation, gepa.Config{MaxIterations: 10})
	run(t, st, ev, rf, false)

	require.NotEmpty(t, rf.shown)
	trainIDs := map[string]bool{}
	for _, ex := range train {
		trainIDs[ex.ID] = true
	}
	for _, scored := range rf.shown {
		assert.Len(t, scored, gepa.DefaultMinibatchSize)
		for _, s := range scored {
			assert.True(t, trainIDs[s.Example.ID], "reflections are on training examples only: %s", s.Example.ID)
			assert.Equal(t, s.Example.ID, s.Score.ExampleID)
			assert.Equal(t, "answer to "+s.Example.Input, s.Score.Output)
		}
	}
}

func TestUnusableProposalsStillCount(t *testing.T) {
	scores := contentScores(map[string]float64{"base": 0.25, "base x": 0.5})
	tests := []struct {
		name string
		// reflect answers the call-th reflection (1-based) on content.
		reflect        func(call int, content string) string
		wantAccepted   int
		wantUnusable   int
		wantIterations int
	}{
		{
			name:    "the parent's content",
			reflect: func(_ int, content string) string { return content },
			// The baseline takes 1 call of 10, each later iteration 1 (the parent's minibatch).
			wantUnusable: 9, wantIterations: 10,
		},
		{
			name:         "blank content",
			reflect:      func(int, string) string { return " \n" },
			wantUnusable: 9, wantIterations: 10,
		},
		{
			name: "a candidate already in the pool",
			reflect: func(call int, content string) string {
				switch {
				case call == 1:
					return content + " x"
				case content == "base":
					return "base x"
				default:
					return "base"
				}
			},
			// The baseline 1 call, the accepted child 3, each later iteration 1.
			wantAccepted: 1, wantUnusable: 6, wantIterations: 8,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &scriptEvaluator{score: scores, budget: 10}
			calls := 0
			rf := reflectFunc(func(content string, _ []optimize.Reflection) (string, error) {
				calls++
				return tt.reflect(calls, content), nil
			})
			st := gepa.New(1, optimize.Candidate{Content: "base"}, idExamples("t", 3), idExamples("v", 2), gepa.Config{})
			st = run(t, st, ev, rf, false)

			assert.Equal(t, gepa.StopBudget, st.Stop)
			assert.Equal(t, 10, ev.calls)
			assert.Equal(t, tt.wantIterations, st.Iteration)
			assert.Equal(t, tt.wantUnusable, st.Counters.Unusable)
			assert.Equal(t, tt.wantAccepted, st.Counters.Accepted)
			assert.Equal(t, tt.wantAccepted+tt.wantUnusable, calls)
			assert.Len(t, st.Pool, 1+tt.wantAccepted)
		})
	}
}

func TestBudgetEndsTheSearch(t *testing.T) {
	train, validation := keywordExamples()
	tests := []struct {
		name      string
		evBudget  int
		rfBudget  int
		wantCalls int // the evaluator's
	}{
		{name: "the evaluator's", evBudget: 25, wantCalls: 25},
		{name: "the evaluator's, before the baseline is scored", evBudget: -1},
		{name: "the reflector's", rfBudget: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &scriptEvaluator{score: keywordScore, budget: tt.evBudget}
			if tt.evBudget < 0 {
				ev.budget, ev.calls = 1, 1 // broke from the start
			}
			rf := &keywordReflector{budget: tt.rfBudget}
			st := gepa.New(3, optimize.Candidate{Content: "Answer."}, train, validation, gepa.Config{})
			st = run(t, st, ev, rf, false)

			assert.True(t, st.Finished)
			assert.Equal(t, gepa.StopBudget, st.Stop)
			if tt.wantCalls > 0 {
				assert.Equal(t, tt.wantCalls, ev.calls)
			}
			if tt.rfBudget > 0 {
				assert.Equal(t, tt.rfBudget, rf.calls)
			}
			for i, m := range st.Pool {
				assert.Len(t, m.Scores, len(validation), "member %d: an iteration the budget interrupted leaves nothing half scored", i)
			}
			before := mustJSON(t, st)
			calls := ev.calls
			done, err := gepa.Step(t.Context(), st, ev, rf)
			require.NoError(t, err)
			assert.True(t, done)
			assert.Equal(t, calls, ev.calls, "a finished search makes no call")
			assert.JSONEq(t, before, mustJSON(t, st))
		})
	}
}

func TestBestIsFalseWhenTheBudgetEndedTheSearchBeforeTheBaseline(t *testing.T) {
	train, validation := keywordExamples()
	ev := &scriptEvaluator{score: keywordScore, budget: 1, calls: 1}
	st := run(t, gepa.New(3, optimize.Candidate{Content: "Answer."}, train, validation, gepa.Config{}), ev, &keywordReflector{}, false)

	assert.Empty(t, st.Pool)
	_, ok := gepa.Best(st)
	assert.False(t, ok)
}

func TestResumedSearchMakesTheUninterruptedOnesChoices(t *testing.T) {
	train, validation := keywordExamples()
	for _, seed := range []int64{1, 2, 3, 4} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			newRun := func() (*gepa.State, *scriptEvaluator, *keywordReflector) {
				return gepa.New(seed, optimize.Candidate{Content: "Answer."}, train, validation, gepa.Config{}),
					&scriptEvaluator{score: keywordScore, budget: 80}, &keywordReflector{}
			}
			st1, ev1, rf1 := newRun()
			st1 = run(t, st1, ev1, rf1, false)
			st2, ev2, rf2 := newRun()
			st2 = run(t, st2, ev2, rf2, true)

			require.Equal(t, gepa.StopBudget, st1.Stop)
			assert.Greater(t, st1.Counters.Accepted, 0, "the fixture accepts some children")
			assert.Greater(t, st1.Counters.Rejected+st1.Counters.Unusable, 0, "the fixture turns some away")
			assert.Equal(t, mustJSON(t, st1.Pool), mustJSON(t, st2.Pool), "candidate histories")
			assert.Equal(t, mustJSON(t, st1), mustJSON(t, st2), "whole states")
			assert.Equal(t, ev1.batches, ev2.batches, "the same evaluations, in the same order")
			assert.Equal(t, ev1.calls, ev2.calls)
			assert.Equal(t, rf1.calls, rf2.calls)
		})
	}
}

func TestFailedStepLeavesTheStateUnchanged(t *testing.T) {
	train, validation := keywordExamples()
	cfg := gepa.Config{MaxIterations: 15}
	want := run(t, gepa.New(4, optimize.Candidate{Content: "Answer."}, train, validation, cfg),
		&scriptEvaluator{score: keywordScore}, &keywordReflector{}, false)
	require.Equal(t, gepa.StopIterations, want.Stop)
	require.Equal(t, 16, want.Iteration, "the baseline's iteration and 15 more")

	boom := errors.New("provider down")
	for _, failOn := range []int{1, 2, 3, 4, 7, 12} {
		t.Run(fmt.Sprint("evaluation ", failOn), func(t *testing.T) {
			ev := &scriptEvaluator{score: keywordScore, failOn: failOn, err: boom}
			st := gepa.New(4, optimize.Candidate{Content: "Answer."}, train, validation, cfg)
			failed := false
			for range 100 {
				before := mustJSON(t, st)
				done, err := gepa.Step(t.Context(), st, ev, &keywordReflector{})
				if err != nil {
					require.ErrorIs(t, err, boom)
					assert.False(t, done)
					assert.Equal(t, before, mustJSON(t, st), "a failed step changes nothing")
					failed = true
					continue
				}
				if done {
					break
				}
			}
			assert.True(t, failed)
			assert.Equal(t, mustJSON(t, want), mustJSON(t, st), "the retried step makes the same choices")
		})
	}
}

func TestNothingToSearch(t *testing.T) {
	tests := []struct {
		name              string
		train, validation []optimize.Example
	}{
		{name: "no training example", validation: idExamples("v", 2)},
		{name: "no validation example", train: idExamples("t", 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &scriptEvaluator{score: keywordScore}
			st := gepa.New(1, optimize.Candidate{Content: "base"}, tt.train, tt.validation, gepa.Config{})

			done, err := gepa.Step(t.Context(), st, ev, &keywordReflector{})
			require.NoError(t, err)

			assert.True(t, done)
			assert.Equal(t, gepa.StopNoData, st.Stop)
			assert.Zero(t, ev.calls)
			_, ok := gepa.Best(st)
			assert.False(t, ok)
		})
	}
}

func TestNewKeepsItsOwnExamples(t *testing.T) {
	train, validation := idExamples("t", 2), idExamples("v", 2)
	st := gepa.New(1, optimize.Candidate{Content: "base"}, train, validation, gepa.Config{MaxMerges: -1})
	train[0].ID, validation[0].ID = "changed", "changed"

	assert.Equal(t, "t0", st.Train[0].ID)
	assert.Equal(t, "v0", st.Validation[0].ID)
	assert.Equal(t, -1, st.Config.MaxMerges, "a negative MaxMerges stays: no merges")
}
