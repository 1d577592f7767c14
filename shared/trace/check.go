package trace

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/jsonscan"
)

// Check reports the first invariant s breaks, of those every span ingestion stores satisfies
// (WIRE.md, "Invariants"), now being the server's clock when s was received. Both decoders
// make only such spans: DecodeBatch by construction (its fuzz test checks every span with
// Check), otlp.Map likewise (its fuzz test too). The invariants:
//
//   - ID and TraceID, and ParentSpanID and SessionID when set, are lowercase hyphenated UUIDs;
//     ProjectID is set.
//   - Name has 1 to MaxNameLen bytes; Kind 1 to 64 characters of [a-z0-9_-]; Status, when set,
//     is StatusUnset, StatusOK or StatusError.
//   - StartedAt and EndedAt (when set) are in UTC, whole microseconds, pass CheckTime, and
//     EndedAt is not before StartedAt. DurationMS and Cost, when set, are in bound.DurationMS
//     and bound.Cost (0 or at least bound.Floor, costs on bound.CostGrid).
//   - InputData and OutputData have at most MaxDataBytes; ErrorCode and SessionName 1 to
//     MaxNameLen; ErrorMessage, ErrorStack and CodeFilepath 1 to MaxErrorBytes; CodeLineno is
//     from 0 to 2^31-1.
//   - Attributes is a compact JSON object of at most MaxAttributeBytes.
//   - Tags, TraceTags and SessionTags have at most MaxTagKeys tags, sorted by key without
//     duplicates, keys of 1 to MaxTagKeyLen bytes, values of at most MaxTagValueLen;
//     SessionName and SessionTags are set only with SessionID.
//   - Every string is valid UTF-8.
//   - LLM, when set, names a model, and its token counts are >= 0 and add up (cached and
//     cache-write tokens within the input, reasoning tokens within the output); Link, when
//     set, is not empty.
//   - ABChoices has at most MaxABChoices choices of distinct choice names, names and variant
//     keys of 1 to MaxChoiceNameLen bytes, values of at most MaxVariantValueLen, ids
//     canonical UUIDs or "".
func (s *Span) Check(now time.Time) error {
	for _, id := range []struct {
		name string
		p    *string
	}{{"id", &s.ID}, {"trace_id", &s.TraceID}, {"parent_span_id", s.ParentSpanID}, {"session_id", s.SessionID}} {
		if id.p != nil && !isCanonicalUUID(*id.p) {
			return fmt.Errorf("%s: %q is not a lowercase hyphenated UUID", id.name, truncate([]byte(*id.p)))
		}
	}
	if s.ProjectID == "" {
		return fmt.Errorf("project_id: missing")
	}
	if s.Name == "" {
		return fmt.Errorf("name: empty")
	}
	if err := checkString("name", s.Name, MaxNameLen); err != nil {
		return err
	}
	if err := checkKind(s.Kind); err != nil {
		return err
	}
	if st := s.Status; st != nil && *st != StatusUnset && *st != StatusOK && *st != StatusError {
		return fmt.Errorf("status: %q is not one of unset, ok, error", truncate([]byte(*st)))
	}
	if err := s.checkTimes(now); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		p    *float64
		r    bound.Range
	}{{"duration_ms", s.DurationMS, bound.DurationMS}, {"cost", s.Cost, bound.Cost}} {
		if f.p != nil && !f.r.Contains(*f.p) {
			return fmt.Errorf("%s: %v is outside %v to %v, or below %v, or off the grid", f.name, *f.p, f.r.Min, f.r.Max, bound.Floor)
		}
	}
	for _, f := range []struct {
		name     string
		p        *string
		min, max int
	}{
		{"input_data", s.InputData, 0, MaxDataBytes}, {"output_data", s.OutputData, 0, MaxDataBytes},
		{"error_code", s.ErrorCode, 1, MaxNameLen}, {"session_name", s.SessionName, 1, MaxNameLen},
		{"error_message", s.ErrorMessage, 1, MaxErrorBytes}, {"error_stack", s.ErrorStack, 1, MaxErrorBytes},
		{"code_filepath", s.CodeFilepath, 1, MaxErrorBytes},
	} {
		if f.p == nil {
			continue
		}
		if len(*f.p) < f.min {
			return fmt.Errorf("%s: empty", f.name)
		}
		if err := checkString(f.name, *f.p, f.max); err != nil {
			return err
		}
	}
	if n := s.CodeLineno; n != nil && (*n < 0 || *n > math.MaxInt32) {
		return fmt.Errorf("code_lineno: %d is out of range", *n)
	}
	if err := checkAttributes(s.Attributes); err != nil {
		return err
	}
	for _, tags := range []struct {
		name string
		tags Tags
	}{{"tags", s.Tags}, {"trace_tags", s.TraceTags}, {"session_tags", s.SessionTags}} {
		if err := checkTags(tags.name, tags.tags); err != nil {
			return err
		}
	}
	if s.SessionID == nil && (s.SessionName != nil || s.SessionTags != nil) {
		return fmt.Errorf("session_id: missing, with a session name or tags")
	}
	if u := s.LLM; u != nil {
		if u.Model == "" || !utf8.ValidString(u.Model) || !utf8.ValidString(u.Provider) {
			return fmt.Errorf("llm: model %q, provider %q", truncate([]byte(u.Model)), truncate([]byte(u.Provider)))
		}
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CachedInputTokens < 0 || u.CacheWriteTokens < 0 || u.ReasoningTokens < 0 ||
			u.CachedInputTokens+u.CacheWriteTokens > u.InputTokens || u.ReasoningTokens > u.OutputTokens {
			return fmt.Errorf("llm: token counts do not add up: %+v", *u)
		}
	}
	if s.Link != nil && *s.Link == (PromptLink{}) {
		return fmt.Errorf("link: empty")
	}
	return checkChoices(s.ABChoices)
}

