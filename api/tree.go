package api

import "time"

// The paging of GET /traces/{trace_id}/tree: ?offset= (from 0) and ?limit= (1 to
// SpanTreeMaxLimit, SpanTreeDefaultLimit when absent). A span of the tree answers in well under
// 2 KB (its summary, which the store keeps under 1 KB, plus field names), so a page of
// SpanTreeMaxLimit stays under MaxAnswerBytes.
const (
	SpanTreeDefaultLimit = 200
	SpanTreeMaxLimit     = 1000
)

// SpanTreeWholeMax is the most spans a trace may have to be answered as one exact tree
// (SpanTree.Whole): the server reads all their summaries, ten batch reads at most.
const SpanTreeWholeMax = 1000

// SpanTree answers GET /traces/{trace_id}/tree: a page of a trace's span tree, the spans'
// summaries (no inputs, outputs or attributes: GET /spans?id= reads a span's body).
//
// A trace of at most SpanTreeWholeMax spans is answered as one exact tree (Whole): spans depth first,
// children in start order, roots first (a span whose parent is not in the trace is a root),
// depths and subtree totals over the whole trace, and a page is a slice of that order. A larger
// trace is answered a page of its spans at a time, in the order the trace received them, each
// page drawn as a tree of its own (a span whose parent is on another page is a root of the
// page, at depth 0, and its subtree totals are the page's): a page then costs what it holds,
// never a read of every span.
type SpanTree struct {
	// Trace is the trace, as GET /traces?id= answers it.
	Trace Trace `json:"trace"`
	// SpanCount is how many spans the trace has (for a large trace: lists, some of whose
	// summaries may still be on their way).
	SpanCount int  `json:"span_count"`
	Whole     bool `json:"whole"`
	Offset    int  `json:"offset"`
	// NextOffset is the offset of the next page, null on the last.
	NextOffset *int `json:"next_offset"`
	// InputTokens and OutputTokens are the sums of the llm spans' tokens: the whole trace's
	// when Whole, this page's otherwise.
	InputTokens  int64      `json:"input_tokens"`
	OutputTokens int64      `json:"output_tokens"`
	Spans        []TreeSpan `json:"spans"`
}

// SpanSummary is what the store keeps of a span for lists and trees: no input, output or
// attributes (GET /spans?id= reads a span's body). Name, error code and tags may be cut (long
// values are, in the summary; NameCut says so of the name). PromptSlug is the prompt of an llm
// span's linkage (its prompt_slug, else its task), absent when it has none.
type SpanSummary struct {
	ID           string            `json:"id"`
	TraceID      string            `json:"trace_id"`
	ParentSpanID *string           `json:"parent_span_id"`
	Name         string            `json:"name"`
	NameCut      bool              `json:"name_cut"`
	Kind         string            `json:"kind"`
	Status       *string           `json:"status"`
	StartedAt    time.Time         `json:"started_at"`
	EndedAt      *time.Time        `json:"ended_at"`
	DurationMS   *float64          `json:"duration_ms"`
	Cost         *float64          `json:"cost"`
	InputTokens  int64             `json:"input_tokens"`
	OutputTokens int64             `json:"output_tokens"`
	HasError     bool              `json:"has_error"`
	ErrorCode    *string           `json:"error_code"`
	Tags         map[string]string `json:"tags"`
	PromptSlug   string            `json:"prompt_slug,omitempty"`
}

// MaxSummaryIDs is the most span ids GET /spans/summaries?ids= takes: one BatchGetItem, and a
// query of some 3.7 KB, inside API Gateway's 10,240 bytes of request line and headers (the Go
// client asks for more in parts).
const MaxSummaryIDs = 100

// TreeSpan is a span of a SpanTree: its summary, its depth in the tree and the totals of its
// subtree (itself and every span under it).
type TreeSpan struct {
	SpanSummary
	Depth       int           `json:"depth"`
	HasChildren bool          `json:"has_children"`
	Subtree     SubtreeTotals `json:"subtree"`
}

// SubtreeTotals are the totals of a span's subtree: its spans, those with an error, the sum of
// their costs (null when none has one) and of their llm spans' tokens.
type SubtreeTotals struct {
	Spans        int      `json:"spans"`
	Errors       int      `json:"errors"`
	Cost         *float64 `json:"cost"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
}
