package trace

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
)

// FuzzTraceInputEquivalence holds DecodeTraces (the validating reader of POST /traces) equal to
// encoding/json's reading of api.TraceInput, the element as the Go client writes it: a trace
// made of the fuzzer's values, encoded as a client encodes it, is read with the values
// encoding/json reads back from the same bytes.
func FuzzTraceInputEquivalence(f *testing.F) {
	f.Add("checkout", "conversation-1", "env", "prod", `{"user":"u1"}`, uint8(0), uint32(123456), uint32(1500000), uint32(25), true)
	f.Add("é\u2028\"<>&\\", "3f1c8a4e-2b9d-4c1a-9e7f-0a1b2c3d4e5f", "user id", "a,b=c", `{}`, uint8(1), uint32(0), uint32(0), uint32(0), false)
	f.Add("\x00\xff", "\ud7ff", "k", "", `{"nested":{"a":[1,2,{"b":null}]}}`, uint8(2), uint32(999999), uint32(1), uint32(1<<31), true)
	f.Fuzz(func(t *testing.T, name, session, tagKey, tagValue, attrs string, status uint8, startMicros, durMicros, cost uint32, withID bool) {
		in := api.TraceInput{
			SessionID: "s" + cut(session, MaxIDLen-4), Name: "n" + cut(name, MaxNameLen-4),
			Status:    []string{StatusOK, StatusError, StatusUnset, ""}[int(status)%4],
			StartedAt: testNow.Add(-time.Hour).Add(time.Duration(startMicros) * time.Microsecond),
			Cost:      new(float64(cost) / 1e6),
			Tags:      map[string]string{"k" + cut(tagKey, MaxTagKeyLen-4): cut(tagValue, MaxTagValueLen)},
		}
		if withID {
			in.ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte("trace"+name)).String()
		}
		if durMicros > 0 {
			d := time.Duration(durMicros) * time.Microsecond
			in.EndedAt, in.DurationMS = in.StartedAt.Add(d), new(float64(d)/float64(time.Millisecond))
		}
		if json.Valid([]byte(attrs)) && isObject([]byte(attrs)) {
			if err := json.Unmarshal([]byte(attrs), &in.Attributes); err != nil {
				t.Skip()
			}
		}
		body, err := json.Marshal([]api.TraceInput{in})
		if err != nil {
			t.Fatal(err)
		}
		var read []api.TraceInput
		if err := json.Unmarshal(body, &read); err != nil {
			t.Fatal(err)
		}
		decoded, err := DecodeTraces(body, testNow)
		if err != nil {
			t.Fatalf("a trace the client can send is refused: %v\n%s", err, body)
		}
		want, got := storedTraceOf(read[0]), traceInputFrom(t, decoded[0])
		if want.ID == "" {
			want.ID = got.ID // a new trace's id is the server's
		}
		if !reflect.DeepEqual(want, got) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("the decoder read\n%s\nencoding/json read\n%s\nfrom %s", g, w, body)
		}
	})
}

// FuzzSessionInputEquivalence is FuzzTraceInputEquivalence for DecodeSessions and
// api.SessionInput.
func FuzzSessionInputEquivalence(f *testing.F) {
	f.Add("support chat", "conversation-1", "3f1c8a4e-2b9d-4c1a-9e7f-0a1b2c3d4e5f", "env", "prod", `{"user":"u1"}`)
	f.Add("", "", "p", "user id", "a,b=c", `{}`)
	f.Add("é\u2028\"<>&\\", "\x00\xff", "\ud7ff", "k", "", `{"nested":{"a":[1,2,{"b":null}]}}`)
	f.Fuzz(func(t *testing.T, name, id, project, tagKey, tagValue, attrs string) {
		in := api.SessionInput{
			ID: cut(id, MaxIDLen), ProjectID: "p" + cut(project, MaxIDLen-4), Name: cut(name, MaxNameLen),
			Tags: map[string]string{"k" + cut(tagKey, MaxTagKeyLen-4): cut(tagValue, MaxTagValueLen)},
		}
		if json.Valid([]byte(attrs)) && isObject([]byte(attrs)) {
			if err := json.Unmarshal([]byte(attrs), &in.Attributes); err != nil {
				t.Skip()
			}
		}
		body, err := json.Marshal([]api.SessionInput{in})
		if err != nil {
			t.Fatal(err)
		}
		var read []api.SessionInput
		if err := json.Unmarshal(body, &read); err != nil {
			t.Fatal(err)
		}
		decoded, err := DecodeSessions(body)
		if err != nil {
			t.Fatalf("a session the client can send is refused: %v\n%s", err, body)
		}
		want, got := read[0], sessionInputFrom(t, decoded[0])
		if want.ID == "" {
			want.ID = got.ID // a new session's id is the server's
		} else {
			want.ID = SessionIDOf(want.ID) // any string names a session, as the SDKs send them
		}
		if len(want.Tags) == 0 {
			want.Tags = nil
		}
		if !reflect.DeepEqual(want, got) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("the decoder read\n%s\nencoding/json read\n%s\nfrom %s", g, w, body)
		}
	})
}

// storedTraceOf is what of a trace input the decoder keeps: times in UTC, the session id as
// stored, the empty tag set as none.
func storedTraceOf(in api.TraceInput) api.TraceInput {
	in.SessionID = SessionIDOf(in.SessionID)
	in.StartedAt, in.EndedAt = in.StartedAt.UTC(), in.EndedAt.UTC()
	if len(in.Tags) == 0 {
		in.Tags = nil
	}
	return in
}

// traceInputFrom is a decoded trace in the form of api.TraceInput, for comparing.
func traceInputFrom(t *testing.T, d TraceInput) api.TraceInput {
	in := api.TraceInput{ID: d.ID, SessionID: d.SessionID, Name: d.Name, Status: d.Status, StartedAt: d.StartedAt,
		DurationMS: d.DurationMS, Cost: d.Cost, Attributes: attributesOf(t, d.Attributes), Tags: d.Tags}
	if d.EndedAt != nil {
		in.EndedAt = *d.EndedAt
	}
	return in
}

func sessionInputFrom(t *testing.T, d SessionInput) api.SessionInput {
	return api.SessionInput{ID: d.ID, ProjectID: d.ProjectID, Name: d.Name, Attributes: attributesOf(t, d.Attributes), Tags: d.Tags}
}

// attributesOf reads stored attributes as encoding/json reads the client's.
func attributesOf(t *testing.T, raw json.RawMessage) map[string]any {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("stored attributes %s: %v", raw, err)
	}
	return m
}
