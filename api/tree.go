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
	TraceID string `json:"trace_id"`
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

// TreeSpan is a span of a SpanTree: its summary, its depth in the tree and the totals of its
// subtree (itself and every span under it). Name, error code and tags may be cut (long values
// are, in the summary the tree reads; NameCut says so of the name); GET /spans?id= answers them
// whole.
type TreeSpan struct {
	ID           string            `json:"id"`
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
	Depth        int               `json:"depth"`
	HasChildren  bool              `json:"has_children"`
	Subtree      SubtreeTotals     `json:"subtree"`
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
