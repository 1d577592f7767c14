package api

import (
	"encoding/json"
	"time"
)

// MaxTagFilters is the most tag filters (query parameters that are not the route's own) that
// GET /spans, /traces and /sessions take; more answer 400 invalid_request. A query narrows by a
// few tags (env, user, feature: the dashboard's form offers 10), and each filter is compared
// on every item the query examines and named back in X-Plume-Tag-Filters, so a request of
// thousands of parameters would cost the reader and grow the answer's header without finding
// anything a handful would not; 20 is room to spare for any real query.
const MaxTagFilters = 20

// Limits of what one span may carry, in bytes (POST /spans, /traces and /sessions): a longer
// name, tag or id rejects the span; the lists refuse a longer filter (400).
const (
	MaxSpanNameLen = 1024
	MaxTagKeyLen   = 128
	MaxTagValueLen = 1024
	MaxIDLen       = 128
)

// MaxTokenCount bounds a token count read from a span's attributes: a larger one is read as
// nonsense (the count absent), not rejected.
const MaxTokenCount = 1 << 40

// SpanKind is what a span times (spec §2.6, kind): a model call, a tool run, a request.
//
// The set is open, as the server treats it: POST /spans stores any kind of 1 to
// MaxSpanKindLength letters, digits, '_' and '-', lowercased (absent, null or "" is
// SpanKindGeneric), and GET /spans?span_kind= filters on any stored kind. SpanKinds are the
// kinds Plume itself knows: an llm span is a completion of its prompt and what judges
// evaluate; OTLP ingestion maps tool calls to tool; the dashboard's kind select offers these.
// The Go client, the CLI, the OpenAPI document and the dashboard take their kinds from here.
type SpanKind string

// The known span kinds: the spec's six, and tool, an agent's tool call (what the Go client
// sends for one, and what OTLP ingestion makes of an OpenInference, GenAI or Traceloop tool
// span).
const (
	SpanKindLLM         SpanKind = "llm"
	SpanKindGeneric     SpanKind = "generic"
	SpanKindTool        SpanKind = "tool"
	SpanKindHTTP        SpanKind = "http"
	SpanKindDatabase    SpanKind = "database"
	SpanKindVectorStore SpanKind = "vector_store"
	SpanKindTTS         SpanKind = "tts"
)

// SpanKinds lists the known span kinds, the most common first (the order of the dashboard's
// select). It is not the set the server accepts: see SpanKind.
var SpanKinds = []SpanKind{
	SpanKindLLM, SpanKindGeneric, SpanKindTool, SpanKindHTTP, SpanKindDatabase, SpanKindVectorStore, SpanKindTTS,
}

// MaxSpanKindLength is the longest span kind POST /spans takes, in bytes; a longer one rejects
// the span.
const MaxSpanKindLength = 64

