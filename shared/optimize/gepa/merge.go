package gepa

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/plumehq/plume/shared/optimize"
)

// merge tries one merge: of the eligible pairs (mergeable), one drawn at random, combined
// through a common ancestor drawn with probability proportional to its mean validation score
// (the reference's rule), evaluated on a validation subsample and kept when its score sum there
// is at least each parent's. A kept merge is scored on the rest of the validation examples (the
// subsample's scores are kept, not paid for twice) and joins the pool. tried is false when no
// pair is eligible: the iteration then makes a mutation instead.
func (st *State) merge(ctx context.Context, ev optimize.Evaluator, r *rand.Rand) (tried bool, err error) {
	means := st.means()
	pairs := st.mergeable(means)
	if len(pairs) == 0 {
		return false, nil
	}
	pr := pairs[r.IntN(len(pairs))]
	anc := pickByScore(pr.ancestors, means, r)
	child, _ := combine(st.Pool[anc].Candidate, st.Pool[pr.i].Candidate, st.Pool[pr.j].Candidate, means[pr.i] >= means[pr.j])
	sub, rest := st.subsample(pr.i, pr.j, r)
	st.Merges = append(st.Merges, Merge{Parents: [2]int{pr.i, pr.j}, Ancestor: anc, Iteration: st.Iteration})
	st.Counters.MergesTried++

	scores, err := evaluate(ctx, ev, child, sub)
	if err != nil {
		return true, fmt.Errorf("evaluate the merge of %d and %d: %w", pr.i, pr.j, err)
	}
	var si, sj float64
	for _, ex := range sub {
		si += st.Pool[pr.i].Scores[ex.ID].Overall
		sj += st.Pool[pr.j].Scores[ex.ID].Overall
	}
	if sum(scores) < max(si, sj) {
		return true, nil
	}
	restScores, err := evaluate(ctx, ev, child, rest)
	if err != nil {
		return true, fmt.Errorf("score the merge of %d and %d: %w", pr.i, pr.j, err)
	}
	st.Pool = append(st.Pool, Member{
		Candidate: child, Origin: OriginMerge, Parents: []int{pr.i, pr.j}, Iteration: st.Iteration,
		Scores: byExample(rest, restScores, byExample(sub, scores, nil)),
	})
	st.Merges[len(st.Merges)-1].Kept = true
	st.Counters.MergesKept++
	return true, nil
}

// mergePair is two members that may be merged (i < j) and the common ancestors to merge
// them through, in pool order.
type mergePair struct {
	i, j      int
	ancestors []int
}

// mergeable are the pairs a merge may be tried on, in pool order: two members with a weight
// (on the Pareto front after removing the dominated, as the reference merges only those), not
// tried together before, neither an ancestor of the other, with a common ancestor that scores
// no better than either (so that what they changed from it was an improvement) and through
// which the merge is worth evaluating (combine: one of them alone changed a component, and the
// child is not already in the pool).
func (st *State) mergeable(means []float64) []mergePair {
	var front []int
	for i, w := range Weights(st) {
		if w > 0 {
			front = append(front, i)
		}
	}
	tried := make(map[[2]int]bool, len(st.Merges))
	for _, m := range st.Merges {
		tried[m.Parents] = true
	}
	inPool := st.hashes()
	lineage := make(map[int]map[int]bool, len(front))
	for _, i := range front {
		lineage[i] = st.ancestors(i)
	}
	var out []mergePair
	for a, i := range front {
		for _, j := range front[a+1:] {
			ai, aj := lineage[i], lineage[j]
			if tried[[2]int{i, j}] || ai[j] || aj[i] {
				continue
			}
			var ancs []int
			for k := range st.Pool {
				if !ai[k] || !aj[k] || means[k] > means[i] || means[k] > means[j] {
					continue
				}
				child, worth := combine(st.Pool[k].Candidate, st.Pool[i].Candidate, st.Pool[j].Candidate, means[i] >= means[j])
				if worth && !inPool[child.Hash()] {
					ancs = append(ancs, k)
				}
			}
			if len(ancs) > 0 {
				out = append(out, mergePair{i: i, j: j, ancestors: ancs})
			}
		}
	}
	return out
}

