package trace

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/jsonscan"
)

// DecodeBatch parses the body of POST /spans, a JSON array of spans, by the rules of WIRE.md
// (next to this file). It returns an errs.CodeInvalid error only when the body as a whole is
// unusable (not JSON, not an array, more than MaxSpansPerBatch spans, or no valid span at all:
// then the error lists the first few reasons). Otherwise each element is validated on its own:
// valid spans are returned (CreatedAt = UpdatedAt = now), each satisfying Span.Check; invalid
// ones are reported in rejected with their index and a reason.
//
// The spans refer to body instead of copying it: the caller must not modify body afterwards.
func DecodeBatch(body []byte, projectID string, now time.Time) (spans []Span, rejected []Rejected, err error) {
	now = now.UTC()
	r := jsonscan.NewReader(body)
	r.SkipSpace()
	if r.Pos() >= len(body) || body[r.Pos()] != '[' {
		return nil, nil, notAnArray(body)
	}
	if err := r.Enter(); err != nil {
		return nil, nil, notJSON(err)
	}
	elemsStart := r.Pos()
	var (
		n    int
		text = spanText{src: body, text: unsafe.String(unsafe.SliceData(body), len(body)), tags: new(tagArena)}
	)
	for first := true; ; first = false {
		more, err := r.Next(']', first)
		if err != nil {
			return nil, nil, notJSON(err)
		}
		if !more {
			break
		}
		if n == MaxSpansPerBatch {
			return nil, nil, errs.Invalid("too many spans in the batch: at most %d", MaxSpansPerBatch)
		}
		w := wireSpan{spanText: text}
		object := r.Pos() < len(body) && body[r.Pos()] == '{'
		if object {
			err = w.read(&r)
		} else {
			err = r.SkipValue()
		}
		if err != nil {
			return nil, nil, notJSON(err)
		}
		// The span is made in place, in the slot after the last valid one: a Span is large.
		if len(spans) == cap(spans) {
			room := 8
			if len(spans) >= 8 {
				// Room for the rest of the body at the average size of the elements so far,
				// and an eighth more for a low estimate: past a few spans, usually one
				// allocation instead of growing through powers of two.
				rest := (len(body) - r.Pos()) / ((r.Pos() - elemsStart) / (n + 1))
				room = min(1+rest+rest/8, MaxSpansPerBatch-n)
			}
			grown := make([]Span, len(spans), len(spans)+room)
			spans = grown[:copy(grown, spans)]
		}
		var reason error
		if object {
			reason = w.span(&spans[:len(spans)+1][len(spans)], projectID, now)
		} else {
			reason = errors.New("span must be a JSON object")
		}
		if reason != nil {
			rejected = append(rejected, Rejected{Index: n, ID: w.rejectedID(), Error: reason.Error()})
		} else {
			spans = spans[:len(spans)+1]
		}
		n++
	}
	if err := r.End(); err != nil {
		return nil, nil, notJSON(err)
	}
	if n == 0 {
		return nil, nil, errs.Invalid("the batch has no spans")
	}
	if len(spans) == 0 {
		return nil, rejected, NoValidSpan(rejected)
	}
	return spans, rejected, nil
}

func notJSON(err error) error { return errs.Invalid("body is not valid JSON: %v", err) }

// notAnArray explains why a body that does not start with '[' is unusable.
func notAnArray(body []byte) error {
	r := jsonscan.NewReader(body)
	if err := r.SkipValue(); err != nil {
		return notJSON(err)
	}
	if err := r.End(); err != nil {
		return notJSON(err)
	}
	return errs.Invalid("body must be a JSON array of spans, got %s", jsonKind(bytes.TrimLeft(body, " \t\r\n")))
}