// checkTimes checks StartedAt and EndedAt.
func (s *Span) checkTimes(now time.Time) error {
	check := func(name string, t time.Time) error {
		if t.Location() != time.UTC || t.Nanosecond()%1000 != 0 {
			return fmt.Errorf("%s: %s is not UTC in whole microseconds", name, t.Format(time.RFC3339Nano))
		}
		return CheckTime(name, t, now)
	}
	if err := check("started_at", s.StartedAt); err != nil {
		return err
	}
	if s.EndedAt == nil {
		return nil
	}
	if err := check("ended_at", *s.EndedAt); err != nil {
		return err
	}
	if s.EndedAt.Before(s.StartedAt) {
		return fmt.Errorf("ended_at: %s is before started_at %s",
			s.EndedAt.Format(time.RFC3339Nano), s.StartedAt.Format(time.RFC3339Nano))
	}
	return nil
}

// checkString checks that s is valid UTF-8 of at most max bytes.
func checkString(name, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%s: longer than %d bytes", name, max)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s: not valid UTF-8", name)
	}
	return nil
}

// checkKind checks a stored kind: 1 to api.MaxSpanKindLength characters of [a-z0-9_-].
func checkKind(k string) error {
	if k == "" || len(k) > api.MaxSpanKindLength {
		return fmt.Errorf("kind: %q must have 1 to %d characters", truncate([]byte(k)), api.MaxSpanKindLength)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("kind: %q has characters outside [a-z0-9_-]", truncate([]byte(k)))
		}
	}
	return nil
}

// checkAttributes checks that a is a compact JSON object (no whitespace outside strings) in
// valid UTF-8, of at most MaxAttributeBytes.
func checkAttributes(a []byte) error {
	if len(a) > MaxAttributeBytes {
		return fmt.Errorf("attributes: larger than %d bytes", MaxAttributeBytes)
	}
	if len(a) == 0 || a[0] != '{' || !utf8.Valid(a) {
		return fmt.Errorf("attributes: not a JSON object in UTF-8")
	}
	r := jsonscan.NewReader(a)
	r.RecordGaps()
	err := r.SkipValue()
	if gaps := r.StopGaps(); err == nil && len(gaps) > 0 {
		return fmt.Errorf("attributes: not compact")
	}
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return fmt.Errorf("attributes: %v", err)
	}
	return nil
}

// checkTags checks one tag set.
func checkTags(name string, tags Tags) error {
	if len(tags) > MaxTagKeys {
		return fmt.Errorf("%s: more than %d keys", name, MaxTagKeys)
	}
	for i, t := range tags {
		if t.Key == "" || len(t.Key) > MaxTagKeyLen || !utf8.ValidString(t.Key) {
			return fmt.Errorf("%s: key %q must be 1 to %d bytes of UTF-8", name, truncate([]byte(t.Key)), MaxTagKeyLen)
		}
		if len(t.Value) > MaxTagValueLen || !utf8.ValidString(t.Value) {
			return fmt.Errorf("%s: value of %q must be at most %d bytes of UTF-8", name, truncate([]byte(t.Key)), MaxTagValueLen)
		}
		if i > 0 && tags[i-1].Key >= t.Key {
			return fmt.Errorf("%s: keys not in increasing order: %q before %q", name, truncate([]byte(tags[i-1].Key)), truncate([]byte(t.Key)))
		}
	}
	return nil
}
