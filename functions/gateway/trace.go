package gateway

// This file records a gateway call as an llm span of its project's traces: which calls are
// recorded (TraceMode, traceRequest) and their span (spanOf, recordCall), from what their answer
// said (answerRecorder, answer.go).

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/textcut"
	"github.com/plumehq/plume/shared/trace"
)

// TraceHeader turns the recording of one call on ("on", "true", "1") or off ("off", "false",
// "0"), in any case; another value counts as absent.
const TraceHeader = "X-Plume-Trace"

// TraceMode says which gateway calls are recorded as llm spans: PLUME_GATEWAY_TRACE.
//
// The default is TraceOff, recording only the calls that ask (traceRequest), because the
// zeroeval SDKs already record the calls they send here: a model bound to a prompt version as
// zeroeval/<model> is called through the gateway, and the SDK records that call as its own llm
// span (COMPAT.md, "Model binding"). Its request carries no marker the gateway could tell it by
// (a plain OpenAI client's request, no traceparent), so recording every call would record those
// calls twice. TraceAll is for deployments whose clients do not trace themselves.
type TraceMode string

// Trace modes.
const (
	// TraceOff records the calls that ask: a traceparent header or X-Plume-Trace: on.
	TraceOff TraceMode = "off"
	// TraceAll records every call, except those with X-Plume-Trace: off.
	TraceAll TraceMode = "all"
)

// ParseTraceMode reads PLUME_GATEWAY_TRACE: "off" or "" (TraceOff), or "all", in any case.
func ParseTraceMode(s string) (TraceMode, error) {
	switch m := TraceMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", TraceOff:
		return TraceOff, nil
	case TraceAll:
		return TraceAll, nil
	}
	return "", fmt.Errorf("PLUME_GATEWAY_TRACE: %q is not off or all", textcut.Quote(s, 64))
}

// traceContext is where a recorded call's span goes.
type traceContext struct {
	// traceID is the span's trace: the traceparent's, mapped to a Plume id, or a new one.
	traceID string
	// parentSpanID is the traceparent's parent span, mapped to a Plume id; "" for a root.
	parentSpanID string
	// spanID is the id the call's span will have, known before the call is answered (a
	// response header can tell it, for feedback on the completion); "" for a new one.
	spanID string
}

// traceRequest tells whether the call r is recorded, and where. It is recorded when it joins a
// trace (a valid W3C traceparent header), asks (X-Plume-Trace: on), or mode is TraceAll; never
// with X-Plume-Trace: off, whatever else it says. An invalid traceparent is ignored, as the W3C
// recommendation says (the call then starts a trace of its own), never an error: a caller's
// tracing must not fail its call.
//
// The ids of a traceparent map to Plume's as the zeroeval SDKs and the OTLP receiver map
// OpenTelemetry's (COMPAT.md, "OTLP"): the trace id's 16 bytes are the trace's UUID, the parent
// id's 8 bytes followed by 8 zero bytes its span's UUID, so that the span joins the caller's
// trace under the caller's span. Without one, the trace is new (a random UUID) and the span its
// root.
//
// A client that traces itself but also propagates traceparent on its HTTP calls (a zeroeval SDK
// beside OpenTelemetry's HTTP instrumentation) is recorded twice unless it sends
// X-Plume-Trace: off.
func traceRequest(r *http.Request, mode TraceMode) (tc traceContext, on bool) {
	asked, said := traceSwitch(r.Header.Get(TraceHeader))
	if said && !asked {
		return traceContext{}, false
	}
	tc, joined := parseTraceparent(r.Header.Values("Traceparent"))
	if !joined && !asked && mode != TraceAll {
		return traceContext{}, false
	}
	if !joined {
		tc = traceContext{traceID: uuid.NewString()}
	}
	tc.spanID = uuid.NewString()
	return tc, true
}

// traceSwitch reads X-Plume-Trace: on is its value, said false for an absent or unknown value.
func traceSwitch(v string) (on, said bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "1":
		return true, true
	case "off", "false", "0":
		return false, true
	}
	return false, false
}

