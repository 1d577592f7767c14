package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/plumehq/plume/api"
)

// SpanKind is the kind of a span (spec §2.6): api.SpanKind, whose doc says which kinds the
// API takes (any lowercase word) and which it knows (api.SpanKinds).
type SpanKind = api.SpanKind

// The known span kinds (api.SpanKinds).
const (
	KindGeneric     = api.SpanKindGeneric
	KindLLM         = api.SpanKindLLM
	KindTool        = api.SpanKindTool
	KindHTTP        = api.SpanKindHTTP
	KindDatabase    = api.SpanKindDatabase
	KindVectorStore = api.SpanKindVectorStore
	KindTTS         = api.SpanKindTTS
)

// Span statuses (spec §3): a span that ends without one is "ok", or "error" after RecordError.
const (
	StatusUnset = "unset"
	StatusOK    = "ok"
	StatusError = "error"
)

// Span is one timed operation of a trace: a request, a model call, a tool run. It is made by
// Client.StartSpan, changed by its setters and sent by End, after which it no longer changes.
// Its methods are safe for concurrent use, and do nothing on a nil *Span, so that
// SpanFromContext(ctx).SetAttribute(...) needs no check.
type Span struct {
	w *Writer

	mu     sync.Mutex
	ended  bool
	wire   api.SpanInput
	status string
}

// SpanOption sets a span up when it starts.
type SpanOption func(*Span)

// WithKind sets the span's kind (KindGeneric by default).
func WithKind(k SpanKind) SpanOption { return func(s *Span) { s.wire.Kind = k } }

// WithAttributes adds attributes (free key-value data, shown with the span).
func WithAttributes(attrs map[string]any) SpanOption {
	return func(s *Span) {
		for k, v := range attrs {
			s.setAttribute(k, v)
		}
	}
}

// WithTags adds tags, the key-value pairs spans are filtered by.
func WithTags(tags map[string]string) SpanOption {
	return func(s *Span) {
		for k, v := range tags {
			s.wire.Tags = put(s.wire.Tags, k, v)
		}
	}
}

// WithStartTime sets when the span started (now by default), for work timed elsewhere.
func WithStartTime(t time.Time) SpanOption { return func(s *Span) { s.wire.StartedAt = t } }

// spanKey and sessionKey are the context keys of the current span and session.
type (
	spanKey    struct{}
	sessionKey struct{}
)

type session struct{ id, name string }

// WithSession returns a context whose spans belong to session id, named name ("" for none).
// Every trace started under it is a trace of that session. An id that is not a UUID is
// turned into one by the API (uuid5 of the id, as the Python SDK does), so any stable string,
// such as a conversation id, will do.
func WithSession(ctx context.Context, id, name string) context.Context {
	return context.WithValue(ctx, sessionKey{}, session{id: id, name: name})
}

// SpanFromContext returns the current span of ctx, nil when there is none.
func SpanFromContext(ctx context.Context) *Span {
	s, _ := ctx.Value(spanKey{}).(*Span)
	return s
}

// StartSpan starts a span named name and returns it with a context that carries it. The span
// is a child of ctx's current span, in the same trace, or the root of a new trace when ctx
// has none; it belongs to the session of WithSession. End sends it to the client's span
// writer (SpanWriter).
//
//	ctx, span := c.StartSpan(ctx, "answer-ticket")
//	defer span.End()
func (c *Client) StartSpan(ctx context.Context, name string, opts ...SpanOption) (context.Context, *Span) {
	return c.SpanWriter().StartSpan(ctx, name, opts...)
}

// StartSpan starts a span that w sends when it ends; see Client.StartSpan.
func (w *Writer) StartSpan(ctx context.Context, name string, opts ...SpanOption) (context.Context, *Span) {
	s := &Span{w: w, wire: api.SpanInput{ID: newUUID(), Name: name, Kind: KindGeneric}}
	if parent := SpanFromContext(ctx); parent != nil {
		s.wire.TraceID, s.wire.ParentSpanID = parent.wire.TraceID, parent.wire.ID // ids never change
	} else {
		s.wire.TraceID = newUUID()
	}
	if ses, ok := ctx.Value(sessionKey{}).(session); ok && ses.id != "" {
		s.wire.SessionID = ses.id
		if ses.name != "" {
			s.wire.Session = &api.SessionRef{ID: ses.id, Name: ses.name}
		}
	}
	for _, o := range opts {
		o(s)
	}
	if s.wire.StartedAt.IsZero() {
		s.wire.StartedAt = time.Now()
	}
	return context.WithValue(ctx, spanKey{}, s), s
}

