package gepa

import (
	"slices"

	"github.com/plumehq/plume/shared/optimize"
)

// Defaults of a search; Config's zero fields take them.
const (
	// DefaultMinibatchSize is how many training examples a mutation is judged on: the
	// reference's default. Few, because the parent and the child are both run on them in every
	// iteration; the validation set, not the minibatch, decides what a child is worth.
	DefaultMinibatchSize = 3
	// DefaultMaxMerges is how many merges a search tries (the reference's
	// max_merge_invocations).
	DefaultMaxMerges = 5
	// DefaultMergeSubsample is how many validation examples a merged candidate is judged on
	// before it may cost a whole validation pass (the reference's num_subsample_ids).
	DefaultMergeSubsample = 5
	// DefaultMaxIterations bounds the iterations after the baseline's. It is a backstop: a
	// run's budget normally ends the search long before (an iteration costs at least one
	// minibatch evaluation, and a default dspy_gepa budget affords about 150 of them).
	DefaultMaxIterations = 200
)

// Origins of a pool member: how it was made.
const (
	OriginSeed     = "seed"
	OriginMutation = "mutation"
	OriginMerge    = "merge"
)

// Reasons a search stopped (State.Stop).
const (
	// StopBudget: the Evaluator or the Reflector failed with optimize.ErrBudget.
	StopBudget = "budget"
	// StopIterations: Config.MaxIterations iterations were made.
	StopIterations = "iterations"
	// StopNoData: there was no training or no validation example, so nothing to search.
	StopNoData = "no_data"
)

// Config shapes a search. Zero fields take the defaults (New); a State keeps its Config, so
// that a resumed search goes on with the settings it started with.
type Config struct {
	// MinibatchSize is how many training examples a mutation is judged on (at most the
	// training examples there are).
	MinibatchSize int `json:"minibatch_size"`
	// MaxMerges is how many merges the search tries, kept or not; negative for none.
	MaxMerges int `json:"max_merges"`
	// MergeSubsample is how many validation examples a merge is judged on before it is kept.
	MergeSubsample int `json:"merge_subsample"`
	// MaxIterations bounds the iterations after the baseline's.
	MaxIterations int `json:"max_iterations"`
	// Intents are the run's intents: Best picks only a candidate whose mean score on the
	// validation examples meets every intent's MinThreshold. The search itself ignores them:
	// the Evaluator's overall score already weighs them.
	Intents []optimize.Intent `json:"intents,omitempty"`
}

// withDefaults is c with its zero fields set to the defaults.
func (c Config) withDefaults() Config {
	if c.MinibatchSize <= 0 {
		c.MinibatchSize = DefaultMinibatchSize
	}
	if c.MaxMerges == 0 {
		c.MaxMerges = DefaultMaxMerges
	}
	if c.MergeSubsample <= 0 {
		c.MergeSubsample = DefaultMergeSubsample
	}
	if c.MaxIterations <= 0 {
		c.MaxIterations = DefaultMaxIterations
	}
	return c
}

// State is a GEPA search, whole: what it searches with (the baseline, the training and
// validation examples, the Config) and everything it found and decided so far. It is plain
// JSON, so that the runner checkpoints it after every Step and another process goes on from
// there; a Step's choices depend only on the State (its random draws on Seed and Iteration), so
// a resumed search makes exactly the choices an uninterrupted one makes.
//
// Carrying the examples makes a Step need nothing but the State, an Evaluator and a Reflector,
// and makes the State as large as the examples and the pool: it belongs in the bucket, not in
// a DynamoDB item. It holds no holdout example, by construction (New).
type State struct {
	Seed   int64  `json:"seed"`
	Config Config `json:"config"`
	// Baseline is the candidate the search starts from: the pool's first member once scored.
	Baseline   optimize.Candidate `json:"baseline"`
	Train      []optimize.Example `json:"train"`
	Validation []optimize.Example `json:"validation"`

	// Iteration counts the iterations made: 0 before the baseline is scored, which is
	// iteration 0. Iteration i > 0 draws its random choices from a generator seeded by (Seed, i).
	Iteration int `json:"iteration"`
	// Pool are the candidates kept, in the order they were made; a member's index is its id
	// (Member.Parents, Merge.Parents). Every member is scored on every validation example.
	Pool     []Member `json:"pool"`
	Counters Counters `json:"counters"`
	// Merges are the merges tried, in order: a pair of members is never tried twice.
	Merges []Merge `json:"merges,omitempty"`
	// MergeDue is set by an accepted mutation: the next iteration tries a merge first (the
	// reference's schedule), when MaxMerges allows.
	MergeDue bool `json:"merge_due,omitempty"`

	// Finished is set once the search is over, and Stop says why (StopBudget, ...).
	Finished bool   `json:"finished"`
	Stop     string `json:"stop,omitempty"`
}

// Member is a candidate of the pool with its lineage and its validation scores.
type Member struct {
	Candidate optimize.Candidate `json:"candidate"`
	// Origin is how it was made: OriginSeed, OriginMutation or OriginMerge.
	Origin string `json:"origin"`
	// Parents are the members it was made from: none for the seed, one for a mutation, two
	// for a merge.
	Parents []int `json:"parents,omitempty"`
	// Iteration is the iteration that made it (0 for the seed).
	Iteration int `json:"iteration"`
	// Scores are its scores on the validation examples, by example id: one row of the
	// search's score matrix.
	Scores map[string]ExampleScore `json:"scores"`
}

