package gepa_test

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/optimize/gepa"
)

func TestFrontAndWeights(t *testing.T) {
	tests := []struct {
		name    string
		scores  [][]float64 // candidate × validation example
		front   map[string][]int
		weights []int
	}{
		{
			name:    "one candidate is on every front",
			scores:  [][]float64{{0.2, 0, 1}},
			front:   map[string][]int{"e0": {0}, "e1": {0}, "e2": {0}},
			weights: []int{3},
		},
		{
			name:    "each best somewhere, one best nowhere",
			scores:  [][]float64{{0.5, 0.5}, {1, 0}, {0, 1}},
			front:   map[string][]int{"e0": {1}, "e1": {2}},
			weights: []int{0, 1, 1},
		},
		{
			name:    "a candidate that only ties where another is best too is dominated",
			scores:  [][]float64{{1, 1}, {1, 0}},
			front:   map[string][]int{"e0": {0, 1}, "e1": {0}},
			weights: []int{2, 0},
		},
		{
			name:    "of two identical candidates the elder goes",
			scores:  [][]float64{{0.5, 0.7}, {0.5, 0.7}},
			front:   map[string][]int{"e0": {0, 1}, "e1": {0, 1}},
			weights: []int{0, 2},
		},
		{
			name:    "of two that could each go, the lower mean goes and the other stays",
			scores:  [][]float64{{1, 0}, {1, 0.5}, {0, 1}},
			front:   map[string][]int{"e0": {0, 1}, "e1": {2}},
			weights: []int{0, 1, 1},
		},
		{
			name:    "a candidate covered on each front by a different one is dominated",
			scores:  [][]float64{{1, 1, 0, 0}, {0, 1, 1, 0}, {0, 0, 1, 1}},
			front:   map[string][]int{"e0": {0}, "e1": {0, 1}, "e2": {1, 2}, "e3": {2}},
			weights: []int{2, 0, 2},
		},
		{
			name:    "ties at zero put everyone on the front",
			scores:  [][]float64{{0, 1}, {0, 0.5}},
			front:   map[string][]int{"e0": {0, 1}, "e1": {0}},
			weights: []int{2, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := matrixState(tt.scores)
			assert.Equal(t, tt.front, gepa.Front(st))
			assert.Equal(t, tt.weights, gepa.Weights(st))
		})
	}
}

func TestParentsAreDrawnByWeight(t *testing.T) {
	// Candidate 1 is on one front, candidate 2 on three, candidate 0 on none: over many
	// iterations the mutations' parents are 1 and 2 only, 2 about three times as often.
	st := matrixState([][]float64{{0.1, 0.1, 0.1, 0.1}, {1, 0, 0, 0}, {0, 1, 1, 1}})
	st.Config.MinibatchSize = 1
	st.Config.MaxIterations = 1000
	st.Seed = 11
	st.Train = st.Validation
	contents := map[string]int{}
	rf := reflectFunc(func(content string, _ []optimize.Reflection) (string, error) {
		contents[content]++
		return content, nil // unusable: the pool stays as it is
	})
	ev := &scriptEvaluator{score: zeroScore}
	for range 400 {
		_, err := gepa.Step(t.Context(), st, ev, rf)
		if !assert.NoError(t, err) {
			return
		}
	}
	assert.Zero(t, contents["c0"])
	assert.InDelta(t, 100, contents["c1"], 30)
	assert.InDelta(t, 300, contents["c2"], 30)
}

// TestWeightsMatchTheReferencesRescan compares Weights, which removes dominated members in one
// pass, with the reference's procedure, which rescans from the lowest mean after every removal,
// on random matrices with many ties.
func TestWeightsMatchTheReferencesRescan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	levels := []float64{0, 0.5, 1}
	for trial := range 2000 {
		scores := make([][]float64, 1+r.IntN(8))
		examples := 1 + r.IntN(6)
		for c := range scores {
			scores[c] = make([]float64, examples)
			for e := range scores[c] {
				scores[c][e] = levels[r.IntN(len(levels))]
			}
		}
		st := matrixState(scores)
		if !assert.Equal(t, rescanWeights(scores), gepa.Weights(st), "trial %d: %v", trial, scores) {
			return
		}
	}
}

// rescanWeights are the weights of the reference's remove_dominated_programs, written out
// plainly: sort by mean (ties by index), remove the first dominated member, start again.
func rescanWeights(scores [][]float64) []int {
	n, examples := len(scores), len(scores[0])
	fronts := make([][]int, examples)
	for e := range examples {
		best := -1.0
		for c := range n {
			switch {
			case scores[c][e] > best:
				best, fronts[e] = scores[c][e], []int{c}
			case scores[c][e] == best:
				fronts[e] = append(fronts[e], c)
			}
		}
	}
	mean := func(c int) float64 {
		var s float64
		for _, v := range scores[c] {
			s += v
		}
		return s / float64(examples)
	}
	alive := map[int]bool{}
	for _, f := range fronts {
		for _, c := range f {
			alive[c] = true
		}
	}
	order := slices.Collect(maps.Keys(alive))
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(mean(a), mean(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for removed := true; removed; {
		removed = false
		for _, y := range order {
			if !alive[y] {
				continue
			}
			covered := true
			for _, f := range fronts {
				if slices.Contains(f, y) && !slices.ContainsFunc(f, func(z int) bool { return z != y && alive[z] }) {
					covered = false
				}
			}
			if covered {
				delete(alive, y)
				removed = true
				break
			}
		}
	}
	w := make([]int, n)
	for _, f := range fronts {
		for _, c := range f {
			if alive[c] {
				w[c]++
			}
		}
	}
	return w
}
