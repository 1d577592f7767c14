package gepa_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/optimize/gepa"
)

var (
	demos0 = []optimize.Demonstration{{Input: "q0", Output: "a0", ExampleID: "t0"}}
	demos1 = []optimize.Demonstration{{Input: "q1", Output: "a1", ExampleID: "t1"}}
)

// mergeState is a search due to merge: the seed (c0, demos0) scores 0.25 everywhere; member 1
// changed its content (c1, demos0) and is best on v0..v2 (1; 0.5 on v3..v5); member 2 changed
// its demonstrations (c0, demos1) and is best on v3..v5 (1; 0.25 on v0..v2). A merge of 1 and
// 2 through the seed takes c1 from 1 and demos1 from 2. The subsample is 2 examples, one where
// each parent is better, so the parents' sums on it are 1.5 and 1.25.
func mergeState() *gepa.State {
	st := &gepa.State{Seed: 7, Iteration: 3, MergeDue: true,
		Config: gepa.Config{MinibatchSize: 3, MaxMerges: 5, MergeSubsample: 2, MaxIterations: 50}}
	for i := range 3 {
		st.Train = append(st.Train, optimize.Example{ID: fmt.Sprintf("t%d", i)})
	}
	for i := range 6 {
		st.Validation = append(st.Validation, optimize.Example{ID: fmt.Sprintf("v%d", i)})
	}
	scores := func(low, high float64) map[string]gepa.ExampleScore {
		out := map[string]gepa.ExampleScore{}
		for i, ex := range st.Validation {
			out[ex.ID] = gepa.ExampleScore{Overall: low}
			if i < 3 {
				out[ex.ID] = gepa.ExampleScore{Overall: high}
			}
		}
		return out
	}
	st.Baseline = optimize.Candidate{Content: "c0", Demonstrations: demos0}
	st.Pool = []gepa.Member{
		{Candidate: st.Baseline, Origin: gepa.OriginSeed, Scores: scores(0.25, 0.25)},
		{Candidate: optimize.Candidate{Content: "c1", Demonstrations: demos0}, Origin: gepa.OriginMutation, Parents: []int{0}, Iteration: 1, Scores: scores(0.5, 1)},
		{Candidate: optimize.Candidate{Content: "c0", Demonstrations: demos1}, Origin: gepa.OriginMutation, Parents: []int{0}, Iteration: 2, Scores: scores(1, 0.25)},
	}
	st.Counters = gepa.Counters{Mutations: 2, Accepted: 2}
	return st
}

// merged is the candidate a merge of mergeState's members 1 and 2 makes.
var merged = optimize.Candidate{Content: "c1", Demonstrations: demos1}

// mergeEvaluator scores the merged candidate child everywhere and anything else 0.
func mergeEvaluator(child float64) *scriptEvaluator {
	return &scriptEvaluator{score: func(c optimize.Candidate, _ optimize.Example) optimize.Score {
		if c.Hash() == merged.Hash() {
			return optimize.Score{Overall: child}
		}
		return optimize.Score{}
	}}
}

// unchanged is a Reflector that answers the content it is given: a mutation changes nothing.
var unchanged = reflectFunc(func(content string, _ []optimize.Reflection) (string, error) { return content, nil })

func TestMergeIsKeptOnlyWhenAtLeastAsGoodAsBothParents(t *testing.T) {
	tests := []struct {
		name  string
		child float64 // the merged candidate's score on every example
		kept  bool
	}{
		{name: "better than both", child: 1, kept: true},
		{name: "as good as the better parent", child: 0.75, kept: true},
		{name: "as good as one parent only", child: 0.625},
		{name: "worse than both", child: 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mergeState()
			ev := mergeEvaluator(tt.child)

			done, err := gepa.Step(t.Context(), st, ev, unchanged)
			require.NoError(t, err)

			assert.False(t, done)
			assert.Equal(t, 4, st.Iteration)
			assert.False(t, st.MergeDue)
			assert.Equal(t, 2, st.Counters.Mutations, "the iteration was spent on the merge")
			assert.Equal(t, 1, st.Counters.MergesTried)
			require.Len(t, ev.batches, map[bool]int{true: 2, false: 1}[tt.kept])
			assert.Len(t, ev.batches[0], 2, "the subsample")
			assert.Equal(t, []gepa.Merge{{Parents: [2]int{1, 2}, Ancestor: 0, Iteration: 3, Kept: tt.kept}}, st.Merges)
			if !tt.kept {
				assert.Len(t, st.Pool, 3)
				assert.Zero(t, st.Counters.MergesKept)
				return
			}
			assert.Len(t, ev.batches[1], 4, "the rest of the validation examples; the subsample is not paid twice")
			assert.Equal(t, 1, st.Counters.MergesKept)
			require.Len(t, st.Pool, 4)
			m := st.Pool[3]
			assert.Equal(t, merged, m.Candidate)
			assert.Equal(t, gepa.OriginMerge, m.Origin)
			assert.Equal(t, []int{1, 2}, m.Parents)
			assert.Equal(t, 3, m.Iteration)
			assert.Len(t, m.Scores, 6)
			for id, s := range m.Scores {
				assert.Equal(t, tt.child, s.Overall, id)
			}
		})
	}
}