// parseTraceparent reads the traceparent header, given as its values: false unless there is
// exactly one and it is valid
// (https://www.w3.org/TR/trace-context/#traceparent-header): version-traceid-parentid-flags in
// lowercase hex, version 00 exactly 55 characters, a higher version (not ff) at least 55 with a
// "-" after them (https://www.w3.org/TR/trace-context/#versioning-of-traceparent), neither id
// all zeros.
func parseTraceparent(values []string) (traceContext, bool) {
	if len(values) != 1 {
		return traceContext{}, false
	}
	h := values[0]
	if len(h) < 55 || h[2] != '-' || h[35] != '-' || h[52] != '-' {
		return traceContext{}, false
	}
	version, traceHex, parentHex, flags := h[0:2], h[3:35], h[36:52], h[53:55]
	switch {
	case !isLowerHex(version) || version == "ff":
		return traceContext{}, false
	case version == "00" && len(h) != 55, len(h) > 55 && h[55] != '-':
		return traceContext{}, false
	case !isLowerHex(traceHex) || !isLowerHex(parentHex) || !isLowerHex(flags):
		return traceContext{}, false
	case strings.Trim(traceHex, "0") == "" || strings.Trim(parentHex, "0") == "":
		return traceContext{}, false
	}
	var traceID, parentID uuid.UUID // parentID: 8 bytes, then zeros
	_, _ = hex.Decode(traceID[:], []byte(traceHex))
	_, _ = hex.Decode(parentID[:8], []byte(parentHex))
	return traceContext{traceID: traceID.String(), parentSpanID: parentID.String()}, true
}

// isLowerHex reports whether s is all [0-9a-f].
func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// gatewayCall is what the span of a gateway call is made of.
type gatewayCall struct {
	ProjectID string
	// Model is the request's model, as the client sent it ("zeroeval/gpt-4o-mini").
	Model string
	// Target is where the call was routed: the provider and the provider's model name.
	Target llm.Target
	// Messages is the request's "messages", as sent to the provider (the linkage metadata
	// stripped).
	Messages json.RawMessage
	// Stream is the request's "stream".
	Stream bool
	// Started is when the request arrived, Ended when its answer was written.
	Started, Ended time.Time
	// Answer is the recorder the call was answered through.
	Answer *answerRecorder
	// Relayed is what the relay answered (outcome.answer); nil when the recorder read the
	// answer. FirstToken is when the first token of Relayed's stream left; zero when the
	// recorder knows.
	Relayed    *answer
	FirstToken time.Time
	// Usage is the usage of the relay's outcome; HasUsage is false when it had none, and the
	// answer's is used.
	Usage    Usage
	HasUsage bool
	// ProviderRequestID is the provider's id of the call; "" when unknown.
	ProviderRequestID string
	// Price is what the call cost, priced once by the gateway: the span carries it, and
	// ingestion does not price it again. A zero Price leaves the span to ingestion's pricer.
	Price callPrice
	// Link is the prompt version the call was made with (the X-Plume-Prompt-Version header or
	// the linkage metadata); zero when none.
	Link trace.PromptLink
	// Err is why the call failed, when the gateway knows better than its answer; "" otherwise.
	Err string
}

// spanName is the name of a gateway call's span: the API called, as the zeroeval SDKs name
// their span of the same call "openai.chat.completions.create".
const spanName = "chat.completions"

// spanTag marks the spans the gateway records, as the SDKs' integrations tag theirs
// (integration: openai).
var spanTag = trace.Tag{Key: "integration", Value: "gateway"}

// spanAttributes are the attributes of a gateway call's span: those of the zeroeval SDKs' llm
// spans that the gateway knows (provider, model, inputTokens, outputTokens, streaming,
// openai_id, zeroeval; COMPAT.md, "Span ingestion"), and the gateway's own.
type spanAttributes struct {
	Provider     string `json:"provider,omitempty"`
	Model        string `json:"model,omitempty"`
	InputTokens  *int64 `json:"inputTokens,omitempty"`
	OutputTokens *int64 `json:"outputTokens,omitempty"`
	Streaming    bool   `json:"streaming"`
	// TTFTMS is the time to the first token of a stream (to the first byte when no token
	// came), to the first byte of a JSON answer, from the request's arrival.
	TTFTMS            *float64          `json:"ttft_ms,omitempty"`
	ProviderRequestID string            `json:"provider_request_id,omitempty"`
	OpenAIID          string            `json:"openai_id,omitempty"`
	RequestModel      string            `json:"request_model,omitempty"`
	FinishReason      string            `json:"finish_reason,omitempty"`
	InputTruncated    bool              `json:"input_truncated,omitempty"`
	OutputTruncated   bool              `json:"output_truncated,omitempty"`
	StatusCode        int               `json:"status_code,omitempty"`
	ErrorType         string            `json:"error_type,omitempty"`
	Zeroeval          *trace.PromptLink `json:"zeroeval,omitempty"`
	Gateway           bool              `json:"gateway"`
}

