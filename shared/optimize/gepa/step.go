package gepa

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/plumehq/plume/shared/optimize"
)

// Step makes one iteration of the search. Iteration 0 scores the baseline on every validation
// example and makes it the pool's first member. Every later iteration tries a merge when one is
// due (after an accepted mutation, while fewer than MaxMerges were tried) and an eligible pair
// exists; otherwise it makes a reflective mutation: a parent drawn from the Pareto front
// (Weights), a minibatch of training examples, the parent evaluated on it, the Reflector asked
// for new content from those scored examples, the child evaluated on the same minibatch and
// accepted only when its score sum there is strictly higher; an accepted child is scored on
// every validation example and joins the pool.
//
// An iteration that yields nothing to keep (a perfect parent, an unusable reflection, a
// rejected child or merge) is an iteration all the same: its evaluations were paid for, and
// counting it is what lets MaxIterations end a search whose proposals never succeed.
//
// done is true when the search is over: MaxIterations made, the budget spent (the Evaluator's
// or the Reflector's optimize.ErrBudget, which ends the search with what it found and is no
// error; the iteration it interrupted leaves nothing), or nothing to search (no training or no
// validation example: the first Step ends the search without a model call). Any other error is
// returned and leaves st as it was, so that the runner can try the step again; the retry makes
// the same choices and the runner's cache of model calls answers what was already asked.
func Step(ctx context.Context, st *State, ev optimize.Evaluator, rf optimize.Reflector) (done bool, err error) {
	if st.Finished {
		return true, nil
	}
	if len(st.Train) == 0 || len(st.Validation) == 0 {
		st.Finished, st.Stop = true, StopNoData
		return true, nil
	}
	next := st.clone()
	if len(st.Pool) == 0 {
		err = next.scoreBaseline(ctx, ev)
	} else {
		err = next.iterate(ctx, ev, rf)
	}
	if errors.Is(err, optimize.ErrBudget) {
		st.Finished, st.Stop = true, StopBudget
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("gepa iteration %d: %w", st.Iteration, err)
	}
	next.Iteration++
	if next.Iteration > next.Config.MaxIterations {
		next.Finished, next.Stop = true, StopIterations
	}
	*st = next
	return st.Finished, nil
}

// scoreBaseline makes the baseline the pool's first member.
func (st *State) scoreBaseline(ctx context.Context, ev optimize.Evaluator) error {
	scores, err := evaluate(ctx, ev, st.Baseline, st.Validation)
	if err != nil {
		return fmt.Errorf("score the baseline: %w", err)
	}
	st.Pool = append(st.Pool, Member{
		Candidate: st.Baseline, Origin: OriginSeed, Iteration: st.Iteration,
		Scores: byExample(st.Validation, scores, nil),
	})
	return nil
}

// iterate makes iteration st.Iteration (> 0): a merge when one is due and possible, else a
// mutation. All its random draws come from one generator seeded by (Seed, Iteration), in a
// fixed order, so that the iteration draws the same whenever and however often it is made.
func (st *State) iterate(ctx context.Context, ev optimize.Evaluator, rf optimize.Reflector) error {
	r := rand.New(rand.NewPCG(uint64(st.Seed), uint64(st.Iteration)))
	if st.MergeDue {
		st.MergeDue = false
		if st.Counters.MergesTried < st.Config.MaxMerges {
			tried, err := st.merge(ctx, ev, r)
			if err != nil || tried {
				return err
			}
		}
	}
	return st.mutate(ctx, ev, rf, r)
}

