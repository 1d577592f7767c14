package api

import "time"

// Bounds of GET /projects/{project_id}/prompts/{slug}/completions.
const (
	// DefaultCompletionsLimit is the page size when limit is not given.
	DefaultCompletionsLimit = 20
	// MaxCompletionsLimit is the largest limit.
	MaxCompletionsLimit = 50
	// CompletionExcerptBytes bounds the input and output excerpts of a completion.
	CompletionExcerptBytes = 2000
)

// CompletionList is a page of a prompt's completions, newest first (GET
// /projects/{project_id}/prompts/{slug}/completions). NextCursor, passed as cursor, reads the
// next page; it is null on the last. A page filtered by version may hold fewer than Limit
// completions and still have a NextCursor. A page that would pass MaxAnswerBytes holds fewer
// completions, Limit their number, and NextCursor reads on after them.
type CompletionList struct {
	Completions []Completion `json:"completions"`
	Limit       int          `json:"limit"`
	NextCursor  *string      `json:"next_cursor"`
}

// Completion is an llm span linked to a prompt, with its feedback and its evaluations by the
// judges linked to the prompt.
type Completion struct {
	SpanID  string `json:"span_id"`
	TraceID string `json:"trace_id"`
	// PromptVersion and PromptVersionID are the version the span names; null when the prompt
	// has no such version.
	PromptVersion   *int       `json:"prompt_version"`
	PromptVersionID *string    `json:"prompt_version_id"`
	StartedAt       time.Time  `json:"started_at"`
	EndedAt         *time.Time `json:"ended_at"`
	Model           *string    `json:"model"`
	Cost            *float64   `json:"cost"`
	Input           Excerpt    `json:"input"`
	Output          Excerpt    `json:"output"`
	// Feedback is the human feedback on the completion (calibrations of judges left out),
	// newest first.
	Feedback    []HumanFeedbackItem `json:"feedback"`
	Evaluations []Evaluation        `json:"evaluations"`
}

// Excerpt is the start of a completion's input or output: at most CompletionExcerptBytes
// bytes of it, cut at a character boundary. Text is null when the span has none; Cut says
// that Text is shorter than the whole, Bytes is the whole's length.
type Excerpt struct {
	Text  *string `json:"text"`
	Cut   bool    `json:"cut"`
	Bytes int     `json:"bytes"`
}