// wireSpan holds the raw JSON values of one span object, as slices of the request body (nil
// when the key is absent). Reading it checks the JSON syntax only; span checks the rules.
type wireSpan struct {
	spanText // src is the whole body

	id, traceID, parentSpanID, name, kind, status []byte
	startedAt, endedAt, durationMS, cost          []byte
	sessionID, sessionName, session               []byte
	inputData, outputData, attributes             []byte
	tags, traceTags, sessionTags                  []byte
	errorCode, errorMessage, errorStack           []byte
	codeFilepath, codeLineno                      []byte
	abChoices                                     []byte
	attr                                          wireAttributes
	// attrGaps are the whitespace runs of attributes, as offsets of the reader's data, and
	// attrStart the offset of attributes. attrGaps is the reader's buffer: w must be used
	// before the reader reads the next span.
	attrGaps  []int
	attrStart int
}

// wireAttributes holds the raw values of the attributes Plume itself reads (top level only).
type wireAttributes struct {
	provider, model, inputTokens, outputTokens, usage, zeroeval, task []byte
}

func (w *wireSpan) field(key []byte) *[]byte {
	switch string(key) {
	case "id":
		return &w.id
	case "trace_id":
		return &w.traceID
	case "parent_span_id":
		return &w.parentSpanID
	case "name":
		return &w.name
	case "kind":
		return &w.kind
	case "status":
		return &w.status
	case "started_at":
		return &w.startedAt
	case "ended_at":
		return &w.endedAt
	case "duration_ms":
		return &w.durationMS
	case "cost":
		return &w.cost
	case "session_id":
		return &w.sessionID
	case "session_name":
		return &w.sessionName
	case "session":
		return &w.session
	case "input_data":
		return &w.inputData
	case "output_data":
		return &w.outputData
	case "attributes":
		return &w.attributes
	case "tags":
		return &w.tags
	case "trace_tags":
		return &w.traceTags
	case "session_tags":
		return &w.sessionTags
	case "error_code":
		return &w.errorCode
	case "error_message":
		return &w.errorMessage
	case "error_stack":
		return &w.errorStack
	case "code_filepath":
		return &w.codeFilepath
	case "code_lineno":
		return &w.codeLineno
	case "ab_choices":
		return &w.abChoices
	}
	return nil
}

func (a *wireAttributes) field(key []byte) *[]byte {
	switch string(key) {
	case "provider":
		return &a.provider
	case "model":
		return &a.model
	case "inputTokens":
		return &a.inputTokens
	case "outputTokens":
		return &a.outputTokens
	case "usage":
		return &a.usage
	case "zeroeval":
		return &a.zeroeval
	case "task":
		return &a.task
	}
	return nil
}

// read reads the object at the position of r, a reader of w.src, into w; the attributes
// object is read in the same pass.
func (w *wireSpan) read(r *jsonscan.Reader) error {
	if err := r.Enter(); err != nil {
		return err
	}
	for first := true; ; first = false {
		key, more, err := r.NextMember(first)
		if err != nil || !more {
			return err
		}
		start := r.Pos()
		if string(key) == "attributes" {
			w.attr = wireAttributes{}
			r.RecordGaps()
			if start < len(w.src) && w.src[start] == '{' {
				err = w.attr.read(r, w.src)
			} else {
				err = r.SkipValue()
			}
			w.attrGaps, w.attrStart = r.StopGaps(), start
		} else {
			err = r.SkipValue()
		}
		if err != nil {
			return err
		}
		if p := w.field(key); p != nil {
			*p = w.src[start:r.Pos()]
		}
	}
}

// read reads the attributes object at the position of r, a reader of d, keeping the members
// Plume reads.
func (a *wireAttributes) read(r *jsonscan.Reader, d []byte) error {
	if err := r.Enter(); err != nil {
		return err
	}
	for first := true; ; first = false {
		key, more, err := r.NextMember(first)
		if err != nil || !more {
			return err
		}
		start := r.Pos()
		if err := r.SkipValue(); err != nil {
			return err
		}
		if p := a.field(key); p != nil {
			*p = d[start:r.Pos()]
		}
	}
}