// mutate makes one reflective mutation (see Step).
func (st *State) mutate(ctx context.Context, ev optimize.Evaluator, rf optimize.Reflector, r *rand.Rand) error {
	parent := pick(Weights(st), r)
	p := st.Pool[parent].Candidate
	batch := st.minibatch()
	st.Counters.Mutations++

	before, err := evaluate(ctx, ev, p, batch)
	if err != nil {
		return fmt.Errorf("evaluate parent %d on the minibatch: %w", parent, err)
	}
	if perfect(before) {
		st.Counters.Perfect++
		return nil
	}
	scored := make([]optimize.Reflection, len(batch))
	for i, ex := range batch {
		scored[i] = optimize.Reflection{Example: ex, Score: before[i]}
	}
	content, err := rf.Reflect(ctx, p.Content, scored)
	if err != nil {
		return fmt.Errorf("reflect on parent %d: %w", parent, err)
	}
	child := optimize.Candidate{Content: content, Demonstrations: slices.Clone(p.Demonstrations)}
	// The parent's own content is in the pool, so this also turns away an unchanged prompt.
	if strings.TrimSpace(content) == "" || st.hashes()[child.Hash()] {
		st.Counters.Unusable++
		return nil
	}
	after, err := evaluate(ctx, ev, child, batch)
	if err != nil {
		return fmt.Errorf("evaluate the child of %d on the minibatch: %w", parent, err)
	}
	if sum(after) <= sum(before) {
		st.Counters.Rejected++
		return nil
	}
	val, err := evaluate(ctx, ev, child, st.Validation)
	if err != nil {
		return fmt.Errorf("score the child of %d: %w", parent, err)
	}
	st.Pool = append(st.Pool, Member{
		Candidate: child, Origin: OriginMutation, Parents: []int{parent}, Iteration: st.Iteration,
		Scores: byExample(st.Validation, val, nil),
	})
	st.Counters.Accepted++
	st.MergeDue = true
	return nil
}

// epochStreams sets the PCG stream of the training examples' shuffles apart from the
// iterations' streams (0, 1, 2, ...), so that no iteration's draws repeat a shuffle's.
const epochStreams = 1 << 63

// minibatch is the training examples of the next mutation. Like the reference, it walks the
// training examples in a shuffled order, MinibatchSize at a time, and shuffles again for each
// epoch, so that every example is reflected on as often as the others; a last chunk that runs
// past the end wraps to the start of the same order, so a minibatch never holds an example
// twice. The order of epoch e is drawn from (Seed, epochStreams|e) and the chunk is numbered by
// the mutations begun, so the minibatch is a function of the State alone. With fewer training
// examples than MinibatchSize, every minibatch is all of them.
func (st *State) minibatch() []optimize.Example {
	n := len(st.Train)
	m := min(st.Config.MinibatchSize, n)
	perEpoch := (n + m - 1) / m
	epoch, chunk := st.Counters.Mutations/perEpoch, st.Counters.Mutations%perEpoch
	order := rand.New(rand.NewPCG(uint64(st.Seed), epochStreams|uint64(epoch))).Perm(n)
	out := make([]optimize.Example, m)
	for t := range out {
		out[t] = st.Train[order[(chunk*m+t)%n]]
	}
	return out
}

// evaluate is ev's scores of c on examples, one per example in their order.
func evaluate(ctx context.Context, ev optimize.Evaluator, c optimize.Candidate, examples []optimize.Example) ([]optimize.Score, error) {
	if len(examples) == 0 {
		return nil, nil
	}
	scores, err := ev.Evaluate(ctx, c, examples)
	if err != nil {
		return nil, err
	}
	if len(scores) != len(examples) {
		return nil, fmt.Errorf("the evaluator returned %d scores for %d examples", len(scores), len(examples))
	}
	return scores, nil
}

// byExample keys scores (one per example, in order) by example id, added to into (nil: a new
// map).
func byExample(examples []optimize.Example, scores []optimize.Score, into map[string]ExampleScore) map[string]ExampleScore {
	if into == nil {
		into = make(map[string]ExampleScore, len(examples))
	}
	for i, ex := range examples {
		into[ex.ID] = ExampleScore{Overall: scores[i].Overall, Intents: scores[i].Intents}
	}
	return into
}

func sum(scores []optimize.Score) float64 {
	var s float64
	for _, sc := range scores {
		s += sc.Overall
	}
	return s
}

// perfect reports whether every score is 1, the most there is: no child can beat the parent
// strictly on these examples, so asking the Reflector would be money spent on a rejection.
func perfect(scores []optimize.Score) bool {
	for _, s := range scores {
		if s.Overall < 1 {
			return false
		}
	}
	return true
}