// ID is the span's id: a UUID, and the completion_id of feedback on an llm span.
func (s *Span) ID() string {
	if s == nil {
		return ""
	}
	return s.wire.ID
}

// TraceID is the id of the span's trace.
func (s *Span) TraceID() string {
	if s == nil {
		return ""
	}
	return s.wire.TraceID
}

// ParentID is the id of the span's parent, "" for a root span.
func (s *Span) ParentID() string {
	if s == nil {
		return ""
	}
	return s.wire.ParentSpanID
}

// change runs f on the span unless it has ended.
func (s *Span) change(f func()) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		f()
	}
}

// SetAttribute sets an attribute. The value must be encodable as JSON; it is encoded by End.
func (s *Span) SetAttribute(key string, value any) { s.change(func() { s.setAttribute(key, value) }) }

func (s *Span) setAttribute(key string, value any) {
	if s.wire.Attributes == nil {
		s.wire.Attributes = make(map[string]any, 8)
	}
	s.wire.Attributes[key] = value
}

// SetTag sets a tag of the span.
func (s *Span) SetTag(key, value string) {
	s.change(func() { s.wire.Tags = put(s.wire.Tags, key, value) })
}

// SetTraceTag sets a tag of the span's trace.
func (s *Span) SetTraceTag(key, value string) {
	s.change(func() { s.wire.TraceTags = put(s.wire.TraceTags, key, value) })
}

// SetSessionTag sets a tag of the span's session (ignored by the API without a session).
func (s *Span) SetSessionTag(key, value string) {
	s.change(func() { s.wire.SessionTags = put(s.wire.SessionTags, key, value) })
}

// SetInput records what the operation was given (for an llm span, the messages as JSON).
func (s *Span) SetInput(input string) { s.change(func() { s.wire.InputData = &input }) }

// SetOutput records what the operation produced (for an llm span, the answer's text).
func (s *Span) SetOutput(output string) { s.change(func() { s.wire.OutputData = &output }) }

// SetStatus sets the status: StatusOK, StatusError or StatusUnset.
func (s *Span) SetStatus(status string) { s.change(func() { s.status = status }) }

// RecordError marks the span failed with err: status "error", err's text as the error message,
// and as the error code the API's code for an *Error, else err's type ("*net.OpError"), as
// the Python SDK records an exception's class. A nil err changes nothing.
func (s *Span) RecordError(err error) {
	if err == nil {
		return
	}
	code := fmt.Sprintf("%T", err)
	if e := (*Error)(nil); errors.As(err, &e) {
		code = string(e.Code)
	}
	s.Fail(code, err.Error())
}

// Fail marks the span failed with an error code and message of the caller's choice.
func (s *Span) Fail(code, message string) {
	s.change(func() { s.status, s.wire.ErrorCode, s.wire.ErrorMessage = StatusError, code, message })
}

// End ends the span now and hands it to its writer, which sends it with the next batch. A
// span is ended once: later calls, and changes after End, do nothing.
func (s *Span) End() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	now := time.Now()
	s.wire.EndedAt = now
	if d := now.Sub(s.wire.StartedAt); d > 0 { // monotonic when the start was time.Now
		s.wire.DurationMS = float64(d) / float64(time.Millisecond)
	}
	s.wire.Status = s.status
	if s.wire.Status == "" {
		s.wire.Status = StatusOK
	}
	body, err := json.Marshal(&s.wire)
	s.mu.Unlock()
	if err != nil {
		s.w.drop(1, fmt.Errorf("client: encode span %s %q: %w", s.wire.ID, s.wire.Name, err))
		return
	}
	s.w.enqueue(body)
}

// put sets m[k] = v, making m when it is nil.
func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = make(map[string]string, 4)
	}
	m[k] = v
	return m
}

// newUUID returns a random (version 4) UUID, RFC 9562 §5.4.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}
