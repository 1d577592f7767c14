package optimize

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Defaults of the dspy_bootstrap strategy.
const (
	// DefaultMaxDemos is the most demonstrations a candidate shows: a few examples teach the
	// format and the tone; more make every task call longer and dearer.
	DefaultMaxDemos = 4
	// DefaultBootstrapTrials is how many subsets of demonstrations the search scores besides
	// the baseline.
	DefaultBootstrapTrials = 8
)

// BootstrapOptions shape a dspy_bootstrap search; zero fields take the defaults.
type BootstrapOptions struct {
	MaxDemos int
	Trials   int
	Seed     int64
}

// BootstrapState is a dspy_bootstrap search, whole: what it searches with (the baseline, the
// demonstrations it may choose from, the validation examples it scores on) and how far it got.
// It is plain JSON, so that the runner checkpoints it after every step and a later invocation
// goes on from there; the same state and the same scores give the same next step, so a step
// that is replayed after a crash chooses the same demonstrations (and the runner's cache of
// model calls answers it without paying again).
//
// It holds no holdout example and no demonstration from outside the training examples, by
// construction (NewBootstrap): what it chooses is never tested on what it was chosen from.
// Carrying its data makes a step need nothing but the state and an Evaluator, and makes the
// state as large as the validation examples and the pool: a checkpoint of it belongs in the
// bucket, not in a 400 KB item, once examples are long.
type BootstrapState struct {
	Seed     int64 `json:"seed"`
	MaxDemos int   `json:"max_demos"`
	Trials   int   `json:"trials"`
	// Baseline is the content every candidate starts from.
	Baseline string `json:"baseline"`
	// Pool are the demonstrations a candidate may show, one per training example that has an
	// output people want, ordered by example id.
	Pool []Demonstration `json:"pool"`
	// Validation are the examples candidates are scored on.
	Validation []Example `json:"validation"`

	// Done counts the trials made: 0 before the baseline is scored, which is trial 0.
	Done int `json:"trials_done"`
	// Finished is set once the search is over: every trial made, the budget spent, or nothing
	// to search (no demonstration or no validation example).
	Finished bool `json:"finished"`
	// BaselineScore is the baseline's mean overall score on Validation (once Done > 0).
	BaselineScore float64 `json:"baseline_score"`
	// Best is the best candidate so far and BestScore its mean overall score; the baseline
	// until a subset of demonstrations scores higher.
	Best      Candidate `json:"best"`
	BestScore float64   `json:"best_score"`
	// Scored are the scores of the candidates already scored, by Candidate.Hash: a subset drawn
	// again is not paid for twice.
	Scored map[string]float64 `json:"scored,omitempty"`
}

// NewBootstrap starts a dspy_bootstrap search from the baseline's content (its demonstrations,
// if any, are replaced by those the search chooses). The demonstrations come from train only
// (bootstrapPool); candidates are scored on validation. The holdout is not an argument: the
// search cannot see it.
func NewBootstrap(baseline Candidate, train, validation []Example, o BootstrapOptions) *BootstrapState {
	st := &BootstrapState{
		Seed: o.Seed, MaxDemos: o.MaxDemos, Trials: o.Trials,
		Baseline: baseline.Content, Pool: bootstrapPool(train), Validation: slices.Clone(validation),
		Best: Candidate{Content: baseline.Content},
	}
	if st.MaxDemos <= 0 {
		st.MaxDemos = DefaultMaxDemos
	}
	if st.Trials <= 0 {
		st.Trials = DefaultBootstrapTrials
	}
	return st
}

