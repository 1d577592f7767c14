package trace

import (
	"context"
	"time"
)

// Summary is the DynamoDB index entry of a span: the fields filters need and where the full
// span lives in S3. It is kept under 1 KB (one write unit): long names, error codes and tags
// are cut, with a flag, and the full values are checked on the S3 record.
type Summary struct {
	SpanID          string
	TraceID         string
	ParentSpanID    string // "" for a root span
	Name            string
	NameCut         bool
	Kind            string
	Status          string // "" when the span has no status
	StartedAt       time.Time
	EndedAt         *time.Time
	DurationMS      *float64
	Cost            *float64
	SessionID       string
	ErrorCode       string
	ErrorCodeCut    bool
	HasError        bool
	Tags            map[string]string
	TagsCut         bool
	PromptVersionID string
	// PromptSlug is the prompt of an llm span's linkage (its prompt_slug, else its task); an
	// llm span with one is listed among that prompt's completions.
	PromptSlug string
	// PromptHash is the linkage's content_hash, kept only when it names no prompt_version_id,
	// so that the version can still be resolved by hash.
	PromptHash string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Location   Location
}

// Location is where a span's full record is: a byte range of an NDJSON batch object.
type Location struct {
	Key    string
	Offset int64
	Length int64
}

// SummaryPut writes a summary if the stored one is still the one it was based on: Prev is the
// UpdatedAt of the summary read before (nil: the span must not exist yet).
type SummaryPut struct {
	Summary Summary
	Prev    *time.Time
}

// TraceDelta is what one batch adds to a trace. Counts and cost are differences, computed
// against the previous version of each span, so a span sent again adds nothing.
type TraceDelta struct {
	TraceID   string
	SessionID string
	Spans     int
	Errors    int
	Cost      float64
	MinStart  time.Time
	MaxEnd    *time.Time
	// FirstName names the trace until its root span arrives.
	FirstName string
	Root      *RootSpan
	Tags      map[string]string
	// Explicit carries the fields of a trace created through POST /traces.
	Explicit *TraceFields
	At       time.Time
}

// TraceFields are the fields a client sets on a trace itself (spec §2.7 create fields). Name
// and status, when given, win over what the spans imply; cost is the trace's own cost, added to
// its spans' costs (setting it again replaces it, so a re-sent create is not counted twice).
type TraceFields struct {
	Name       string
	Status     string
	Cost       *float64
	Attributes string // compact JSON object, "" when none
}

// RootSpan is what a trace shows of its root span.
type RootSpan struct {
	SpanID string
	Name   string
	Status string
	Input  string // bounded
	Output string // bounded
}

// SessionDelta is what one batch adds to a session.
type SessionDelta struct {
	SessionID string
	Name      string
	Tags      map[string]string
	NewTraces int
	Errors    int
	Cost      float64
	MinStart  time.Time
	MaxEnd    *time.Time
	// Attributes is the compact JSON object of a session created through POST /sessions.
	Attributes string
	At         time.Time
}

// Index stores span summaries and the trace and session aggregates. Every method is scoped to
// one project and returns errs.CodeUnavailable when storage throttles.
type Index interface {
	// Summaries returns the stored summaries of the given span ids (strongly consistent);
	// unknown ids are absent from the map.
	Summaries(ctx context.Context, projectID string, spanIDs []string) (map[string]Summary, error)
	// PutSummaries writes each summary under its condition and returns the ids whose condition
	// failed (another writer changed the span first); the others are stored.
	PutSummaries(ctx context.Context, projectID string, puts []SummaryPut) (conflicts []string, err error)
	// AddMembers records that spans of a batch belong to a trace, for listing a trace's spans
	// and for the time index of spans.
	AddMembers(ctx context.Context, projectID, traceID, batchID string, at time.Time, spanIDs []string) error
	// ApplyTrace adds d to the trace, creating it when missing. It returns the trace's session
	// (the stored one, else d's) and whether the trace joined that session with this call,
	// which is true for exactly one call per trace, however many run concurrently.
	ApplyTrace(ctx context.Context, projectID string, d TraceDelta) (joined bool, sessionID string, err error)
	// ApplySession adds d to the session, creating it when missing.
	ApplySession(ctx context.Context, projectID string, d SessionDelta) error
	// Traces and Sessions read back what was written, to answer creates.
	Traces(ctx context.Context, projectID string, ids []string) ([]Trace, error)
	Sessions(ctx context.Context, projectID string, ids []string) ([]Session, error)
}

// Blobs stores batch objects.
type Blobs interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
}

// Pricer computes the cost of an llm span for a project: the project's own price when it has
// one for the model, else the shipped price table. ok is false for an unknown model.
type Pricer interface {
	Cost(ctx context.Context, projectID string, u LLMUsage) (cost float64, source string, ok bool, err error)
}

// Time indexes of a project, walked by Reader.WalkIndex.
const (
	IndexSpans    = "SPANS"
	IndexTraces   = "TRACES"
	IndexSessions = "SESSIONS"
)

// TimeRange bounds a walk of a time index: entries created in [From, To), newest first. A zero
// From walks back MaxDays days from To; a zero To starts now.
type TimeRange struct {
	From, To time.Time
	MaxDays  int
}

// Reader reads what Index wrote. Unknown ids are left out of results, never errors.
type Reader interface {
	Summaries(ctx context.Context, projectID string, spanIDs []string) (map[string]Summary, error)
	// TraceSpanIDs returns the ids of every span of a trace.
	TraceSpanIDs(ctx context.Context, projectID, traceID string) ([]string, error)
	// SessionTraceIDs returns the ids of every trace of a session.
	SessionTraceIDs(ctx context.Context, projectID, sessionID string) ([]string, error)
	// WalkIndex visits the ids of one time index newest first, a page at a time, until visit
	// returns false.
	WalkIndex(ctx context.Context, projectID, index string, r TimeRange, visit func(ids []string) (more bool, err error)) error
	Traces(ctx context.Context, projectID string, ids []string) ([]Trace, error)
	Sessions(ctx context.Context, projectID string, ids []string) ([]Session, error)
}