func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// rejectedID is the id to echo in a Rejected entry: the span's UUID when it has a valid one.
func (w *wireSpan) rejectedID() string {
	s, ok := stringValue(w.id)
	if !ok {
		return ""
	}
	id, _ := normalizeUUID(s)
	return id
}

// spanValues holds what the optional fields of one span point to: one allocation per span
// instead of one per field.
type spanValues struct {
	parent, status, input, output, sessionID, sessionName string
	errorCode, errorMessage, errorStack, codeFilepath     string
	endedAt                                               time.Time
	durationMS, cost                                      float64
	codeLineno                                            int
	llm                                                   LLMUsage
	link                                                  PromptLink
}

// span applies the rules of DecodeBatch to w, making the span in *s. The error is the reason
// the span is rejected (*s is then to be ignored).
func (w *wireSpan) span(s *Span, projectID string, now time.Time) error {
	*s = Span{ProjectID: projectID, CreatedAt: now, UpdatedAt: now}
	v := new(spanValues)
	var err error

	if s.ID, err = w.uuidField("id", w.id); err != nil {
		return err
	}
	if s.ID == "" {
		s.ID = uuid.NewString()
	}
	if s.TraceID, err = w.uuidField("trace_id", w.traceID); err != nil {
		return err
	}
	if s.TraceID == "" {
		return fmt.Errorf("trace_id: required")
	}
	parent, err := w.uuidField("parent_span_id", w.parentSpanID)
	if err != nil {
		return err
	}
	s.ParentSpanID = OptionalRef(&v.parent, parent)

	if s.Name, err = w.stringField("name", w.name, MaxNameLen); err != nil {
		return err
	}
	if s.Name == "" {
		return fmt.Errorf("name: required")
	}
	if s.Kind, err = w.kindField(w.kind); err != nil {
		return err
	}
	status, err := w.statusField(w.status)
	if err != nil {
		return err
	}
	s.Status = OptionalRef(&v.status, status)

	if err := w.times(s, v, now); err != nil {
		return err
	}
	cost, ok, err := boundedField("cost", w.cost, bound.Cost)
	if err != nil {
		return err
	}
	if ok {
		s.Cost = Ref(&v.cost, cost)
	}

	input, ok, err := w.dataField("input_data", w.inputData)
	if err != nil {
		return err
	}
	if ok {
		s.InputData = Ref(&v.input, input)
	}
	output, ok, err := w.dataField("output_data", w.outputData)
	if err != nil {
		return err
	}
	if ok {
		s.OutputData = Ref(&v.output, output)
	}

	if s.Attributes, err = attributesField(w.attributes, w.attrGaps, w.attrStart); err != nil {
		return err
	}
	if llm, ok := w.parseLLMUsage(&w.attr); ok {
		s.LLM = Ref(&v.llm, llm)
	}
	if link, ok := w.parseLink(&w.attr); ok {
		s.Link = Ref(&v.link, link)
	}

	if s.Tags, err = w.tagsField("tags", w.tags); err != nil {
		return err
	}
	if s.TraceTags, err = w.tagsField("trace_tags", w.traceTags); err != nil {
		return err
	}
	if err := w.sessionFields(s, v); err != nil {
		return err
	}

	if err := w.errorFields(s, v); err != nil {
		return err
	}
	if s.ABChoices, err = w.abChoicesField(w.abChoices); err != nil {
		return err
	}
	return nil
}