// ancestors are the members that member i descends from, through any number of parents.
// Parents that are not in the pool (a hand-edited checkpoint) are ignored.
func (st *State) ancestors(i int) map[int]bool {
	seen := map[int]bool{}
	stack := slices.Clone(st.Pool[i].Parents)
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if p < 0 || p >= len(st.Pool) || seen[p] {
			continue
		}
		seen[p] = true
		stack = append(stack, st.Pool[p].Parents...)
	}
	return seen
}

// combine merges a and b component by component (Content, Demonstrations) through their common
// ancestor anc: a component only one of them changed is taken from the one that changed it,
// which keeps both improvements; one both changed, differently, from the better-scoring parent
// (a when aBetter), since neither change can be credited over the other. worth is true when
// some component was changed by one parent alone: otherwise the child is one of its parents in
// all but the tie-break, and evaluating it would teach nothing (the reference's "desirable
// predictors").
func combine(anc, a, b optimize.Candidate, aBetter bool) (child optimize.Candidate, worth bool) {
	fromA, one := source(anc.Content == a.Content, anc.Content == b.Content, a.Content == b.Content, aBetter)
	worth = one
	child.Content = b.Content
	if fromA {
		child.Content = a.Content
	}
	fromA, one = source(slices.Equal(anc.Demonstrations, a.Demonstrations), slices.Equal(anc.Demonstrations, b.Demonstrations),
		slices.Equal(a.Demonstrations, b.Demonstrations), aBetter)
	worth = worth || one
	child.Demonstrations = slices.Clone(b.Demonstrations)
	if fromA {
		child.Demonstrations = slices.Clone(a.Demonstrations)
	}
	return child, worth
}

// source says which parent a merged component comes from (fromA, else b), given which of the
// ancestor's, a's and b's versions are equal, and whether one parent alone changed it.
func source(ancIsA, ancIsB, aIsB, aBetter bool) (fromA, one bool) {
	switch {
	case aIsB:
		return true, false
	case ancIsA:
		return false, true
	case ancIsB:
		return true, true
	default:
		return aBetter, false
	}
}

// pickByScore draws one of members with probability proportional to its mean validation
// score; uniformly when they all score 0.
func pickByScore(members []int, means []float64, r *rand.Rand) int {
	var total float64
	for _, m := range members {
		total += means[m]
	}
	if total <= 0 {
		return members[r.IntN(len(members))]
	}
	x := r.Float64() * total
	for _, m := range members {
		if x < means[m] {
			return m
		}
		x -= means[m]
	}
	return members[len(members)-1] // rounding: x ran past the last weight
}

// subsample are the validation examples a merge of members i and j is judged on, and the
// rest. Like the reference, it draws about a third each from the examples where i scores
// higher, where j does and where they tie, so that the merge is tested where each parent is
// strong, then tops up from the others; all examples, in validation order, when there are
// fewer than MergeSubsample.
func (st *State) subsample(i, j int, r *rand.Rand) (sub, rest []optimize.Example) {
	k := min(st.Config.MergeSubsample, len(st.Validation))
	var iBetter, jBetter, tied []int
	for x, ex := range st.Validation {
		si, sj := st.Pool[i].Scores[ex.ID].Overall, st.Pool[j].Scores[ex.ID].Overall
		switch {
		case si > sj:
			iBetter = append(iBetter, x)
		case sj > si:
			jBetter = append(jBetter, x)
		default:
			tied = append(tied, x)
		}
	}
	each := (k + 2) / 3
	chosen := make([]bool, len(st.Validation))
	n := 0
	draw := func(from []int, want int) {
		for _, p := range r.Perm(len(from))[:min(want, len(from))] {
			chosen[from[p]] = true
			n++
		}
	}
	for _, bucket := range [][]int{iBetter, jBetter, tied} {
		draw(bucket, min(each, k-n))
	}
	var unused []int
	for x := range st.Validation {
		if !chosen[x] {
			unused = append(unused, x)
		}
	}
	draw(unused, k-n)
	for x, ex := range st.Validation {
		if chosen[x] {
			sub = append(sub, ex)
		} else {
			rest = append(rest, ex)
		}
	}
	return sub, rest
}