// SpanInput is an element of POST /spans (spec §2.6) in the form the Go client writes it: the
// field names of the zeroeval SDKs, times in RFC 3339, absent values left out. The server
// reads more forms than this one (shared/trace/WIRE.md: times as Unix epochs, ids that are not
// UUIDs, input_data as any JSON value, numbers as strings) with a decoder of its own, which
// FuzzSpanInputEquivalence (shared/trace) holds equal to encoding/json's reading of this type.
type SpanInput struct {
	ID           string            `json:"id"`
	TraceID      string            `json:"trace_id"`
	ParentSpanID string            `json:"parent_span_id,omitempty"`
	Name         string            `json:"name"`
	Kind         SpanKind          `json:"kind"`
	Status       string            `json:"status,omitempty"`
	StartedAt    time.Time         `json:"started_at"`
	EndedAt      time.Time         `json:"ended_at,omitzero"`
	DurationMS   float64           `json:"duration_ms,omitempty"`
	SessionID    string            `json:"session_id,omitempty"`
	Session      *SessionRef       `json:"session,omitempty"`
	InputData    *string           `json:"input_data,omitempty"`
	OutputData   *string           `json:"output_data,omitempty"`
	Attributes   map[string]any    `json:"attributes,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	TraceTags    map[string]string `json:"trace_tags,omitempty"`
	SessionTags  map[string]string `json:"session_tags,omitempty"`
	ErrorCode    string            `json:"error_code,omitempty"`
	ErrorMessage string            `json:"error_message,omitempty"`
	ErrorStack   string            `json:"error_stack,omitempty"`
	CodeFilepath string            `json:"code_filepath,omitempty"`
	CodeLineno   *int              `json:"code_lineno,omitempty"`
	// Cost is in USD; without it an llm span is priced by its model and tokens.
	Cost *float64 `json:"cost,omitempty"`
	// ABChoices are the A/B choices made in the span (at most MaxSpanABChoices, one per
	// choice_name).
	ABChoices []SpanABChoice `json:"ab_choices,omitempty"`
}

// SessionRef names the session of a span of POST /spans, and the session's name.
type SessionRef struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// RejectedSpan is one entry of the X-Plume-Rejected-Spans header of POST /spans: a span of the
// batch that was not stored (the others were), by its position in the request array, with its
// id when it had a readable one and the reason. The header holds a JSON array of these, ASCII
// only, cut to whole entries at 4 KB; X-Plume-Rejected holds how many spans were rejected.
type RejectedSpan struct {
	Index int    `json:"index"`
	ID    string `json:"id,omitempty"`
	Error string `json:"error"`
}

// TraceInput is an element of POST /traces (spec §2.7) in the form a client writes it; the
// server reads more forms (times as Unix epochs, ids that are not UUIDs), as for SpanInput.
// SessionID, Name and StartedAt are required.
type TraceInput struct {
	ID         string            `json:"id,omitempty"`
	SessionID  string            `json:"session_id"`
	Name       string            `json:"name"`
	Status     string            `json:"status,omitempty"`
	StartedAt  time.Time         `json:"started_at"`
	EndedAt    time.Time         `json:"ended_at,omitzero"`
	DurationMS *float64          `json:"duration_ms,omitempty"`
	Cost       *float64          `json:"cost,omitempty"`
	Attributes map[string]any    `json:"attributes,omitempty"`
	Tags       map[string]string `json:"tags,omitempty"`
}

// SessionInput is an element of POST /sessions (spec §2.8) in the form a client writes it.
// ProjectID is required.
type SessionInput struct {
	ID         string            `json:"id,omitempty"`
	ProjectID  string            `json:"project_id"`
	Name       string            `json:"name,omitempty"`
	Attributes map[string]any    `json:"attributes,omitempty"`
	Tags       map[string]string `json:"tags,omitempty"`
}

// The statuses of spans and traces.
const (
	StatusUnset = "unset"
	StatusOK    = "ok"
	StatusError = "error"
)

// Span is a span as POST /spans and GET /spans answer it (spec §2.6, SpanRead). Optional fields
// are null when the span never had them. Attributes is the client's attribute object as sent
// (compact JSON, {} when absent). Tags are the span's; TraceTags and SessionTags are the tags
// it gave its trace and session, present only when it gave any.
type Span struct {
	ID           string     `json:"id"`
	TraceID      string     `json:"trace_id"`
	ParentSpanID *string    `json:"parent_span_id"`
	ProjectID    string     `json:"project_id"`
	Name         string     `json:"name"`
	Kind         string     `json:"kind"`
	Status       *string    `json:"status"`
	StartedAt    time.Time  `json:"started_at"`
	EndedAt      *time.Time `json:"ended_at"`
	DurationMS   *float64   `json:"duration_ms"`
	// Cost is in USD: the client's when it sent one, else the price of the llm span's model
	// and tokens, else null.
	Cost *float64 `json:"cost"`
	// CostSource says where Cost came from: "client", "price_table", "project_price" or
	// "unknown_model" (Cost is null: the model is not priced).
	CostSource   *string           `json:"cost_source,omitempty"`
	SessionID    *string           `json:"session_id"`
	SessionName  *string           `json:"session_name,omitempty"`
	InputData    *string           `json:"input_data"`
	OutputData   *string           `json:"output_data"`
	Attributes   json.RawMessage   `json:"attributes"`
	Tags         map[string]string `json:"tags"`
	TraceTags    map[string]string `json:"trace_tags,omitempty"`
	SessionTags  map[string]string `json:"session_tags,omitempty"`
	ErrorCode    *string           `json:"error_code"`
	ErrorMessage *string           `json:"error_message"`
	ErrorStack   *string           `json:"error_stack"`
	CodeFilepath *string           `json:"code_filepath"`
	CodeLineno   *int              `json:"code_lineno"`
	// PromptLink is the prompt version an llm span was made with, read from its
	// attributes.zeroeval; absent when it names none.
	PromptLink *PromptLink `json:"prompt_link,omitempty"`
	// Attachments are the span's files kept in the bucket (GET /spans/{id}/attachments signs
	// URLs for them); absent when it has none.
	Attachments []SpanAttachment `json:"attachments,omitempty"`
	// ABChoices are the A/B choices the span carries, as the SDK sent them in its ab_choices
	// (at most MaxSpanABChoices, one per choice_name: the first kept); absent when it carries
	// none. Each makes the span's judges' verdicts and feedback count for its variant in the
	// test's report (docs/signals.md).
	ABChoices []SpanABChoice `json:"ab_choices,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	// Cut names the fields of which this answer holds only a prefix (input_data, output_data,
	// error_stack, error_message): a span whose JSON encoding would pass MaxAnswerBytes (texts
	// of control characters, each six bytes escaped) is answered with its largest texts cut
	// until it fits, largest first. Absent when the span is whole, as it is unless its texts
	// escape to more than MaxAnswerBytes.
	Cut []string `json:"cut,omitempty"`
}