// times sets StartedAt, EndedAt and DurationMS.
func (w *wireSpan) times(s *Span, v *spanValues, now time.Time) error {
	if isAbsent(w.startedAt) {
		return fmt.Errorf("started_at: required")
	}
	start, err := timeField("started_at", w.startedAt, now)
	if err != nil {
		return err
	}
	s.StartedAt = start
	if !isAbsent(w.endedAt) {
		end, err := timeField("ended_at", w.endedAt, now)
		if err != nil {
			return err
		}
		if end.Before(start) {
			return fmt.Errorf("ended_at: %s is before started_at %s",
				end.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
		}
		s.EndedAt = Ref(&v.endedAt, end)
	}
	d, ok, err := boundedField("duration_ms", w.durationMS, bound.DurationMS)
	if err != nil {
		return err
	}
	if !ok && s.EndedAt != nil {
		d, ok = float64(s.EndedAt.Sub(start))/float64(time.Millisecond), true
	}
	if ok {
		s.DurationMS = Ref(&v.durationMS, d)
	}
	return nil
}

// sessionFields sets SessionID, SessionName and SessionTags.
func (w *wireSpan) sessionFields(s *Span, v *spanValues) error {
	var sess struct{ id, name, tags []byte }
	if !isAbsent(w.session) {
		if !isObject(w.session) {
			return fmt.Errorf("session: must be an object, got %s", jsonKind(w.session))
		}
		for it := jsonscan.Members(w.session); it.Next(); {
			switch string(it.Key) {
			case "id":
				sess.id = it.Value
			case "name":
				sess.name = it.Value
			case "tags":
				sess.tags = it.Value
			}
		}
	}

	id, err := w.stringField("session_id", w.sessionID, -1)
	if err != nil {
		return err
	}
	if id == "" {
		if id, err = w.stringField("session.id", sess.id, -1); err != nil {
			return err
		}
	}
	name, err := w.stringField("session.name", sess.name, MaxNameLen)
	if err != nil {
		return err
	}
	if name == "" {
		if name, err = w.stringField("session_name", w.sessionName, MaxNameLen); err != nil {
			return err
		}
	}
	tags, err := w.tagsField("session_tags", w.sessionTags)
	if err != nil {
		return err
	}
	more, err := w.tagsField("session.tags", sess.tags)
	if err != nil {
		return err
	}
	tags = MergeTags(more, tags)
	if len(tags) > MaxTagKeys {
		return fmt.Errorf("session_tags: more than %d keys with session.tags", MaxTagKeys)
	}
	if id == "" {
		return nil
	}

	if len(id) > MaxIDLen {
		return fmt.Errorf("session id: not a UUID and longer than %d bytes", MaxIDLen)
	}
	s.SessionID = Ref(&v.sessionID, SessionIDOf(id))
	s.SessionName = OptionalRef(&v.sessionName, name)
	s.SessionTags = tags
	return nil
}

// errorFields sets ErrorCode, ErrorMessage, ErrorStack, CodeFilepath and CodeLineno.
func (w *wireSpan) errorFields(s *Span, v *spanValues) error {
	str, err := w.stringField("error_code", w.errorCode, MaxNameLen)
	if err != nil {
		return err
	}
	s.ErrorCode = OptionalRef(&v.errorCode, str)
	if str, err = w.stringField("error_message", w.errorMessage, MaxErrorBytes); err != nil {
		return err
	}
	s.ErrorMessage = OptionalRef(&v.errorMessage, str)
	if str, err = w.stringField("error_stack", w.errorStack, MaxErrorBytes); err != nil {
		return err
	}
	s.ErrorStack = OptionalRef(&v.errorStack, str)
	if str, err = w.stringField("code_filepath", w.codeFilepath, MaxErrorBytes); err != nil {
		return err
	}
	s.CodeFilepath = OptionalRef(&v.codeFilepath, str)
	if isAbsent(w.codeLineno) {
		return nil
	}
	n, ok := integerValue(w.codeLineno)
	if !ok || n < 0 || n > math.MaxInt32 {
		return fmt.Errorf("code_lineno: must be a non-negative integer, got %s", truncate(w.codeLineno))
	}
	s.CodeLineno = Ref(&v.codeLineno, int(n))
	return nil
}

// --- field helpers ---------------------------------------------------------------------------

// isAbsent reports whether a raw value was not sent or is null.
func isAbsent(raw []byte) bool { return raw == nil || raw[0] == 'n' }

// stringField returns the string raw holds ("" when absent or null). max < 0 means no limit.
func (t *spanText) stringField(name string, raw []byte, max int) (string, error) {
	if isAbsent(raw) {
		return "", nil
	}
	s, ok := t.stringValue(raw)
	if !ok {
		return "", fmt.Errorf("%s: must be a string, got %s", name, jsonKind(raw))
	}
	if max >= 0 && len(s) > max {
		return "", fmt.Errorf("%s: longer than %d bytes", name, max)
	}
	return s, nil
}

// uuidField returns the normalised UUID raw holds, or "" when it is absent, null or "".
func (t *spanText) uuidField(name string, raw []byte) (string, error) {
	s, err := t.stringField(name, raw, -1)
	if err != nil || s == "" {
		return "", err
	}
	id, ok := normalizeUUID(s)
	if !ok {
		return "", fmt.Errorf("%s: %q is not a UUID", name, truncate([]byte(s)))
	}
	return id, nil
}

// kindField returns the span kind: KindGeneric when absent, else lowercase
// [a-z0-9_-]{1,api.MaxSpanKindLength} (the set is open: api.SpanKind).
func (t *spanText) kindField(raw []byte) (string, error) {
	if len(raw) > 2 && raw[0] == '"' {
		for _, k := range api.SpanKinds { // the known kinds, without decoding
			if string(raw[1:len(raw)-1]) == string(k) {
				return string(k), nil
			}
		}
	}
	s, err := t.stringField("kind", raw, -1)
	if err != nil {
		return "", err
	}
	if s == "" {
		return KindGeneric, nil
	}
	if len(s) > api.MaxSpanKindLength {
		return "", fmt.Errorf("kind: longer than %d characters", api.MaxSpanKindLength)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || 'A' <= c && c <= 'Z') {
			return "", fmt.Errorf("kind: %q has characters outside [a-z0-9_-]", s)
		}
	}
	return strings.ToLower(s), nil
}