// ExampleScore is a candidate's score on one validation example: overall and per intent (by
// judge id), each 0 to 1, as the Evaluator gave them.
type ExampleScore struct {
	Overall float64            `json:"overall"`
	Intents map[string]float64 `json:"intents,omitempty"`
}

// Merge is one merge tried: the two members combined, the common ancestor that decided which
// parent's component to take, the iteration that tried it, and whether the child was kept.
type Merge struct {
	Parents   [2]int `json:"parents"`
	Ancestor  int    `json:"ancestor"`
	Iteration int    `json:"iteration"`
	Kept      bool   `json:"kept"`
}

// Counters say what the search did. Model calls are not among them: the Evaluator and the
// Reflector count those against the run's budget.
type Counters struct {
	// Mutations are the mutations begun: the minibatches drawn, each costing the parent's
	// evaluation on it. Every one ends as exactly one of Perfect, Unusable, Rejected and
	// Accepted.
	Mutations int `json:"mutations"`
	// Perfect: the parent scored 1 on every minibatch example, so no child could beat it there
	// and the Reflector was not asked.
	Perfect int `json:"perfect"`
	// Unusable: the Reflector answered nothing, the parent's content, or a candidate already
	// in the pool.
	Unusable int `json:"unusable"`
	// Rejected: the child did not score strictly higher than the parent on the minibatch.
	Rejected int `json:"rejected"`
	// Accepted: the child scored higher, was scored on the validation set and joined the pool.
	Accepted int `json:"accepted"`
	// MergesTried and MergesKept count merges evaluated and merges that joined the pool.
	MergesTried int `json:"merges_tried"`
	MergesKept  int `json:"merges_kept"`
}

// New starts a search from baseline, proposing from train and scoring on validation. The
// holdout is not an argument: the search cannot see it. Nothing is evaluated until the first
// Step.
func New(seed int64, baseline optimize.Candidate, train, validation []optimize.Example, cfg Config) *State {
	return &State{
		Seed:       seed,
		Config:     cfg.withDefaults(),
		Baseline:   baseline,
		Train:      slices.Clone(train),
		Validation: slices.Clone(validation),
	}
}

// clone is a copy of st that a Step may change without changing st: a Step only appends to
// the pool and to the merges, and never changes a member or a merge in place except the one
// it appended, so copying those two slices is enough.
func (st *State) clone() State {
	next := *st
	next.Pool = slices.Clone(st.Pool)
	next.Merges = slices.Clone(st.Merges)
	return next
}

// mean is member i's mean overall score on the validation examples it was scored on, and
// false when it was scored on none.
func (st *State) mean(i int) (float64, bool) {
	var sum float64
	n := 0
	for _, ex := range st.Validation {
		if s, ok := st.Pool[i].Scores[ex.ID]; ok {
			sum += s.Overall
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// means are the members' mean validation scores, indexed like the pool.
func (st *State) means() []float64 {
	out := make([]float64, len(st.Pool))
	for i := range st.Pool {
		out[i], _ = st.mean(i)
	}
	return out
}

// hashes are the pool's candidates by Candidate.Hash: what is already in the pool is not
// proposed, evaluated or kept again.
func (st *State) hashes() map[string]bool {
	out := make(map[string]bool, len(st.Pool))
	for _, m := range st.Pool {
		out[m.Candidate.Hash()] = true
	}
	return out
}

// Best is the candidate to propose at the end of the search: of the pool's members that meet
// every intent's MinThreshold with their mean score on the validation examples, the one with
// the best mean overall score; on a tie the elder, so that a candidate replaces the baseline
// only by scoring strictly higher. It is false when no member complies, the baseline included,
// or none was scored (the budget ended the search first, or there was no validation example):
// the runner then has nothing to propose but the baseline, and says so.
//
// An intent with a threshold that no validation example has a score for is not met: a
// guardrail that cannot be checked does not pass.
func Best(st *State) (optimize.Candidate, bool) {
	best, bestMean := -1, 0.0
	for i := range st.Pool {
		mean, scored := st.mean(i)
		if !scored || !st.complies(i) {
			continue
		}
		if best < 0 || mean > bestMean {
			best, bestMean = i, mean
		}
	}
	if best < 0 {
		return optimize.Candidate{}, false
	}
	return st.Pool[best].Candidate, true
}

// complies reports whether member i's mean score per intent on the validation examples meets
// every intent's MinThreshold.
func (st *State) complies(i int) bool {
	for _, in := range st.Config.Intents {
		if in.MinThreshold == nil {
			continue
		}
		var sum float64
		n := 0
		for _, ex := range st.Validation {
			if v, ok := st.Pool[i].Scores[ex.ID].Intents[in.JudgeID]; ok {
				sum += v
				n++
			}
		}
		if n == 0 || sum/float64(n) < *in.MinThreshold {
			return false
		}
	}
	return true
}
