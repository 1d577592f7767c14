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

// TraceWrite is one write of a trace's changed spans: the pending delta they add to the trace,
// then their summaries (Index.WriteTrace). ID names the write (a UUIDv7: pending deltas are
// applied in ID order); each summary records it as its WriteID.
type TraceWrite struct {
	ID    string
	Delta TraceDelta
	Puts  []SummaryPut
	// Noted is set when the write's trace is listed in a note of its request (Index.NoteWrites),
	// which is how the sweeper finds the write if the request fails: the pending delta then
	// needs no sweeper entry of its own.
	Noted bool
}

// WriteNote lists the traces a round of a request writes pending deltas to, written before
// them (Index.NoteWrites) and cleared once the request's heals applied them all
// (Index.ClearNote): what the sweeper reads to find the deltas of a request that failed half-way.
type WriteNote struct {
	ID     string // a UUIDv7
	At     time.Time
	Traces []string
}

// Healed is what a trace's heal did: Session is the trace's session when it may have pending
// deltas for HealSession; Left is set when some of the caller's own writes' deltas are left to
// the next healer (a later write of the trace, or the sweeper).
type Healed struct {
	Session string
	Left    bool
}

// GroupHealer is an Index that heals several traces of one session at once: HealTraces
// answers what HealTrace answers for each trace, in order, and may apply them together so that
// their session is written once (ddb's TraceStore does when every trace's deltas can be applied
// now). IngestBatch heals the traces of a batch that name one session through it.
type GroupHealer interface {
	HealTraces(ctx context.Context, projectID string, traceIDs []string, own ...Written) ([]Healed, error)
}

// Written is one of a healer's own writes, all of whose summary puts are done: Stored are the
// spans whose put it saw succeed (the others failed their condition, or took effect on an
// attempt whose answer was lost, which a heal finds out by reading them).
type Written struct {
	WriteID string
	Stored  []string
}

// PendingGrace is how long after a write its request may still be putting summaries: longer
// than any function's timeout. A span change whose summary is not stored is dropped only when
// its write is older than this, or is the healer's own.
const PendingGrace = 2 * time.Minute

// MaxSpansPerWrite is how many span summaries one TraceWrite holds, so that its pending delta
// stays far below DynamoDB's 400 KB item.
const MaxSpansPerWrite = 1000

// TraceDelta is what one write adds to a trace. Spans, Errors and Cost are added as they are
// (POST /traces sends none); the spans of a write change the trace through Changes, each
// counted only when its summary was stored.
type TraceDelta struct {
	TraceID   string
	SessionID string
	Spans     int
	Errors    int
	Cost      float64
	Changes   []SpanChange
	MinStart  time.Time
	MaxEnd    *time.Time
	// Shrink is set when a span of the write moved its start later or its end earlier: the
	// trace's start and end are then recomputed from its spans, as a minimum and maximum cannot
	// be undone by a difference.
	Shrink bool
	// FirstName names the trace until its root span arrives.
	FirstName string
	Root      *RootSpan
	Tags      map[string]string
	// SessionName and SessionTags are what the spans say of their session.
	SessionName string
	SessionTags map[string]string
	// Batch names the request's batch of spans, by which a prompt's completions are listed.
	Batch string
	// Explicit carries the fields of a trace created through POST /traces.
	Explicit *TraceFields
	At       time.Time
}

// SpanChange is what one span of a write changes in its trace's counts: the difference from
// the version it replaces.
type SpanChange struct {
	SpanID string
	// Prev is the WriteID of the summary the write replaces ("" for a new span, or one stored
	// before summaries recorded their write).
	Prev   string
	New    bool
	Errors int
	Cost   float64
	// Completion is the prompt slug of an llm span linked to a prompt: a completion its
	// feedback links list.
	Completion string
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
//
// Aggregates are eventually exact whatever fails: a write first records the pending delta its
// spans cause, then puts their summaries, each recording the write (WriteTrace); applying pending
// deltas (HealTrace, HealSession) counts each span change once, and only when its summary was
// stored, in a transaction that deletes what it applies. Whoever heals, the writing request, a
// later write or re-send of the same trace, or the sweeper, finishes what a failed request left.
type Index interface {
	// Summaries returns the stored summaries of the given span ids (strongly consistent);
	// unknown ids are absent from the map.
	Summaries(ctx context.Context, projectID string, spanIDs []string) (map[string]Summary, error)
	// WriteTrace stores w's pending delta, then w's summaries, each under its condition, and
	// returns the ids whose condition failed (another writer changed the span first: read and
	// merge again); the others are stored.
	WriteTrace(ctx context.Context, projectID string, w TraceWrite) (conflicts []string, err error)
	// NoteWrites records, before a round's pending deltas, the traces they go to (WriteNote);
	// ClearNote removes the note once every delta of the request's own writes is applied, so
	// the sweeper reads only the notes of requests that failed half-way.
	NoteWrites(ctx context.Context, projectID string, n WriteNote) error
	ClearNote(ctx context.Context, projectID string, n WriteNote) error
	// HealTrace applies the trace's pending deltas that can be decided to the trace and what
	// they add to its session, and returns the session when it may have pending deltas for
	// HealSession ("" when the trace has none, or this heal updated it itself), and whether
	// some of own's deltas are left to the next healer (Healed). own are the
	// caller's writes, whose summary puts are all done; a
	// span change of another write is counted once its summary is seen, and dropped once its
	// put can no longer take effect (the version it was conditioned on is gone) or that write
	// is older than PendingGrace (its request has ended). Concurrent calls apply each change
	// once.
	HealTrace(ctx context.Context, projectID, traceID string, own ...Written) (Healed, error)
	// HealSession applies the session's pending deltas to the session.
	HealSession(ctx context.Context, projectID, sessionID string) error
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
// is made of (a trace's member spans, a session's traces). Pending is how many pending deltas
// were not applied yet: until they are, spans of their writes may be missing from both (a span
// becomes a member when its delta is applied), so Exact speaks for the applied part only.
type Recount struct {
	Stored   Totals
	Computed Totals
	Pending  int
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