var statuses = [...]string{StatusUnset, StatusOK, StatusError}

// statusField returns "" for null or "", else one of the statuses (matched in any case).
func (t *spanText) statusField(raw []byte) (string, error) {
	if len(raw) > 2 && raw[0] == '"' {
		for _, st := range statuses { // the usual lowercase, without decoding
			if string(raw[1:len(raw)-1]) == st {
				return st, nil
			}
		}
	}
	s, err := t.stringField("status", raw, -1)
	if err != nil || s == "" {
		return "", err
	}
	for _, st := range statuses {
		if strings.EqualFold(s, st) {
			return st, nil
		}
	}
	return "", fmt.Errorf("status: %q is not one of unset, ok, error", truncate([]byte(s)))
}

// boundedField returns the number raw holds, checked and rounded by r (shared/bound): a
// value outside r rejects the span, a nonzero one below bound.Floor is 0. False when absent
// or null.
func boundedField(name string, raw []byte, r bound.Range) (float64, bool, error) {
	if isAbsent(raw) {
		return 0, false, nil
	}
	if !jsonscan.IsNumber(raw) {
		return 0, false, fmt.Errorf("%s: must be a number, got %s", name, jsonKind(raw))
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false, fmt.Errorf("%s: %s is out of range", name, truncate(raw))
	}
	if f <= -bound.Floor && r.Min >= 0 {
		return 0, false, fmt.Errorf("%s: must not be negative, got %s", name, truncate(raw))
	}
	if f, err = r.Check(f); err != nil {
		return 0, false, fmt.Errorf("%s: %v", name, err)
	}
	return f, true, nil
}

// dataField returns input_data or output_data: a string, or the compact JSON text of any other
// non-null value; false when absent or null.
func (t *spanText) dataField(name string, raw []byte) (string, bool, error) {
	if isAbsent(raw) {
		return "", false, nil
	}
	var s string
	if raw[0] == '"' {
		s, _ = t.stringValue(raw)
	} else {
		s = string(jsonscan.AppendCompact(make([]byte, 0, len(raw)), raw))
	}
	if len(s) > MaxDataBytes {
		return "", false, fmt.Errorf("%s: larger than %d bytes", name, MaxDataBytes)
	}
	return s, true, nil
}