// bootstrapPool are the demonstrations examples offer, ordered by example id: for each example
// with an input, its expected output when a person wrote one, else its output when a person
// gave it a thumbs up. An expected output wins over a thumbs up because it is what the person
// wanted rather than what they accepted; a thumbs down without one offers nothing (it says what
// is not wanted, not what is), nor does a verdict of a judge alone (a judge's liking is what the
// search optimizes, not evidence of what people want). One demonstration per example, so that a
// candidate never shows the same input twice.
func bootstrapPool(examples []Example) []Demonstration {
	var out []Demonstration
	for _, ex := range examples {
		if ex.Input == "" {
			continue
		}
		switch {
		case ex.ExpectedOutput != "":
			out = append(out, Demonstration{Input: ex.Input, Output: ex.ExpectedOutput, ExampleID: ex.ID})
		case ex.ThumbsUp != nil && *ex.ThumbsUp && ex.Output != "":
			out = append(out, Demonstration{Input: ex.Input, Output: ex.Output, ExampleID: ex.ID})
		}
	}
	slices.SortStableFunc(out, func(a, b Demonstration) int { return strings.Compare(a.ExampleID, b.ExampleID) })
	return out
}

// BootstrapStep makes one trial of the search. Trial 0 scores the baseline without
// demonstrations; trial t (1..Trials) draws a subset of 1 to MaxDemos demonstrations (at most
// the pool's) of the pool with a generator seeded by (Seed, t), scores the baseline's content with them on the
// validation examples (the mean of the Overall scores) and keeps it as the best when it scores
// strictly higher than the best so far, so that ties keep the candidate with fewer
// demonstrations found first.
//
// done is true when the search is over: every trial made, or the budget spent (the
// Evaluator's ErrBudget, which ends the search with its best so far and is no error). A search
// with no demonstration to choose from or no validation example to score on cannot find
// anything better than the baseline: its first step ends it without a model call, the
// baseline as its best. Any other error is returned and leaves st as it was, so that the step
// can be tried again.
func BootstrapStep(ctx context.Context, st *BootstrapState, ev Evaluator) (done bool, err error) {
	if st.Finished {
		return true, nil
	}
	if len(st.Pool) == 0 || len(st.Validation) == 0 {
		st.Finished = true
		return true, nil
	}
	trial := st.Done
	c := Candidate{Content: st.Baseline}
	if trial > 0 {
		c.Demonstrations = st.draw(trial)
	}
	score, known := st.Scored[c.Hash()]
	if !known {
		score, err = meanOverall(ctx, ev, c, st.Validation)
		if errors.Is(err, ErrBudget) {
			st.Finished = true
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("bootstrap trial %d: %w", trial, err)
		}
	}

	if st.Scored == nil {
		st.Scored = map[string]float64{}
	}
	st.Scored[c.Hash()] = score
	if trial == 0 {
		st.BaselineScore, st.Best, st.BestScore = score, c, score
	} else if score > st.BestScore {
		st.Best, st.BestScore = c, score
	}
	st.Done++
	st.Finished = st.Done > st.Trials
	return st.Finished, nil
}

// draw is trial's subset of the pool, in pool order: its size and members drawn from a
// generator seeded by (Seed, trial) alone, so that a trial draws the same subset whenever and
// however often it is made.
func (st *BootstrapState) draw(trial int) []Demonstration {
	r := rand.New(rand.NewPCG(uint64(st.Seed), uint64(trial)))
	k := 1 + r.IntN(min(st.MaxDemos, len(st.Pool)))
	picked := r.Perm(len(st.Pool))[:k]
	slices.Sort(picked)
	out := make([]Demonstration, k)
	for i, p := range picked {
		out[i] = st.Pool[p]
	}
	return out
}

// meanOverall scores c on examples (at least one): the mean of the Evaluator's Overall scores.
func meanOverall(ctx context.Context, ev Evaluator, c Candidate, examples []Example) (float64, error) {
	scores, err := ev.Evaluate(ctx, c, examples)
	if err != nil {
		return 0, err
	}
	if len(scores) != len(examples) {
		return 0, fmt.Errorf("the evaluator returned %d scores for %d examples", len(scores), len(examples))
	}
	var sum float64
	for _, s := range scores {
		sum += s.Overall
	}
	return sum / float64(len(scores)), nil
}