// spanOf is the llm span of c in tc, as a zeroeval SDK would send it for the same call
// (COMPAT.md, "Span ingestion"), made valid (Span.Check): id tc.spanID (else a new one); kind
// llm; status error when the answer is not 2xx, carried an error, could not be written, or c.Err
// says so; input_data the messages (compact JSON, cut to trace.MaxDataBytes, marked
// input_truncated), output_data the answer's text; LLM read from the attributes as ingestion
// reads them, the tokens the relay's usage, else the answer's; the cost the gateway priced
// (c.Price), else none, which Ingest prices.
func spanOf(c *gatewayCall, tc traceContext) trace.Span {
	start, end := spanTime(c.Started), spanTime(c.Ended)
	if end.Before(start) {
		end = start
	}
	var (
		ans      answer
		status   int
		writeErr error
		ttft     time.Time
	)
	if c.Answer != nil {
		ans, status, writeErr = c.Answer.Answer(), c.Answer.Status(), c.Answer.WriteErr()
		ttft = c.Answer.FirstByte()
		if t := cmp.Or(c.FirstToken, c.Answer.FirstToken()); !t.IsZero() {
			ttft = t
		}
	}
	if c.Relayed != nil {
		ans = *c.Relayed
	}
	usage, hasUsage := c.Usage, c.HasUsage
	if !hasUsage {
		usage, hasUsage = ans.Usage, ans.HasUsage
	}
	attrs := spanAttributes{
		Provider:          clean(c.Target.Provider, trace.MaxNameLen),
		Model:             clean(c.Target.Model, trace.MaxNameLen),
		Streaming:         c.Stream,
		ProviderRequestID: clean(c.ProviderRequestID, trace.MaxNameLen),
		OpenAIID:          clean(ans.ID, trace.MaxNameLen),
		RequestModel:      clean(c.Model, trace.MaxNameLen),
		FinishReason:      clean(ans.FinishReason, trace.MaxNameLen),
		OutputTruncated:   ans.Truncated,
		StatusCode:        status,
		Zeroeval:          linkOf(c.Link),
		Gateway:           true,
	}
	if hasUsage {
		attrs.InputTokens, attrs.OutputTokens = tokenCount(usage.PromptTokens), tokenCount(usage.CompletionTokens)
	}
	if !ttft.IsZero() && !ttft.Before(c.Started) {
		attrs.TTFTMS = ptr(milliseconds(ttft.Sub(c.Started)))
	}
	sp := trace.Span{
		ID:         cmp.Or(tc.spanID, uuid.NewString()),
		TraceID:    tc.traceID,
		ProjectID:  c.ProjectID,
		Name:       spanName,
		Kind:       trace.KindLLM,
		Status:     ptr(trace.StatusOK),
		StartedAt:  start,
		EndedAt:    &end,
		DurationMS: ptr(milliseconds(end.Sub(start))),
		Tags:       trace.Tags{spanTag},
		CreatedAt:  end,
		UpdatedAt:  end,
	}
	if tc.parentSpanID != "" {
		sp.ParentSpanID = ptr(tc.parentSpanID)
	}
	if input, cut := inputOf(c.Messages); input != "" {
		sp.InputData, attrs.InputTruncated = &input, cut
	}
	if ans.Text != "" {
		sp.OutputData = ptr(ans.Text)
	}
	if code, msg, typ, failed := callError(c, ans, status, writeErr); failed {
		sp.Status, sp.ErrorCode, sp.ErrorMessage = ptr(trace.StatusError), &code, &msg
		attrs.ErrorType = clean(typ, trace.MaxNameLen)
	}
	sp.Attributes, _ = json.Marshal(attrs) // strings, numbers and a PromptLink: compact, valid UTF-8
	if attrs.Model != "" {
		sp.LLM = &trace.LLMUsage{Provider: attrs.Provider, Model: attrs.Model}
		if attrs.InputTokens != nil {
			sp.LLM.InputTokens = *attrs.InputTokens
		}
		if attrs.OutputTokens != nil {
			sp.LLM.OutputTokens = *attrs.OutputTokens
		}
	}
	sp.Link = attrs.Zeroeval
	if c.Price.source != "" && sp.LLM != nil {
		sp.CostSource = ptr(c.Price.source)
		if c.Price.known {
			sp.Cost = ptr(c.Price.cost)
		}
	}
	return sp
}

