package optimize_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/optimize"
)

// examplesWithIDs returns n examples with distinct ids.
func examplesWithIDs(n int) []optimize.Example {
	out := make([]optimize.Example, n)
	for i := range out {
		out[i] = optimize.Example{ID: fmt.Sprintf("span-%04d", i), Input: fmt.Sprintf("question %d", i)}
	}
	return out
}

func idsOf(examples []optimize.Example) []string {
	out := make([]string, len(examples))
	for i, ex := range examples {
		out[i] = ex.ID
	}
	return out
}

func TestSplitIgnoresInputOrder(t *testing.T) {
	examples := examplesWithIDs(57)
	want := optimize.SplitExamples(examples, 42)
	for i := range 5 {
		shuffled := slices.Clone(examples)
		r := rand.New(rand.NewPCG(uint64(i), 7))
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		assert.Equal(t, want, optimize.SplitExamples(shuffled, 42), "shuffle %d", i)
	}
}

func TestSplitPartsAreDisjointAndOrdered(t *testing.T) {
	examples := examplesWithIDs(200)
	s := optimize.SplitExamples(examples, 7)
	seen := map[string]string{}
	for name, part := range map[string][]optimize.Example{"train": s.Train, "validation": s.Validation, "holdout": s.Holdout} {
		assert.True(t, slices.IsSortedFunc(part, func(a, b optimize.Example) int { return strings.Compare(a.ID, b.ID) }), "%s is ordered by id", name)
		for _, ex := range part {
			if prev, ok := seen[ex.ID]; ok {
				t.Errorf("example %s is in %s and %s", ex.ID, prev, name)
			}
			seen[ex.ID] = name
		}
	}
	assert.Len(t, seen, len(examples), "every example is in a part")
}

func TestSplitProportions(t *testing.T) {
	for _, seed := range []int64{0, 1, -3, 1 << 40} {
		s := optimize.SplitExamples(examplesWithIDs(1000), seed)
		assert.InDelta(t, 600, len(s.Train), 20, "train, seed %d", seed)
		assert.InDelta(t, 200, len(s.Validation), 20, "validation, seed %d", seed)
		assert.InDelta(t, 200, len(s.Holdout), 20, "holdout, seed %d", seed)
	}
}

func TestSplitSmallSets(t *testing.T) {
	tests := []struct {
		n                          int
		train, validation, holdout int
	}{
		{0, 0, 0, 0},
		{1, 1, 0, 0},
		{2, 1, 1, 0},
		{3, 1, 1, 1},
		{4, 2, 1, 1},
		{5, 3, 1, 1},
		{7, 5, 1, 1},
		{8, 4, 2, 2},
		{10, 6, 2, 2},
		{12, 8, 2, 2},
		{13, 7, 3, 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			for seed := range int64(20) {
				s := optimize.SplitExamples(examplesWithIDs(tt.n), seed)
				require.Len(t, s.Train, tt.train, "train, seed %d", seed)
				require.Len(t, s.Validation, tt.validation, "validation, seed %d", seed)
				require.Len(t, s.Holdout, tt.holdout, "holdout, seed %d", seed)
			}
		})
	}
}

func TestSplitSeedsDiffer(t *testing.T) {
	examples := examplesWithIDs(100)
	a := optimize.SplitExamples(examples, 1)
	b := optimize.SplitExamples(examples, 2)
	assert.NotEqual(t, idsOf(a.Holdout), idsOf(b.Holdout))
	assert.NotEqual(t, idsOf(a.Train), idsOf(b.Train))
	assert.Equal(t, a, optimize.SplitExamples(examples, 1), "the same seed splits the same way")
}
