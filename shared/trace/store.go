package trace

import (
	"context"
	"time"

	"github.com/plumehq/plume/shared/bound"
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
	InputTokens     int64 // an llm span's usage (Span.LLM); 0 without one, and in summaries of earlier releases
	OutputTokens    int64
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
	// Model is the model the span's usage names (cut to summaryModelBytes), for the metrics by
	// model; "" for spans without one and for summaries of earlier releases.
	Model string
	// ABChoices are the span's A/B choices, their test and variant only (ID and Value ""):
	// the change stream carries them from the span's index item to the span's signal record
	// (ddb.SignalJoin). None for most spans, whose item does not grow.
	ABChoices []ABChoice
	// What the span says of its trace and session, which the trace and session aggregates
	// take from its summary: the trace's tags, the session's name and tags (each bounded as
	// Tags is), and a root span's previews of its input and output (rootPreviewBytes each).
	TraceTags   map[string]string
	SessionName string
	SessionTags map[string]string
	RootInput   string
	RootOutput  string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Location    Location
	// WriteID is the TraceWrite that stored this version ("" for summaries of earlier releases).
	WriteID string
}

// Location is where a span's full record is: a byte range of an NDJSON batch object.
type Location struct {
	Key    string
	Offset int64
	Length int64
}

// SummaryPut writes a summary if the stored one is still the one it was based on: Prev is the
// summary read before (nil: the span must not exist yet), identified by its WriteID, or by its
// UpdatedAt when it has none (a summary of an earlier release).
type SummaryPut struct {
	Summary Summary
	Prev    *Summary
}

// TracePut is what POST /traces sets on a trace (spec §2.7 create fields): its own fields, the
// session it joins, its tags and its times, which widen its extent. Name and status, when
// given, win over what the spans imply; cost is the trace's own cost, added to its spans'
// costs (setting it again replaces it, so a re-sent create is not counted twice).
type TracePut struct {
	TraceID    string
	SessionID  string
	Name       string
	Status     string
	Cost       *float64
	Attributes string // compact JSON object, "" when none
	Tags       map[string]string
	StartedAt  time.Time
	EndedAt    *time.Time
	At         time.Time
}

// SessionDelta is what POST /sessions sets on a session: its name, tags and attributes.
type SessionDelta struct {
	SessionID string
	Name      string
	Tags      map[string]string
	// Attributes is the compact JSON object of a session created through POST /sessions.
	Attributes string
	At         time.Time
}

// Index stores span summaries and the fields clients set on traces and sessions. Every method
// is scoped to one project and returns errs.CodeUnavailable when storage throttles.
//
// The aggregates of traces and sessions (counts, errors, cost, extent, root, members) are not
// written here: the consumer of the table's change stream computes them from the summaries'
// records (ddb.AggregateStore), seconds after the write, exactly once whatever fails. A
// request that stored its summaries has done all it must.
type Index interface {
	// Summaries returns the stored summaries of the given span ids (strongly consistent);
	// unknown ids are absent from the map.
	Summaries(ctx context.Context, projectID string, spanIDs []string) (map[string]Summary, error)
	// PutSummaries stores puts, each under its condition, recording writeID in each, and
	// returns the ids whose condition failed (another writer changed the span first: read and
	// merge again); the others are stored.
	PutSummaries(ctx context.Context, projectID, writeID string, puts []SummaryPut, at time.Time) (conflicts []string, err error)
	// PutTrace sets the fields of a trace created through POST /traces, creating it when
	// missing; its spans' aggregates are left as they are.
	PutTrace(ctx context.Context, projectID string, t TracePut) error
	// ApplySession sets the fields of a session created through POST /sessions (d has no
	// counts), creating it when missing.
	ApplySession(ctx context.Context, projectID string, d SessionDelta) error
	// Traces and Sessions read back what was written, to answer creates.
	Traces(ctx context.Context, projectID string, ids []string) ([]Trace, error)
	Sessions(ctx context.Context, projectID string, ids []string) ([]Session, error)
}

// Blobs stores batch objects.
type Blobs interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
	RangeReader
}

// RangeReader reads byte ranges of objects: all LoadRecords needs.
type RangeReader interface {
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

// Totals are the aggregates of a trace (Count: spans) or a session (Count: traces).
type Totals struct {
	Count  int
	Errors int
	Cost   float64
	Start  *time.Time
	End    *time.Time
}

// Recount compares a trace's or session's stored aggregates with a recomputation from what it
// is made of (a trace's member spans, a session's traces). LastChange is when the aggregate or
// what it is made of last changed: the change stream applies a change seconds after it, so a
// recount of something changed in the last minutes may differ only because the stream has not
// caught up.
type Recount struct {
	Stored     Totals
	Computed   Totals
	LastChange time.Time
}

// Exact reports whether the stored aggregates equal the recomputed ones.
func (r Recount) Exact() bool { return r.Stored.Equal(r.Computed) }

// Equal reports whether two totals are the same, costs compared on bound.CostGrid.
func (t Totals) Equal(u Totals) bool {
	return t.Count == u.Count && t.Errors == u.Errors && bound.Round(t.Cost-u.Cost, bound.CostGrid) == 0 &&
		sameTime(t.Start, u.Start) && sameTime(t.End, u.End)
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
