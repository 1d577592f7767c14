// Package gepa is the dspy_gepa strategy: GEPA's reflective Pareto search ("GEPA: Reflective
// Prompt Evolution Can Outperform Reinforcement Learning", https://arxiv.org/abs/2507.19457;
// reference implementation https://github.com/gepa-ai/gepa), as pure Go that a run checkpoints
// after every step.
//
// # The search
//
// The search keeps a pool of candidates, each scored on every validation example. It starts
// with the baseline alone. Each iteration then either mutates or merges:
//
//   - Mutation. A parent is drawn from the Pareto front: for each validation example, the
//     candidates with the best score on it; a candidate is drawn with a weight equal to the
//     number of examples it is best on, once the candidates that are best only where another
//     one is too have been removed (Weights). Drawing from the front rather than taking the
//     best mean keeps the search from settling on one prompt: a candidate that alone gets a
//     few examples right is mutated too, and what it does right can spread. The parent is run
//     on a minibatch of training examples; the Reflector reads those examples with the
//     parent's outputs, scores and feedback and answers new content; the child (the new
//     content, the parent's demonstrations) is run on the same minibatch and accepted only if
//     its score sum there is strictly higher. An accepted child is scored on every validation
//     example and joins the pool. The minibatch is the cheap filter, the validation set the
//     judge.
//   - Merge. After an accepted mutation, the next iteration first tries to merge two
//     candidates of the front that share an ancestor and differ: each component (the content,
//     the demonstrations) is taken from the parent that changed it since the ancestor, or from
//     the better-scoring parent when both did. The child is run on a few validation examples
//     and kept when it scores at least as well as each parent there; then it is scored on the
//     rest and joins the pool.
//
// The search ends when the run's budget is spent (the Evaluator or the Reflector fails with
// optimize.ErrBudget), after Config.MaxIterations iterations, or at once when there is nothing
// to search. Best then picks the candidate with the best mean validation score among those
// that meet every intent's MinThreshold; the runner compares it with the baseline on the
// holdout, which the search never sees.
//
// # Checkpoints
//
// State is everything the search needs to go on: the baseline, the training and validation
// examples, the Config, the pool with each member's lineage (parents, origin, iteration) and
// validation scores (overall and per intent), the counters, the merges tried and whether one
// is due. It is plain JSON. Every random choice of iteration i is drawn from a generator
// seeded by (Seed, i), and the shuffled order of the training examples in epoch e from one
// seeded by (Seed, 2^63+e), so a search resumed from a checkpoint makes exactly the choices
// of one that was never interrupted. A Step that fails leaves the State as it was; the runner
// tries it again, and its cache of model calls answers what the failed attempt already asked.
//
// # Deviations from the reference
//
//   - No long-lived random generator: the reference pickles its generators with the state;
//     deriving each iteration's from (Seed, Iteration) needs nothing but two integers.
//   - Minibatches: the reference pads the last chunk of an epoch with the least-used ids, which
//     can put one example twice in a minibatch; here the last chunk wraps to the start of the
//     epoch's order, so it never does, and a training set smaller than the minibatch is used
//     whole. Chunks are numbered by mutations, not iterations, so an iteration spent on a
//     merge does not skip one.
//   - A reflection that answers nothing, the parent's content or a candidate already in the
//     pool ends the iteration without evaluating a child (the reference evaluates any new
//     text): it would be paid for and could not be kept. The iteration still counts, since
//     the parent's minibatch evaluation was paid for.
//   - Merges: as in the reference, a merge is due after each accepted mutation, but MaxMerges
//     bounds the merges tried rather than the merges kept (the reference's count of merges due
//     is gone with it), so that what merges may cost is known in advance; a pair of candidates is never tried twice (the reference
//     remembers triples with their ancestor and merged description); the eligible pairs are
//     enumerated and one is drawn, rather than drawn and retried up to 10×10 times; when both
//     parents changed a component and score the same, the elder's is taken instead of a
//     coin's, so that whether a pair is eligible (its child is new) is decided before any draw;
//     a subsample never repeats an example; and a kept merge is scored only on the validation
//     examples outside its subsample (the reference relies on its evaluation cache for that).
//   - Only the reference's defaults are implemented: one mutation per iteration, parents from
//     the Pareto front, acceptance on strict improvement, every candidate scored on the whole
//     validation set, the perfect-minibatch skip at a score of 1.
//   - The final pick honours the intents' guardrails (Best); the reference picks the best mean.
//
// The Reflector rewrites content only: a mutation keeps its parent's demonstrations. So every
// candidate descending from the baseline by mutation has the baseline's demonstrations, and two
// of them always differ in content alone, which both changed: a merge has nothing to combine
// (the child would be a parent) and is never tried. Merges become useful once something else
// varies demonstrations across the pool; until then the merge schedule costs nothing.
package gepa
