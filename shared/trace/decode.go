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

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/jsonscan"
)

// maxReasonsInError is how many per-span reasons the error of an all-invalid batch lists.
const maxReasonsInError = 3

// DecodeBatch parses a JSON array of spans. It returns an errs.CodeInvalid error only when the
// body as a whole is unusable (not JSON, not an array, more than MaxSpansPerBatch spans, or no
// valid span at all: then the error lists the first few reasons). Otherwise each element is
// validated on its own: valid spans are returned (CreatedAt = UpdatedAt = now), invalid ones are
// reported in rejected with their index and a clear reason; one bad span never drops the batch.
//
// The body is the wire format of the zeroeval Python and TypeScript SDKs (COMPAT.md, "Span
// ingestion"; spec §2.6 and §4.3). The rules, field by field:
//
//   - Keys are matched exactly as the SDKs send them (case-sensitive); unknown keys (code,
//     experiment_result_id, ab_choices, ...) are ignored; of duplicate keys the last wins.
//   - id: optional UUID, generated when absent, null or "". trace_id: required UUID.
//     parent_span_id: optional UUID, null or "". A UUID may come in any case, hyphenated or as
//     32 hex digits (also {...} and urn:uuid: forms); it is stored lowercase and hyphenated.
//     Anything else rejects the span.
//   - name: required non-empty string of at most MaxNameLen bytes.
//   - started_at (required) and ended_at (optional) are read by parseTime: ISO 8601 strings or
//     Unix epochs (numbers or numeric strings). Both are stored in UTC, rounded to the
//     microsecond. A time before 2000-01-01 or more than a day after now, or an ended_at before
//     started_at, rejects the span.
//   - duration_ms: optional non-negative number; when absent and ended_at is given it is
//     ended_at - started_at in (fractional) milliseconds.
//   - kind: lowercased; "generic" when absent, null or ""; at most 64 characters of
//     [a-z0-9_-]. status: null, "" (both: not given), or unset, ok, error in any case.
//   - cost: optional non-negative number (null: not given).
//   - session: the session id is session_id if non-empty, else session.id. A session id that
//     is not a UUID (at most MaxIDLen bytes) becomes uuid5(NAMESPACE_DNS, id) of its exact
//     bytes, as the Python SDK derives it client-side (so both SDKs land in one session). The
//     name is session.name, else the top-level session_name (TypeScript), at most MaxNameLen
//     bytes; it is never made up from the id (a span without a name must not rename the
//     session). SessionTags is session_tags plus the keys of session.tags it lacks. Without a
//     session id, the session name and tags are dropped.
//   - input_data, output_data: strings; any other non-null JSON value is kept as its compact
//     JSON text. At most MaxDataBytes each (after decoding).
//   - attributes: object, null or absent ({}), stored compact (invalid UTF-8 in strings becomes
//     U+FFFD), at most MaxAttributeBytes compact. Span.LLM and Span.Link are read from it by
//     parseLLMUsage and parseLink.
//   - tags, trace_tags, session_tags: objects or null. String values are kept, numbers and
//     booleans become their JSON text, nested objects and arrays their compact JSON text, null
//     values are dropped. At most MaxTagKeys keys of 1 to MaxTagKeyLen bytes, values at most
//     MaxTagValueLen bytes; of duplicate keys the last wins. An empty tag set is nil (Tags is
//     still written as {}).
//   - error_code (at most MaxNameLen bytes), error_message, error_stack, code_filepath (at most
//     MaxErrorBytes each): strings, "" and null mean absent. code_lineno: a non-negative
//     integer, also as an integral float or a numeric string.
//   - ProjectID is projectID, never read from the body. CreatedAt = UpdatedAt = now in UTC.
//
// A value of the wrong JSON type rejects its span with a reason naming the field. Only the
// JSON syntax (which is exactly what encoding/json accepts, nesting depth included) and the
// array bounds are whole-body errors. Work and memory are linear in len(body); the caller
// bounds the body (MaxBatchBytes).
//
// The spans refer to body instead of copying it: every string that appears in body as it is
// (no escapes, valid UTF-8) is a substring of body, and so are attributes without whitespace.
// The caller must not modify body afterwards; it stays in memory as long as any span does.
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
		n       int
		reasons []string
		text    = spanText{src: body, text: unsafe.String(unsafe.SliceData(body), len(body)), tags: new(tagArena)}
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
			if len(reasons) < maxReasonsInError {
				reasons = append(reasons, fmt.Sprintf("[%d] %v", n, reason))
			}
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
		more := ""
		if n > len(reasons) {
			more = fmt.Sprintf(" (and %d more)", n-len(reasons))
		}
		return nil, rejected, errs.Invalid("no valid span in the batch: %s%s", strings.Join(reasons, "; "), more)
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
	d := w.src
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
			if start < len(d) && d[start] == '{' {
				err = w.attr.read(r, d)
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
			*p = d[start:r.Pos()]
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

// spanText makes the Go strings of one span. Those that appear in src as they are (no
// escapes, valid UTF-8) are substrings of text, which is src itself when DecodeBatch reads a
// batch (no copy), else a copy of src made on first use. The others are decoded into their own
// copies, and so is every string when src is nil (the zero value).
type spanText struct {
	src  []byte
	text string // string(src), once a string needed it
	tags *tagArena
}

// str returns string(raw): a substring of t.text when raw is a slice of t.src.
func (t *spanText) str(raw []byte) string {
	// A slice of src keeps the capacity up to the end of src's array, so the difference of
	// the capacities is its offset in src; comparing addresses rules out a raw from elsewhere.
	off := cap(t.src) - cap(raw)
	if len(raw) == 0 || off < 0 || off+len(raw) > len(t.src) || &t.src[off] != &raw[0] {
		return string(raw)
	}
	if t.text == "" {
		t.text = string(t.src)
	}
	return t.text[off : off+len(raw)]
}

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

// ref stores v in slot and returns slot.
func ref[T any](slot *T, v T) *T {
	*slot = v
	return slot
}

// optionalRef is ref for strings, with nil for "".
func optionalRef(slot *string, v string) *string {
	if v == "" {
		return nil
	}
	return ref(slot, v)
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
	s.ParentSpanID = optionalRef(&v.parent, parent)

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
	s.Status = optionalRef(&v.status, status)

	if err := w.times(s, v, now); err != nil {
		return err
	}
	cost, ok, err := nonNegativeField("cost", w.cost)
	if err != nil {
		return err
	}
	if ok {
		s.Cost = ref(&v.cost, cost)
	}

	input, ok, err := w.dataField("input_data", w.inputData)
	if err != nil {
		return err
	}
	if ok {
		s.InputData = ref(&v.input, input)
	}
	output, ok, err := w.dataField("output_data", w.outputData)
	if err != nil {
		return err
	}
	if ok {
		s.OutputData = ref(&v.output, output)
	}

	if s.Attributes, err = attributesField(w.attributes, w.attrGaps, w.attrStart); err != nil {
		return err
	}
	if llm, ok := w.parseLLMUsage(&w.attr); ok {
		s.LLM = ref(&v.llm, llm)
	}
	if link, ok := w.parseLink(&w.attr); ok {
		s.Link = ref(&v.link, link)
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
		s.EndedAt = ref(&v.endedAt, end)
	}
	d, ok, err := nonNegativeField("duration_ms", w.durationMS)
	if err != nil {
		return err
	}
	if !ok && s.EndedAt != nil {
		d, ok = float64(s.EndedAt.Sub(start))/float64(time.Millisecond), true
	}
	if ok {
		s.DurationMS = ref(&v.durationMS, d)
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
	s.SessionID = ref(&v.sessionID, SessionIDOf(id))
	s.SessionName = optionalRef(&v.sessionName, name)
	s.SessionTags = tags
	return nil
}

// errorFields sets ErrorCode, ErrorMessage, ErrorStack, CodeFilepath and CodeLineno.
func (w *wireSpan) errorFields(s *Span, v *spanValues) error {
	str, err := w.stringField("error_code", w.errorCode, MaxNameLen)
	if err != nil {
		return err
	}
	s.ErrorCode = optionalRef(&v.errorCode, str)
	if str, err = w.stringField("error_message", w.errorMessage, MaxErrorBytes); err != nil {
		return err
	}
	s.ErrorMessage = optionalRef(&v.errorMessage, str)
	if str, err = w.stringField("error_stack", w.errorStack, MaxErrorBytes); err != nil {
		return err
	}
	s.ErrorStack = optionalRef(&v.errorStack, str)
	if str, err = w.stringField("code_filepath", w.codeFilepath, MaxErrorBytes); err != nil {
		return err
	}
	s.CodeFilepath = optionalRef(&v.codeFilepath, str)
	if isAbsent(w.codeLineno) {
		return nil
	}
	n, ok := integerValue(w.codeLineno)
	if !ok || n < 0 || n > math.MaxInt32 {
		return fmt.Errorf("code_lineno: must be a non-negative integer, got %s", truncate(w.codeLineno))
	}
	s.CodeLineno = ref(&v.codeLineno, int(n))
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

// normalizeUUID returns s as a lowercase hyphenated UUID. It accepts the forms uuid.Parse
// does: hyphenated, 32 hex digits, {hyphenated} and urn:uuid:hyphenated, in any case.
func normalizeUUID(s string) (string, bool) {
	if isCanonicalUUID(s) {
		return s, true // the usual case: keep the decoded string
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// isCanonicalUUID reports whether s is a UUID as stored: lowercase and hyphenated.
func isCanonicalUUID(s string) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	// The digits, eight at a time: the words at 9, 14 and 19 have a hyphen as their byte 4,
	// which is replaced by a digit.
	const hyphen = 0xff << 32
	return isLowerHex8(load64(s, 0)) && isLowerHex8(load64(s, 9)&^hyphen|'0'<<32) &&
		isLowerHex8(load64(s, 14)&^hyphen|'0'<<32) && isLowerHex8(load64(s, 19)&^hyphen|'0'<<32) &&
		isLowerHex8(load64(s, 24)) && isLowerHex8(load64(s, 28))
}

// isLowerHex8 reports whether the eight bytes of x are all in [0-9a-f].
func isLowerHex8(x uint64) bool {
	// Adding 0x80-n to each byte below 0x80 sets its bit 7 exactly when it is >= n: no carries.
	digit := (x + ones*(0x80-'0')) &^ (x + ones*(0x80-'9'-1))
	letter := (x + ones*(0x80-'a')) &^ (x + ones*(0x80-'f'-1))
	return x&highs == 0 && (digit|letter)&highs == highs
}

var kinds = [...]string{KindGeneric, KindLLM, KindTTS, KindHTTP, KindDatabase, KindVectorStore}

// kindField returns the span kind: KindGeneric when absent, else lowercase [a-z0-9_-]{1,64}.
func (t *spanText) kindField(raw []byte) (string, error) {
	if len(raw) > 2 && raw[0] == '"' {
		for _, k := range kinds { // the spec's kinds, without decoding
			if string(raw[1:len(raw)-1]) == k {
				return k, nil
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
	if len(s) > 64 {
		return "", fmt.Errorf("kind: longer than 64 characters")
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

// nonNegativeField returns the number raw holds; false when absent or null.
func nonNegativeField(name string, raw []byte) (float64, bool, error) {
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
	if f < 0 {
		return 0, false, fmt.Errorf("%s: must not be negative, got %s", name, truncate(raw))
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

// jsonKind names the JSON type of a raw value for error messages.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// truncate shortens a value quoted in an error message.
func truncate(b []byte) string {
	const max = 64
	if len(b) <= max {
		return string(b)
	}
	return strings.ToValidUTF8(string(b[:max]), "") + "..."
}

// --- numbers ---------------------------------------------------------------------------------

// numberText returns the JSON number text of raw: raw itself, or the contents of a string
// holding a number (surrounding spaces allowed).
func numberText(raw []byte) ([]byte, bool) {
	if len(raw) > 0 && raw[0] == '"' {
		s, ok := stringValue(raw)
		if !ok {
			return nil, false
		}
		raw = []byte(strings.TrimSpace(s))
	}
	return raw, jsonscan.IsNumber(raw)
}

// integerValue reads an integral number, or a string holding one, of at most 2^53.
func integerValue(raw []byte) (int64, bool) {
	if n, ok := plainCount(raw); ok {
		return n, true
	}
	return anyIntegerValue(raw)
}

// anyIntegerValue is integerValue for any value.
func anyIntegerValue(raw []byte) (int64, bool) {
	text, ok := numberText(raw)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// plainCount reads the usual integers, 0 or up to 15 digits without a leading zero (below
// 2^53), as integerValue does, without parsing a float. It reports false for any other text.
func plainCount(raw []byte) (int64, bool) {
	if len(raw) == 0 || len(raw) > 15 || raw[0] == '0' && len(raw) > 1 {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// --- attributes: LLM usage and prompt link ----------------------------------------------------

// parseLLMUsage reads the model usage of the attributes (Span.LLM). There is none (false)
// unless the attributes name a model (a non-empty string). Then:
//
//   - Provider and Model are the provider and model strings.
//   - InputTokens and OutputTokens are inputTokens and outputTokens (the spec's fields: integral
//     numbers or numeric strings, >= 0; other values count as absent). When absent, they come
//     from the usage object.
//   - usage with OpenAI Chat names: prompt_tokens, completion_tokens,
//     prompt_tokens_details.cached_tokens, completion_tokens_details.reasoning_tokens.
//     With OpenAI Responses names (input_tokens and input_tokens_details or
//     output_tokens_details): input_tokens includes the cached ones.
//     With Anthropic names (input_tokens, output_tokens, cache_read_input_tokens,
//     cache_creation_input_tokens): input_tokens excludes cache reads and writes, so
//     InputTokens = input_tokens + cache reads + cache writes.
//   - The cached, cache-write and reasoning counts always come from usage; they are capped so
//     that they never exceed the totals they are part of.
func (t *spanText) parseLLMUsage(a *wireAttributes) (LLMUsage, bool) {
	model, _ := t.stringValue(a.model)
	if model == "" {
		return LLMUsage{}, false
	}
	provider, _ := t.stringValue(a.provider)
	u := LLMUsage{Provider: provider, Model: model}
	usage := parseUsage(a.usage)
	u.InputTokens, u.OutputTokens = usage.InputTokens, usage.OutputTokens
	if n, ok := tokenCount(a.inputTokens); ok {
		u.InputTokens = n
	}
	if n, ok := tokenCount(a.outputTokens); ok {
		u.OutputTokens = n
	}
	u.CachedInputTokens = min(usage.CachedInputTokens, u.InputTokens)
	u.CacheWriteTokens = min(usage.CacheWriteTokens, u.InputTokens-u.CachedInputTokens)
	u.ReasoningTokens = min(usage.ReasoningTokens, u.OutputTokens)
	return u, true
}

// parseUsage reads a provider usage object (see parseLLMUsage); zero when raw is not one.
func parseUsage(raw []byte) LLMUsage {
	var f struct {
		promptTokens, completionTokens, promptDetails, completionDetails []byte
		inputTokens, outputTokens, inputDetails, outputDetails           []byte
		cacheRead, cacheCreation                                         []byte
	}
	for it := jsonscan.Members(raw); it.Next(); {
		switch string(it.Key) {
		case "prompt_tokens":
			f.promptTokens = it.Value
		case "completion_tokens":
			f.completionTokens = it.Value
		case "prompt_tokens_details":
			f.promptDetails = it.Value
		case "completion_tokens_details":
			f.completionDetails = it.Value
		case "input_tokens":
			f.inputTokens = it.Value
		case "output_tokens":
			f.outputTokens = it.Value
		case "input_tokens_details":
			f.inputDetails = it.Value
		case "output_tokens_details":
			f.outputDetails = it.Value
		case "cache_read_input_tokens":
			f.cacheRead = it.Value
		case "cache_creation_input_tokens":
			f.cacheCreation = it.Value
		}
	}
	var u LLMUsage
	switch {
	case f.promptTokens != nil || f.completionTokens != nil: // OpenAI Chat Completions
		u.InputTokens = count(f.promptTokens)
		u.OutputTokens = count(f.completionTokens)
		u.CachedInputTokens = count(member(f.promptDetails, "cached_tokens"))
		u.ReasoningTokens = count(member(f.completionDetails, "reasoning_tokens"))
	case f.inputDetails != nil || f.outputDetails != nil: // OpenAI Responses
		u.InputTokens = count(f.inputTokens)
		u.OutputTokens = count(f.outputTokens)
		u.CachedInputTokens = count(member(f.inputDetails, "cached_tokens"))
		u.ReasoningTokens = count(member(f.outputDetails, "reasoning_tokens"))
	default: // Anthropic
		u.CachedInputTokens = count(f.cacheRead)
		u.CacheWriteTokens = count(f.cacheCreation)
		u.InputTokens = count(f.inputTokens) + u.CachedInputTokens + u.CacheWriteTokens
		u.OutputTokens = count(f.outputTokens)
	}
	return u
}

// member returns the raw value of the member name of the object raw (nil when absent).
func member(raw []byte, name string) []byte {
	var v []byte
	for it := jsonscan.Members(raw); it.Next(); {
		if string(it.Key) == name {
			v = it.Value
		}
	}
	return v
}

// count is tokenCount, 0 when raw is not a count.
func count(raw []byte) int64 {
	n, _ := tokenCount(raw)
	return n
}

// maxTokens bounds a token count (larger values are ignored as nonsense).
const maxTokens = 1 << 40

// tokenCount reads a non-negative integral token count (number or numeric string).
func tokenCount(raw []byte) (int64, bool) {
	if isAbsent(raw) {
		return 0, false
	}
	n, ok := integerValue(raw)
	if !ok || n < 0 || n > maxTokens {
		return 0, false
	}
	return n, true
}

// parseLink reads attributes.zeroeval (COMPAT.md, "Hidden linkage metadata"): task,
// prompt_slug, prompt_version (integer or numeric string), prompt_version_id (a UUID is
// normalised), content_hash (lowercased). A top-level task attribute fills Task when zeroeval
// has none. Values of the wrong type are ignored; false when nothing is known (Span.Link nil).
func (t *spanText) parseLink(a *wireAttributes) (PromptLink, bool) {
	var l PromptLink
	var f struct{ task, slug, version, versionID, hash []byte }
	for it := jsonscan.Members(a.zeroeval); it.Next(); {
		switch string(it.Key) {
		case "task":
			f.task = it.Value
		case "prompt_slug":
			f.slug = it.Value
		case "prompt_version":
			f.version = it.Value
		case "prompt_version_id":
			f.versionID = it.Value
		case "content_hash":
			f.hash = it.Value
		}
	}
	l.Task, _ = t.stringValue(f.task)
	if l.Task == "" {
		l.Task, _ = t.stringValue(a.task)
	}
	l.PromptSlug, _ = t.stringValue(f.slug)
	if n, ok := integerValue(f.version); ok && n > 0 && n <= math.MaxInt32 {
		l.PromptVersion = int(n)
	}
	l.PromptVersionID, _ = t.stringValue(f.versionID)
	if id, ok := normalizeUUID(l.PromptVersionID); ok {
		l.PromptVersionID = id
	}
	hash, _ := t.stringValue(f.hash)
	l.ContentHash = strings.ToLower(hash)
	return l, l != PromptLink{}
}

// stringValue decodes a raw JSON string value (with its quotes) that the reader has
// validated. It reports false when raw is not a string.
func (t *spanText) stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	if i := jsonscan.IndexEscapeOrNonASCII(s); i == len(s) || bytes.IndexByte(s[i:], '\\') < 0 && utf8.Valid(s[i:]) {
		return t.str(s), true // as it is in the JSON text
	}
	return jsonscan.Unescape(s), true
}

// stringValue is spanText.stringValue for a value outside any span's text.
func stringValue(raw []byte) (string, bool) {
	var t spanText
	return t.stringValue(raw)
}