// attributesField returns the compact attributes object ({} when absent or null). gaps and
// start are wireSpan.attrGaps and attrStart.
func attributesField(raw []byte, gaps []int, start int) ([]byte, error) {
	if isAbsent(raw) {
		return []byte("{}"), nil
	}
	if !isObject(raw) {
		return nil, fmt.Errorf("attributes: must be an object, got %s", jsonKind(raw))
	}
	var c []byte
	switch {
	case len(gaps) == 0 && utf8.Valid(raw):
		c = raw[:len(raw):len(raw)] // already compact: a slice of the body, which append copies
	case utf8.Valid(raw):
		c = jsonscan.CompactGaps(raw, gaps, start)
	default:
		c = jsonscan.AppendCompact(make([]byte, 0, len(raw)), raw)
	}
	if len(c) > MaxAttributeBytes {
		return nil, fmt.Errorf("attributes: larger than %d bytes", MaxAttributeBytes)
	}
	return c, nil
}

// tagsField reads a tag object; nil when it is absent, null or has no non-null value. Of
// duplicate keys the last wins.
func (t *spanText) tagsField(name string, raw []byte) (Tags, error) {
	if isAbsent(raw) {
		return nil, nil
	}
	if !isObject(raw) {
		return nil, fmt.Errorf("%s: must be an object, got %s", name, jsonKind(raw))
	}
	if len(raw) == 2 {
		return nil, nil // {}
	}
	// A member takes at least 6 bytes ("k":1,): room for all of them without growing.
	tags := t.tags.take(min(len(raw)/6+1, MaxTagKeys+1))
	for it := jsonscan.Members(raw); it.Next(); {
		v := it.Value
		if v[0] == 'n' {
			continue
		}
		key := t.str(it.Key)
		if !utf8.ValidString(key) {
			key = string(jsonscan.AppendValidUTF8(nil, it.Key)) // each invalid byte, as encoding/json
		}
		if len(key) == 0 || len(key) > MaxTagKeyLen {
			return nil, fmt.Errorf("%s: key %q must be 1 to %d bytes", name, truncate(it.Key), MaxTagKeyLen)
		}
		var s string
		switch v[0] {
		case '"':
			s, _ = t.stringValue(v)
		case '{', '[':
			s = string(jsonscan.AppendCompact(make([]byte, 0, len(v)), v))
		default: // number, true, false: their JSON text
			s = t.str(v)
		}
		if len(s) > MaxTagValueLen {
			return nil, fmt.Errorf("%s: value of %q longer than %d bytes", name, truncate(it.Key), MaxTagValueLen)
		}
		tags.Set(key, s)
		if len(tags) > MaxTagKeys {
			return nil, fmt.Errorf("%s: more than %d keys", name, MaxTagKeys)
		}
	}
	if len(tags) == 0 {
		return nil, nil
	}
	return t.tags.keep(tags), nil
}

// tagArena hands out the tag sets of a batch from shared arrays: one allocation for the tags
// of many spans instead of one per tag set. The nil arena allocates each set on its own.
type tagArena struct {
	free Tags // the unused rest of the current array (len == cap)
}

// arenaTags is the size of an arena's arrays, in tags: a few spans' worth (what is left of an
// array too small for a set is not used).
const arenaTags = 64

// take returns an empty tag set with room for n tags.
func (a *tagArena) take(n int) Tags {
	if a == nil {
		return make(Tags, 0, n)
	}
	if len(a.free) < n {
		a.free = make(Tags, max(n, arenaTags))
	}
	return a.free[:0:n]
}

// keep keeps t, the last set take returned (within its room), and returns it without spare
// room: an append to it copies instead of writing over the next set.
func (a *tagArena) keep(t Tags) Tags {
	if a != nil && len(t) <= len(a.free) {
		a.free = a.free[len(t):]
	}
	return t[:len(t):len(t)]
}