func TestMergeNeedsACommonAncestorAndSomethingToCombine(t *testing.T) {
	tests := []struct {
		name   string
		change func(st *gepa.State)
	}{
		{name: "no common ancestor", change: func(st *gepa.State) {
			st.Pool[1].Parents, st.Pool[1].Origin = nil, gepa.OriginSeed
		}},
		{name: "one descends from the other", change: func(st *gepa.State) {
			st.Pool[2].Parents = []int{1}
		}},
		{name: "both changed the same component only", change: func(st *gepa.State) {
			st.Pool[2].Candidate = optimize.Candidate{Content: "c2", Demonstrations: demos0}
		}},
		{name: "the merge would be a member already", change: func(st *gepa.State) {
			st.Pool = append(st.Pool, gepa.Member{Candidate: merged, Origin: gepa.OriginMutation, Parents: []int{2},
				Iteration: 2, Scores: st.Pool[0].Scores})
		}},
		{name: "the ancestor scores higher than a parent", change: func(st *gepa.State) {
			for id, s := range st.Pool[0].Scores {
				s.Overall = 0.7 // mean 0.7, above member 2's 0.625; still best nowhere
				st.Pool[0].Scores[id] = s
			}
		}},
		{name: "the pair was tried before", change: func(st *gepa.State) {
			st.Merges = []gepa.Merge{{Parents: [2]int{1, 2}, Iteration: 2}}
			st.Counters.MergesTried = 1
		}},
		{name: "MaxMerges merges were tried", change: func(st *gepa.State) {
			st.Config.MaxMerges, st.Counters.MergesTried = 1, 1
		}},
		{name: "merges are off", change: func(st *gepa.State) {
			st.Config.MaxMerges = -1
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mergeState()
			tt.change(st)
			merges, pool := len(st.Merges), len(st.Pool)
			ev := mergeEvaluator(1)

			_, err := gepa.Step(t.Context(), st, ev, unchanged)
			require.NoError(t, err)

			assert.Len(t, st.Merges, merges, "no merge tried")
			assert.Len(t, st.Pool, pool)
			assert.False(t, st.MergeDue)
			assert.Equal(t, 3, st.Counters.Mutations, "the iteration made a mutation instead")
			assert.Equal(t, 1, st.Counters.Unusable)
		})
	}
}

func TestMergeNeverTriesAPairTwice(t *testing.T) {
	st := mergeState()
	ev := mergeEvaluator(0.25)

	_, err := gepa.Step(t.Context(), st, ev, unchanged)
	require.NoError(t, err)
	require.Equal(t, []gepa.Merge{{Parents: [2]int{1, 2}, Ancestor: 0, Iteration: 3}}, st.Merges)

	st.MergeDue = true // as another accepted mutation would
	_, err = gepa.Step(t.Context(), st, ev, unchanged)
	require.NoError(t, err)

	assert.Len(t, st.Merges, 1)
	assert.Equal(t, 1, st.Counters.MergesTried)
	assert.Equal(t, 3, st.Counters.Mutations, "the second iteration mutated")
}

func TestMergeBudgetEndsTheSearch(t *testing.T) {
	st := mergeState()
	ev := mergeEvaluator(1)
	ev.budget = 1 // the subsample, not the rest

	done, err := gepa.Step(t.Context(), st, ev, unchanged)
	require.NoError(t, err)

	assert.True(t, done)
	assert.Equal(t, gepa.StopBudget, st.Stop)
	assert.Len(t, st.Pool, 3, "a merge the budget interrupted is not kept half scored")
	assert.Empty(t, st.Merges)
	assert.Equal(t, 3, st.Iteration)
}

// TestResumedSearchWithMergesMakesTheSameChoices runs the keyword search from a pool where one
// branch varies the demonstrations, so that merges happen, and checks that resuming from JSON
// after every step changes nothing.
func TestResumedSearchWithMergesMakesTheSameChoices(t *testing.T) {
	train, validation := keywordExamples()
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			start := func() (*gepa.State, *scriptEvaluator, *keywordReflector) {
				st := gepa.New(seed, optimize.Candidate{Content: "Answer."}, train, validation, gepa.Config{})
				ev := &scriptEvaluator{score: keywordScore, budget: 120}
				_, err := gepa.Step(t.Context(), st, ev, &keywordReflector{})
				require.NoError(t, err)
				// A branch of the seed that shows a demonstration saying "cite json": some
				// examples want those words and others avoid them, so that both branches stay
				// on the front.
				branch := optimize.Candidate{Content: "Answer.", Demonstrations: []optimize.Demonstration{{Input: "when", Output: "cite json", ExampleID: "t4"}}}
				m := gepa.Member{Candidate: branch, Origin: gepa.OriginMutation, Parents: []int{0}, Iteration: 1, Scores: map[string]gepa.ExampleScore{}}
				for _, ex := range validation {
					s := keywordScore(branch, ex)
					m.Scores[ex.ID] = gepa.ExampleScore{Overall: s.Overall, Intents: s.Intents}
				}
				st.Pool = append(st.Pool, m)
				return st, ev, &keywordReflector{}
			}
			st1, ev1, rf1 := start()
			st1 = run(t, st1, ev1, rf1, false)
			st2, ev2, rf2 := start()
			st2 = run(t, st2, ev2, rf2, true)

			assert.Greater(t, st1.Counters.MergesTried, 0, "the fixture merges")
			assert.Equal(t, mustJSON(t, st1), mustJSON(t, st2))
			assert.Equal(t, ev1.batches, ev2.batches)
			assert.Equal(t, rf1.calls, rf2.calls)
		})
	}
}
