package gepa

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Front is the Pareto front of the pool over the validation examples: for each example (by
// id), the members with the best overall score on it, in pool order. Scores are compared
// exactly, so members that tie on an example are all on its front. GEPA keeps this front
// rather than only the best mean because a candidate that is best on a few examples holds a
// lesson the best on average has not learnt, and mutating it is how that lesson spreads.
func Front(st *State) map[string][]int {
	front := make(map[string][]int, len(st.Validation))
	for _, ex := range st.Validation {
		best := math.Inf(-1)
		var at []int
		for i, m := range st.Pool {
			s, ok := m.Scores[ex.ID]
			switch {
			case !ok:
			case s.Overall > best:
				best, at = s.Overall, []int{i}
			case s.Overall == best:
				at = append(at, i)
			}
		}
		if len(at) > 0 {
			front[ex.ID] = at
		}
	}
	return front
}

// Weights are the members' chances to be the parent of the next mutation, indexed like the
// pool: the number of validation examples a member is on the front for, once the dominated
// members are removed; 0 for a member on no front or dominated.
//
// A member is dominated when every example it is on the front for has another remaining member
// on its front too: it teaches nothing the others do not. Like the reference, members are
// removed one at a time, the lowest mean validation score first (ties: the elder first), each
// judged against those that remain, so that of two members on exactly the same fronts one
// stays. Every example's front keeps at least one member, so the weights of a scored pool never
// sum to 0.
//
// The reference rescans from the lowest after each removal; one pass decides the same, because
// a removal only takes members off fronts: a member that was not dominated when it was judged
// has a front where it is alone, and stays alone there.
func Weights(st *State) []int {
	front := Front(st)
	means := st.means()
	// on are the fronts each member is on, in validation order.
	on := make([][][]int, len(st.Pool))
	var order []int
	for _, ex := range st.Validation {
		for _, i := range front[ex.ID] {
			if on[i] == nil {
				order = append(order, i)
			}
			on[i] = append(on[i], front[ex.ID])
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(means[a], means[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	alive := make([]bool, len(st.Pool))
	for _, i := range order {
		alive[i] = true
	}
	for _, y := range order {
		if dominated(y, on[y], alive) {
			alive[y] = false
		}
	}
	w := make([]int, len(st.Pool))
	for i, fronts := range on {
		if alive[i] {
			w[i] = len(fronts)
		}
	}
	return w
}

// dominated reports whether each of fronts (those member y is on) has another member alive.
func dominated(y int, fronts [][]int, alive []bool) bool {
	for _, at := range fronts {
		if !slices.ContainsFunc(at, func(z int) bool { return z != y && alive[z] }) {
			return false
		}
	}
	return true
}

// pick draws an index with probability proportional to its weight. Weights that sum to 0 (a
// pool scored on no example, which Step never makes) pick the first.
func pick(weights []int, r *rand.Rand) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	if total == 0 {
		return 0
	}
	x := r.IntN(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1 // not reached: x < total
}
