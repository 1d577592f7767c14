package optimize

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/plumehq/plume/api"
)

// Optimizer types, as the API names them (api.OptimizerTypes).
const (
	TypeQuickRefine = api.OptimizerQuickRefine
	TypeBootstrap   = api.OptimizerBootstrap
	TypeGEPA        = api.OptimizerGEPA
	// TypeAuto lets the run pick one from its data and budget (AutoType).
	TypeAuto = api.OptimizerAuto
)

// AutoType is the type auto picks, and why (the rule docs/optimization.md documents): quick_refine while
// there is little to learn from or little to spend (fewer than 10 examples, or a budget under
// 100 model calls); dspy_gepa with at least 30 examples and a budget of at least 1,000 calls
// (maxCalls 0: the default budget); dspy_bootstrap when at least two training examples offer a
// demonstration (demos: those with an expected output or a thumbs up); else quick_refine.
func AutoType(examples, maxCalls, demos int) (typ, reason string) {
	switch {
	case examples < 10:
		return TypeQuickRefine, fmt.Sprintf("fewer than 10 examples (%d)", examples)
	case maxCalls > 0 && maxCalls < 100:
		return TypeQuickRefine, fmt.Sprintf("a budget under 100 calls (%d)", maxCalls)
	case examples >= 30 && (maxCalls == 0 || maxCalls >= 1000):
		return TypeGEPA, fmt.Sprintf("at least 30 examples (%d) and a budget of at least 1,000 calls (or the default)", examples)
	case demos >= 2:
		return TypeBootstrap, fmt.Sprintf("%d training examples offer a demonstration (an expected output or a thumbs up)", demos)
	}
	return TypeQuickRefine, fmt.Sprintf("fewer than two training examples offer a demonstration (%d)", demos)
}

// Intent is one judge that scores candidates, with its weight in the overall score and the
// least score a candidate may have on it (a guardrail: nil for none). Scores are 0 to 1.
type Intent struct {
	JudgeID      string   `json:"judge_id"`
	Weight       float64  `json:"weight"`
	MinThreshold *float64 `json:"min_threshold,omitempty"`
}

// Budget bounds what a run spends: model calls of every kind (task, judge, reflection) and
// their cost. Zero fields take the defaults of the run's type.
type Budget struct {
	MaxModelCalls int     `json:"max_model_calls,omitempty"`
	MaxCostUSD    float64 `json:"max_cost_usd,omitempty"`
}

// Example is one completion of the prompt: what it was asked and answered, what people said of
// it, and how the intents' judges scored it.
type Example struct {
	// ID is the completion's span id; the split and every score are keyed by it.
	ID string `json:"id"`
	// Input is what the prompt was given (the span's input_data), Output what the model
	// answered (output_data), Variables the prompt variables it was rendered with.
	Input     string            `json:"input"`
	Output    string            `json:"output"`
	Variables map[string]string `json:"variables,omitempty"`
	// ThumbsUp is a person's verdict on Output (nil: none), with their Reason and the
	// ExpectedOutput they wrote ("" when none).
	ThumbsUp       *bool  `json:"thumbs_up,omitempty"`
	Reason         string `json:"reason,omitempty"`
	ExpectedOutput string `json:"expected_output,omitempty"`
	// Judged holds the intents' judges' verdicts on Output, by judge id.
	Judged map[string]Verdict `json:"judged,omitempty"`
}

// Verdict is a judge's verdict normalised to 0 (worst) .. 1 (best), with its reason.
type Verdict struct {
	Score  float64 `json:"score"`
	Reason string  `json:"reason,omitempty"`
}

// Demonstration is an input and the output wanted for it, shown to the model with the prompt.
type Demonstration struct {
	Input  string `json:"input"`
	Output string `json:"output"`
	// ExampleID is the example it was taken from.
	ExampleID string `json:"example_id"`
}

// Candidate is a prompt a run proposes: the prompt's content and the demonstrations that go
// with it. A candidate is never a prompt version before a person deploys it.
type Candidate struct {
	Content        string          `json:"content"`
	Demonstrations []Demonstration `json:"demonstrations,omitempty"`
}

// Hash identifies a candidate by its content and demonstrations: the SHA-256 of its JSON.
func (c Candidate) Hash() string {
	b, _ := json.Marshal(c) // plain strings: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Score is a candidate's score on one example: overall (the intents' weighted mean, and the
// match with the expected output where there is one) and per intent, each 0 to 1, with the
// textual feedback a reflection reads (the judges' reasons, the expected output, the person's
// reason).
type Score struct {
	ExampleID string             `json:"example_id"`
	Overall   float64            `json:"overall"`
	Intents   map[string]float64 `json:"intents,omitempty"`
	Output    string             `json:"output"`
	Feedback  string             `json:"feedback,omitempty"`
}

// Evaluator runs a candidate on examples (the task model on each input, through shared/llm)
// and scores the outputs. It returns one Score per example, in the order of examples. Every
// model call it makes counts against the run's budget; it fails with ErrBudget when the budget
// is spent.
type Evaluator interface {
	Evaluate(ctx context.Context, c Candidate, examples []Example) ([]Score, error)
}

// Reflector asks the reflection model for a better prompt: it is shown the current content and
// the scored examples (inputs, outputs, feedback) and answers new content.
type Reflector interface {
	Reflect(ctx context.Context, content string, scored []Reflection) (string, error)
}

// Reflection is one example as a reflection sees it.
type Reflection struct {
	Example Example `json:"example"`
	Score   Score   `json:"score"`
}

// ErrBudget is the error (errors.Is) of a model call the run's budget does not allow.
var ErrBudget = errors.New("the optimization budget is spent")
