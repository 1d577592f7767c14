package feedback

import (
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/trace"
)

// CompletionQuery selects a page of a prompt's completions.
type CompletionQuery struct {
	// Limit is the page size (the API allows 1 to api.MaxCompletionsLimit).
	Limit int
	// Cursor is the NextCursor of the previous page; empty for the first.
	Cursor string
	// Version keeps the completions of this version number only; 0 keeps all.
	Version int
}

// CompletionPage is a page of a prompt's completions, newest first.
type CompletionPage struct {
	Completions []Completion
	// NextCursor reads the next page; empty when there is none. A page filtered by version
	// may hold fewer than Limit completions while NextCursor says more may follow.
	NextCursor string
}

// Completion is an llm span linked to a prompt, with its version, feedback and evaluations.
type Completion struct {
	Summary trace.Summary
	// VersionNumber and VersionID are the prompt version the span names; 0 and "" when it
	// names none the prompt has.
	VersionNumber int
	VersionID     string
	// Feedback is the human feedback on the span (calibrations of judges left out), newest first.
	Feedback []Feedback
	// Evaluations are the evaluations of the span by the judges linked to the prompt.
	Evaluations []judge.Evaluation
}
