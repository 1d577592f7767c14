package trace

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
)

// FuzzSpanInputEquivalence holds the span decoder (DecodeBatch, which reads spans in place
// for speed) equal to encoding/json's reading of api.SpanInput, the element of POST /spans as
// the Go client writes it: a span made of the fuzzer's values, encoded as a client encodes it,
// is stored with the values encoding/json reads back from the same bytes.
func FuzzSpanInputEquivalence(f *testing.F) {
	f.Add("chat", "[{\"role\":\"user\"}]", "hello", "", "env", "prod", uint8(0), uint8(0), uint32(123456), uint32(1500000), true)
	f.Add("tool.search", "", "", "boom", "user id", "a,b=c", uint8(2), uint8(1), uint32(0), uint32(0), false)
	f.Add("é\u2028\"<>&\\", "\x00\xff", "\ud7ff", "line\nbreak", "k", "", uint8(6), uint8(2), uint32(999999), uint32(1), true)
	f.Add(strings.Repeat("n", 300), strings.Repeat("x", 5000), "out", "e", "t\tab", "v\u00e9", uint8(5), uint8(0), uint32(1), uint32(59000000), false)
	f.Fuzz(func(t *testing.T, name, input, output, errMsg, tagKey, tagValue string, kind, status uint8, startMicros, durMicros uint32, session bool) {
		in := spanInputOf(name, input, output, errMsg, tagKey, tagValue, kind, status, startMicros, durMicros, session)
		body, err := json.Marshal([]api.SpanInput{in})
		if err != nil {
			t.Fatal(err)
		}
		var read []api.SpanInput
		if err := json.Unmarshal(body, &read); err != nil {
			t.Fatal(err)
		}
		spans, rejected, err := DecodeBatch(body, testProject, testNow)
		if err != nil || len(rejected) > 0 {
			t.Fatalf("a span the client can send is refused: %v %+v\n%s", err, rejected, body)
		}
		want, got := storedOf(read[0]), storedOf(spanInputFrom(&spans[0]))
		if !reflect.DeepEqual(want, got) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("the decoder read\n%s\nencoding/json read\n%s\nfrom %s", g, w, body)
		}
	})
}

// spanInputOf is a span the client could send, made of the fuzzer's values: ids derived from
// the name, a known kind and status, times within the decoder's range.
func spanInputOf(name, input, output, errMsg, tagKey, tagValue string, kind, status uint8, startMicros, durMicros uint32, session bool) api.SpanInput {
	start := testNow.Add(-time.Hour).Add(time.Duration(startMicros) * time.Microsecond)
	in := api.SpanInput{
		ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte("span"+name)).String(), TraceID: uuid.NewSHA1(uuid.NameSpaceOID, []byte("trace"+name)).String(),
		Name: "n" + cut(name, MaxNameLen-4), Kind: api.SpanKinds[int(kind)%len(api.SpanKinds)],
		Status: []string{StatusOK, StatusError, StatusUnset}[int(status)%3], StartedAt: start,
		InputData: &input, OutputData: &output, ErrorMessage: cut(errMsg, MaxErrorBytes), ErrorStack: cut(output, MaxErrorBytes),
		CodeFilepath: cut(tagValue, MaxErrorBytes), CodeLineno: new(int(startMicros % 10000)), Cost: new(float64(durMicros) / 1e9),
		Tags: map[string]string{"k" + cut(tagKey, MaxTagKeyLen-4): cut(tagValue, MaxTagValueLen)},
	}
	if durMicros > 0 {
		d := time.Duration(durMicros) * time.Microsecond
		in.EndedAt, in.DurationMS = start.Add(d), float64(d)/float64(time.Millisecond)
	}
	if session {
		id := uuid.NewSHA1(uuid.NameSpaceOID, []byte("session"+name)).String()
		in.SessionID, in.Session = id, &api.SessionRef{ID: id, Name: "s" + cut(name, MaxNameLen-4)}
	}
	return in
}

// cut is s as the client's encoder writes it (invalid UTF-8 replaced) cut to at most n bytes
// at a character boundary.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// spanInputFrom is a decoded span in the form of api.SpanInput, for comparing.
func spanInputFrom(s *Span) api.SpanInput {
	in := api.SpanInput{
		ID: s.ID, TraceID: s.TraceID, ParentSpanID: str(s.ParentSpanID), Name: s.Name, Kind: api.SpanKind(s.Kind),
		Status: str(s.Status), StartedAt: s.StartedAt, SessionID: str(s.SessionID), InputData: s.InputData,
		OutputData: s.OutputData, Tags: s.Tags.Map(), ErrorCode: str(s.ErrorCode), ErrorMessage: str(s.ErrorMessage),
		ErrorStack: str(s.ErrorStack), CodeFilepath: str(s.CodeFilepath), CodeLineno: s.CodeLineno, Cost: s.Cost,
	}
	if s.EndedAt != nil {
		in.EndedAt = *s.EndedAt
	}
	if s.DurationMS != nil {
		in.DurationMS = *s.DurationMS
	}
	if s.SessionID != nil {
		in.Session = &api.SessionRef{ID: *s.SessionID, Name: str(s.SessionName)}
	}
	for _, c := range s.ABChoices {
		in.ABChoices = append(in.ABChoices, api.SpanABChoice{ABChoiceID: c.ID, ChoiceName: c.Name, VariantKey: c.Variant, VariantValue: c.Value})
	}
	return in
}

// storedOf is what of a span input the store keeps: times in UTC, the empty tag set as none.
func storedOf(in api.SpanInput) api.SpanInput {
	in.StartedAt, in.EndedAt = in.StartedAt.UTC(), in.EndedAt.UTC()
	if len(in.Tags) == 0 {
		in.Tags = nil
	}
	return in
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
