package trace

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/jsonscan"
)

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func FuzzDecodeBatch(f *testing.F) {
	// Small seeds in the shape of each SDK's spans: the fuzzer minimises every new interesting
	// input, which takes long for inputs of kilobytes such as the fixtures.
	f.Add([]byte(`[{"id": "c3a1f9e2-7b6d-4e5f-a1b2-c3d4e5f6a7b8", "session_id": "2991bdff-0fee-52e0-90c1-c76c57de7a2f", ` +
		`"trace_id": "6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f", "parent_span_id": null, "name": "chat", "kind": "llm", ` +
		`"started_at": 1732212345.123456, "ended_at": 1732212346.5, "duration_ms": 1376.5, "status": "ok", ` +
		`"attributes": {"provider": "openai", "model": "gpt-4o", "inputTokens": 12, "usage": {"prompt_tokens": 12, ` +
		`"prompt_tokens_details": {"cached_tokens": 4}}, "zeroeval": {"task": "t", "prompt_version": 3}}, ` +
		`"input_data": "[{\"role\": \"user\"}]", "output_data": "hi", "error_stack": "", "code_lineno": 4, ` +
		`"tags": {"a": 1}, "session": {"id": "2991bdff-0fee-52e0-90c1-c76c57de7a2f", "name": "u", "tags": {"p": "x"}}}]`))
	f.Add([]byte(`[{"id":"2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091","session_id":"conv-7f3a","session_name":"S",` +
		`"trace_id":"1E6A0C4B-5F2D-4B8E-9A7C-3D2E1F0A9B8C","name":"n","kind":"llm","started_at":"2024-11-21T18:05:45.120Z",` +
		`"ended_at":"2024-11-21T20:05:46.870+02:00","attributes":{"model":"claude","usage":{"input_tokens":20,` +
		`"cache_read_input_tokens":5}},"input_data":{"q":[1]},"error_stack":"","tags":{},"trace_tags":{"e":"s"}}]`))
	for _, s := range []string{
		"", "[]", "{}", "[1]", "[null]", `["x"]`, "[[]]",
		"[" + spanJSON(nil) + "]",
		"[" + spanJSON(map[string]any{"started_at": "2024-11-21T18:05:45.123+02:00", "ended_at": 1732212399123}) + "]",
		"[" + spanJSON(map[string]any{"attributes": map[string]any{"model": "m", "usage": map[string]any{"input_tokens": 1}}, "tags": map[string]any{"a": []int{1}}}) + "]",
		`[{"trace_id":"` + baseTrace + `","name":"\ud800\u00e9\\","started_at":"1732212345","session":{"id":"x","tags":{"k":null}}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		spans, rejected, err := DecodeBatch(body, testProject, testNow)
		if err != nil {
			if !errs.Is(err, errs.CodeInvalid) {
				t.Fatalf("error %v is not invalid_request", err)
			}
			if spans != nil {
				t.Fatal("spans returned with an error")
			}
			msg := err.Error()
			if strings.Contains(msg, "too many spans") {
				return // the rest of the body is not read
			}
			if notJSON := strings.Contains(msg, "not valid JSON"); notJSON == json.Valid(body) {
				t.Fatalf("DecodeBatch says %q, json.Valid says %v", msg, json.Valid(body))
			}
			return
		}
		if !json.Valid(body) {
			t.Fatal("invalid JSON accepted")
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(body, &elems); err != nil {
			t.Fatalf("accepted a body that is not an array: %v", err)
		}
		if len(spans) == 0 || len(spans)+len(rejected) != len(elems) {
			t.Fatalf("%d spans + %d rejected for %d elements", len(spans), len(rejected), len(elems))
		}
		last := -1
		for _, r := range rejected {
			if r.Index <= last || r.Index >= len(elems) || r.Error == "" {
				t.Fatalf("bad rejection %+v", r)
			}
			last = r.Index
		}
		for _, s := range spans {
			checkSpanInvariants(t, s)
		}
		// The tags are those encoding/json reads (of duplicate keys the last wins).
		accepted := elems[:0]
		for i, el := range elems {
			if !slices.ContainsFunc(rejected, func(r Rejected) bool { return r.Index == i }) {
				accepted = append(accepted, el)
			}
		}
		for i, el := range accepted {
			var members map[string]json.RawMessage // keys matched exactly, as DecodeBatch does
			var tags map[string]json.RawMessage
			if json.Unmarshal(el, &members) != nil || json.Unmarshal(members["tags"], &tags) != nil {
				continue
			}
			want := map[string]string{}
			for k, v := range tags {
				var s string
				if json.Unmarshal(v, &s) != nil {
					var c bytes.Buffer
					_ = json.Compact(&c, v)
					s = c.String()
				}
				if string(v) != "null" {
					want[k] = s
				}
			}
			if got := spans[i].Tags.Map(); !maps.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("span %d: tags %q, encoding/json reads %q", i, got, want)
			}
		}
	})
}

func checkSpanInvariants(t *testing.T, s Span) {
	t.Helper()
	fail := func(format string, args ...any) { t.Fatalf("span %s: "+format, append([]any{s.ID}, args...)...) }
	if err := s.Check(testNow); err != nil {
		fail("Check: %v", err)
	}
	for _, id := range []*string{&s.ID, &s.TraceID, s.ParentSpanID, s.SessionID} {
		if id != nil && !uuidPattern.MatchString(*id) {
			fail("id %q is not a lowercase UUID", *id)
		}
	}
	if s.Name == "" || len(s.Name) > MaxNameLen {
		fail("bad name length %d", len(s.Name))
	}
	if s.ProjectID != testProject || !s.CreatedAt.Equal(testNow) || !s.UpdatedAt.Equal(testNow) {
		fail("bad project or creation time")
	}
	if len(s.Kind) == 0 || len(s.Kind) > 64 || strings.Trim(s.Kind, "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		fail("bad kind %q", s.Kind)
	}
	if s.Status != nil && *s.Status != StatusUnset && *s.Status != StatusOK && *s.Status != StatusError {
		fail("bad status %q", *s.Status)
	}
	for _, tm := range []*time.Time{&s.StartedAt, s.EndedAt} {
		if tm == nil {
			continue
		}
		if tm.Before(MinSpanTime) || tm.After(testNow.Add(MaxFutureSkew)) || tm.Location() != time.UTC || tm.Nanosecond()%1000 != 0 {
			fail("bad time %v", tm)
		}
	}
	if s.EndedAt != nil && s.EndedAt.Before(s.StartedAt) {
		fail("ends before it starts")
	}
	for _, f := range []*float64{s.DurationMS, s.Cost} {
		if f != nil && (*f < 0 || math.IsInf(*f, 0) || math.IsNaN(*f)) {
			fail("bad number %v", *f)
		}
	}
	for _, d := range []*string{s.InputData, s.OutputData} {
		if d != nil && (len(*d) > MaxDataBytes || !utf8.ValidString(*d)) {
			fail("bad data")
		}
	}
	var compact bytes.Buffer
	if len(s.Attributes) > MaxAttributeBytes || s.Attributes[0] != '{' || !utf8.Valid(s.Attributes) ||
		json.Compact(&compact, s.Attributes) != nil || !bytes.Equal(compact.Bytes(), s.Attributes) {
		fail("attributes %q are not a compact JSON object", s.Attributes)
	}
	for _, tags := range []Tags{s.Tags, s.TraceTags, s.SessionTags} {
		if len(tags) > MaxTagKeys {
			fail("%d tags", len(tags))
		}
		for i, tg := range tags {
			k, v := tg.Key, tg.Value
			if k == "" || len(k) > MaxTagKeyLen || len(v) > MaxTagValueLen || !utf8.ValidString(k) || !utf8.ValidString(v) {
				fail("bad tag %q=%q", k, v)
			}
			if i > 0 && tags[i-1].Key >= k {
				fail("tags not in strictly increasing key order: %q before %q", tags[i-1].Key, k)
			}
		}
	}
	if s.SessionID == nil && (s.SessionName != nil || s.SessionTags != nil) {
		fail("session name or tags without a session")
	}
	for _, e := range []*string{s.ErrorCode, s.ErrorMessage, s.ErrorStack, s.CodeFilepath, s.SessionName} {
		if e != nil && (*e == "" || len(*e) > MaxErrorBytes || !utf8.ValidString(*e)) {
			fail("bad optional string %q", *e)
		}
	}
	if s.CodeLineno != nil && *s.CodeLineno < 0 {
		fail("negative line")
	}
	if s.LLM != nil && (s.LLM.Model == "" || s.LLM.InputTokens < 0 || s.LLM.OutputTokens < 0 ||
		s.LLM.CachedInputTokens+s.LLM.CacheWriteTokens > s.LLM.InputTokens || s.LLM.ReasoningTokens > s.LLM.OutputTokens) {
		fail("bad usage %+v", *s.LLM)
	}
	if s.Link != nil && *s.Link == (PromptLink{}) {
		fail("empty link")
	}
}

// FuzzPlainCount holds the fast path of integerValue to its general conversion.
func FuzzPlainCount(f *testing.F) {
	for _, s := range []string{"0", "00", "12", "999999999999999", "9999999999999999", "-1", "1.0", "1e3", `"7"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n, ok := plainCount([]byte(text))
		if !ok {
			return
		}
		if !jsonscan.IsNumber([]byte(text)) {
			t.Fatalf("%q: fast path %d for what is not a JSON number", text, n)
		}
		if want, ok := anyIntegerValue([]byte(text)); !ok || n != want {
			t.Fatalf("%s: fast path %d, general path %d (%v)", text, n, want, ok)
		}
	})
}

// FuzzCanonicalUUID holds isCanonicalUUID to its definition.
func FuzzCanonicalUUID(f *testing.F) {
	for _, s := range []string{
		"c3a1f9e2-7b6d-4e5f-a1b2-c3d4e5f6a7b8", "C3A1F9E2-7B6D-4E5F-A1B2-C3D4E5F6A7B8", "c3a1f9e2-7b6d-4e5f-a1b2-c3d4e5f6a7bg",
		"c3a1f9e2x7b6d-4e5f-a1b2-c3d4e5f6a7b8", "c3a1f9e27b6d4e5fa1b2c3d4e5f6a7b8", "c3a1f9e2-7b6d-4e5f-a1b2-c3d4e5f6a7b\xff",
		"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "/:`g@-----------------------------------",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isCanonicalUUID(s), uuidPattern.MatchString(s) && len(s) == 36; got != want {
			t.Fatalf("isCanonicalUUID(%q) = %v, want %v", s, got, want)
		}
	})
}