// callError tells whether the call failed, and how, for its span: c.Err, the answer's error,
// a status other than 2xx, or an answer the client could not be sent.
func callError(c *gatewayCall, ans answer, status int, writeErr error) (code, msg, typ string, failed bool) {
	if ans.Error != nil {
		code, msg, typ = cmp.Or(ans.Error.Code, ans.Error.Type), ans.Error.Message, ans.Error.Type
	}
	statusFailed := c.Answer != nil && status/100 != 2
	if c.Err == "" && ans.Error == nil && !statusFailed && writeErr == nil {
		return "", "", "", false
	}
	switch {
	case statusFailed && status == 0:
		code = cmp.Or(code, "no_answer")
	case statusFailed:
		code = cmp.Or(code, fmt.Sprintf("http_%d", status))
	case writeErr != nil:
		code = cmp.Or(code, "answer_not_delivered")
	}
	msg = cmp.Or(c.Err, msg)
	switch {
	case msg != "":
	case statusFailed && status == 0:
		msg = "no answer was written"
	case statusFailed:
		msg = fmt.Sprintf("the answer was %d %s", status, http.StatusText(status))
	case writeErr != nil:
		msg = "the answer could not be written to the client: " + writeErr.Error()
	default:
		msg = "the call failed"
	}
	return clean(cmp.Or(code, "gateway_error"), trace.MaxNameLen), clean(msg, trace.MaxErrorBytes), typ, true
}

// inputOf is the input_data of messages: compact JSON in valid UTF-8, cut to
// trace.MaxDataBytes (cut reports it).
func inputOf(messages json.RawMessage) (input string, cut bool) {
	if len(messages) == 0 || string(messages) == "null" {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, messages) != nil {
		b.Reset()
		b.Write(messages)
	}
	return textcut.Cut(strings.ToValidUTF8(b.String(), "\uFFFD"), trace.MaxDataBytes)
}

// linkOf is the attributes.zeroeval of l, in the form ingestion normalises it to (a lowercase
// hyphenated version id, a lowercase content hash): nil when l says nothing.
func linkOf(l trace.PromptLink) *trace.PromptLink {
	if id, err := uuid.Parse(l.PromptVersionID); err == nil {
		l.PromptVersionID = id.String()
	}
	l.Task = clean(l.Task, trace.MaxNameLen)
	l.PromptSlug = clean(l.PromptSlug, trace.MaxNameLen)
	l.PromptVersionID = clean(l.PromptVersionID, trace.MaxNameLen)
	l.ContentHash = strings.ToLower(clean(l.ContentHash, trace.MaxNameLen))
	if l.PromptVersion < 0 || l.PromptVersion > math.MaxInt32 {
		l.PromptVersion = 0 // not a version number: ingestion ignores it
	}
	if l == (trace.PromptLink{}) {
		return nil
	}
	return &l
}

// clean is s in valid UTF-8, cut to at most n bytes.
func clean(s string, n int) string {
	return textcut.Prefix(strings.ToValidUTF8(s, "\uFFFD"), n)
}

// tokenCount is n as an attribute's token count; nil outside what ingestion reads
// (0 to trace.MaxTokens).
func tokenCount(n int64) *int64 {
	if n < 0 || n > trace.MaxTokens {
		return nil
	}
	return ptr(n)
}

// spanTime is t as spans store times: UTC, whole microseconds.
func spanTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// milliseconds is d in milliseconds, to the microsecond.
func milliseconds(d time.Duration) float64 {
	return float64(d.Truncate(time.Microsecond)) / float64(time.Millisecond)
}

func ptr[T any](v T) *T { return &v }

// SpanIngester stores the spans of a project (trace.Service.Ingest): spans valid by Span.Check,
// returned as stored. Its errors are the tracing service's (errs codes); none is the caller's
// fault.
type SpanIngester interface {
	Ingest(ctx context.Context, projectID string, spans []trace.Span) ([]trace.Span, error)
}

var _ SpanIngester = (*trace.Service)(nil)

// recordCall stores c as one llm span in tc (spanOf). The error, wrapped with the span's ids,
// is for the caller to log: a call whose span cannot be written has been answered all the
// same. ctx should outlive the client's request (context.WithoutCancel): a client that hangs up
// at [DONE] still has its call recorded.
func recordCall(ctx context.Context, ing SpanIngester, c *gatewayCall, tc traceContext) error {
	sp := spanOf(c, tc)
	if err := sp.Check(sp.UpdatedAt); err != nil {
		return fmt.Errorf("gateway span %s of trace %s: %w", sp.ID, sp.TraceID, err)
	}
	if _, err := ing.Ingest(ctx, c.ProjectID, []trace.Span{sp}); err != nil {
		return fmt.Errorf("record gateway span %s of trace %s: %w", sp.ID, sp.TraceID, err)
	}
	return nil
}
