package trace

import (
	"encoding/json"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/bound"
)

// The known span kinds (api.SpanKinds), as the strings a Span holds; any other kind of
// [a-z0-9_-]{1,64} is accepted and stored as given (api.SpanKind).
const (
	KindGeneric     = string(api.SpanKindGeneric)
	KindLLM         = string(api.SpanKindLLM)
	KindTool        = string(api.SpanKindTool)
	KindTTS         = string(api.SpanKindTTS)
	KindHTTP        = string(api.SpanKindHTTP)
	KindDatabase    = string(api.SpanKindDatabase)
	KindVectorStore = string(api.SpanKindVectorStore)
)

// Span statuses (api's).
const (
	StatusUnset = api.StatusUnset
	StatusOK    = api.StatusOK
	StatusError = api.StatusError
)

// Span is one validated span as stored and as read back. Optional fields are nil when the
// client did not send them, which is what lets a later write of the same span id change only
// the fields it carries.
//
// Its JSON form is Record, the line of a batch object in S3: the json tags here are Record's
// (TestRecordEncoder and TestAppendJSONMatchesMarshal hold AppendJSON, json.Marshal(span) and
// json.Marshal(RecordOf(span)) equal), so that LoadRecords decodes a stored line straight into a
// Span. The API answers api.Span, converted by the tracing area, never these tags.
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
	// Cost is the caller's cost when given, else the price table's for llm spans, else nil.
	Cost *float64 `json:"cost"`
	// CostSource says where Cost came from: "client", "price_table", "project_price" or
	// "unknown_model" (Cost is nil: the model is not in the price table).
	CostSource  *string `json:"cost_source,omitempty"`
	SessionID   *string `json:"session_id"`
	SessionName *string `json:"session_name,omitempty"`
	InputData   *string `json:"input_data"`
	OutputData  *string `json:"output_data"`
	// Attributes is the client's attribute object, compact JSON, kept exactly as sent ({} when
	// absent). What Plume itself needs from it is parsed into LLM and Link.
	Attributes   json.RawMessage `json:"attributes"`
	Tags         Tags            `json:"tags"`
	TraceTags    Tags            `json:"trace_tags,omitempty"`
	SessionTags  Tags            `json:"session_tags,omitempty"`
	ErrorCode    *string         `json:"error_code"`
	ErrorMessage *string         `json:"error_message"`
	ErrorStack   *string         `json:"error_stack"`
	CodeFilepath *string         `json:"code_filepath"`
	CodeLineno   *int            `json:"code_lineno"`
	// LLM is the model usage read from the attributes (kind llm, or any span naming a model).
	LLM *LLMUsage `json:"-"`
	// Link ties an llm span to the prompt version it used (attributes.zeroeval, COMPAT.md).
	Link *PromptLink `json:"prompt_link,omitempty"`
	// Attachments are references to objects extracted at ingestion (never inline bytes).
	Attachments []Attachment `json:"attachments,omitempty"`
	// ABChoices are the A/B choices the span carries (its ab_choices): each makes the span's
	// outcomes count for the choice's variant (signal.Service.Carry).
	ABChoices []ABChoice `json:"ab_choices,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// Attachment is a file of a span kept in S3.
type Attachment struct {
	Type  string `json:"type"`
	Label string `json:"label,omitempty"`
	Key   string `json:"key"` // the object key in the bucket
	// ContentType is the stored object's media type.
	ContentType string `json:"content_type,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// HasError reports whether the span failed: status error or an error code or message.
func (s *Span) HasError() bool {
	return (s.Status != nil && *s.Status == StatusError) || s.ErrorCode != nil || s.ErrorMessage != nil
}

// Rejected is a span of a batch that could not be stored, and why.
type Rejected struct {
	Index int // position in the request array
	ID    string
	Error string
}

// Limits of what one span may carry. Larger values are rejected per span (never truncated
// silently), except where noted.
const (
	// MaxBatchBytes caps a request body once decoded (gunzipped). As sent, a body must also fit
	// Lambda's 6 MB event, where JSON counts escaped and a compressed body base64-encoded
	// (lambdahttp.MaxRequestPayload, MaxBinaryBody): API Gateway refuses a larger one (413).
	MaxBatchBytes     = 5 << 20
	MaxSpansPerBatch  = 1000
	MaxNameLen        = api.MaxSpanNameLen
	MaxDataBytes      = 1 << 20 // input_data and output_data, each
	MaxAttributeBytes = 256 << 10
	MaxTagKeys        = 64
	MaxTagKeyLen      = api.MaxTagKeyLen
	MaxTagValueLen    = api.MaxTagValueLen
	MaxErrorBytes     = 64 << 10 // error_message and error_stack, each
	MaxIDLen          = api.MaxIDLen
	// MaxTokens bounds a token count read from the attributes: a larger one is ignored as
	// nonsense (the count is absent), not rejected. It is shared/bound's.
	MaxTokens = bound.MaxTokens
)

// LLMUsage is what cost needs from an llm span's attributes.
type LLMUsage struct {
	Provider          string
	Model             string
	InputTokens       int64 // all input tokens, cached ones included
	OutputTokens      int64 // all output tokens, reasoning ones included
	CachedInputTokens int64 // input tokens read from a prompt cache (part of InputTokens)
	CacheWriteTokens  int64 // input tokens written to a prompt cache (part of InputTokens)
	ReasoningTokens   int64 // output tokens spent reasoning (part of OutputTokens)
}

// PromptLink is the prompt version an llm span was made with: attributes.zeroeval, written by
// the SDK integrations from the hidden <zeroeval> metadata of the prompt helper.
type PromptLink struct {
	Task            string `json:"task,omitempty"`
	PromptSlug      string `json:"prompt_slug,omitempty"`
	PromptVersion   int    `json:"prompt_version,omitempty"`
	PromptVersionID string `json:"prompt_version_id,omitempty"`
	ContentHash     string `json:"content_hash,omitempty"`
}

// Ref stores v in *slot and returns slot. The decoders of spans (DecodeBatch, otlp.Map) point
// the optional fields of a span into one block of values per span, one allocation instead of
// one per field: s.Cost = trace.Ref(&values.cost, cost).
func Ref[T any](slot *T, v T) *T {
	*slot = v
	return slot
}

// OptionalRef is Ref for strings, with nil for "" (an optional string field is nil or not
// empty).
func OptionalRef(slot *string, v string) *string {
	if v == "" {
		return nil
	}
	return Ref(slot, v)
}