// MaxSpanABChoices is how many A/B choices one span carries: POST /spans rejects a span with
// more (in rejected, like every span limit).
const MaxSpanABChoices = 8

// SpanABChoice is one element of a span's ab_choices (COMPAT.md): the variant of an A/B test
// that the span's code was given. ABChoiceID is absent when the SDK sent none.
type SpanABChoice struct {
	ABChoiceID   string `json:"ab_choice_id,omitempty"`
	ChoiceName   string `json:"choice_name"`
	VariantKey   string `json:"variant_key"`
	VariantValue string `json:"variant_value"`
}

// PromptLink ties an llm span to the prompt version it used: attributes.zeroeval as the SDK
// integrations write it (COMPAT.md), whichever of its keys were present.
type PromptLink struct {
	Task            string `json:"task,omitempty"`
	PromptSlug      string `json:"prompt_slug,omitempty"`
	PromptVersion   int    `json:"prompt_version,omitempty"`
	PromptVersionID string `json:"prompt_version_id,omitempty"`
	ContentHash     string `json:"content_hash,omitempty"`
}

// SpanAttachment is a file of a span as the span records it: its object key in the bucket.
type SpanAttachment struct {
	Type        string `json:"type"`
	Label       string `json:"label,omitempty"`
	Key         string `json:"key"`
	ContentType string `json:"content_type,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// Trace is a trace as POST /traces and GET /traces answer it (spec §2.7): its own fields and
// the aggregates of its spans (cost in USD, span and error counts, the root span's input and
// output). Status is "error" when any span failed, else the status set through POST /traces,
// else the root span's, else "unset".
type Trace struct {
	ID             string            `json:"id"`
	ProjectID      string            `json:"project_id"`
	SessionID      *string           `json:"session_id"`
	Name           string            `json:"name"`
	Status         string            `json:"status"`
	StartedAt      *time.Time        `json:"started_at"`
	EndedAt        *time.Time        `json:"ended_at"`
	DurationMS     *float64          `json:"duration_ms"`
	Cost           float64           `json:"cost"`
	SpanCount      int               `json:"span_count"`
	ErrorCount     int               `json:"error_count"`
	RootSpanID     *string           `json:"root_span_id"`
	RootSpanInput  *string           `json:"root_span_input"`
	RootSpanOutput *string           `json:"root_span_output"`
	Tags           map[string]string `json:"tags"`
	Attributes     map[string]any    `json:"attributes,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
}

// Session is a session as POST /sessions and GET /sessions answer it (spec §2.8). Duration is
// in milliseconds, from the first span's start to the last span's end.
type Session struct {
	ID         string            `json:"id"`
	ProjectID  string            `json:"project_id"`
	Name       *string           `json:"name"`
	TraceCount int               `json:"trace_count"`
	ErrorCount int               `json:"error_count"`
	Cost       float64           `json:"cost"`
	Duration   *float64          `json:"duration"`
	StartedAt  *time.Time        `json:"started_at"`
	EndedAt    *time.Time        `json:"ended_at"`
	Tags       map[string]string `json:"tags"`
	Attributes map[string]any    `json:"attributes,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	UpdatedAt  time.Time         `json:"updated_at"`
}
