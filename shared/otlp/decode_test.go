package otlp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/plumehq/plume/shared/errs"
)

func TestDecodeContentTypes(t *testing.T) {
	td, _ := oneSpan(t, map[string]any{"a": 1})
	pb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)

	tests := []struct {
		name        string
		body        []byte
		contentType string
		code        errs.Code // "" means success
	}{
		{"protobuf", pb, "application/x-protobuf", ""},
		{"protobuf with parameters and case", pb, "Application/X-Protobuf; charset=binary", ""},
		{"JSON", js, "application/json", ""},
		{"JSON with charset", js, "application/json; charset=utf-8", ""},
		{"JSON upper case", js, "APPLICATION/JSON", ""},
		{"no content type", pb, "", errs.CodeUnsupportedMedia},
		{"malformed content type", pb, "application/", errs.CodeUnsupportedMedia},
		{"text", js, "text/plain", errs.CodeUnsupportedMedia},
		{"form", js, "application/x-www-form-urlencoded", errs.CodeUnsupportedMedia},
		{"protobuf without x-", pb, "application/protobuf", errs.CodeUnsupportedMedia},
		{"JSON body sent as protobuf", js, "application/x-protobuf", errs.CodeInvalid},
		{"protobuf body sent as JSON", pb, "application/json", errs.CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(tt.body, tt.contentType)
			if tt.code != "" {
				require.Error(t, err)
				assert.Equal(t, tt.code, errs.CodeOf(err), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 1, got.SpanCount())
		})
	}
}

func TestDecodeInvalidBodies(t *testing.T) {
	td, _ := oneSpan(t, map[string]any{"a": "b"})
	pb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)

	tests := []struct {
		name        string
		body        string
		contentType string
		spans       int // when valid
		valid       bool
	}{
		{"empty protobuf is an empty export", "", ContentTypeProtobuf, 0, true},
		{"truncated protobuf", string(pb[:len(pb)-3]), ContentTypeProtobuf, 0, false},
		{"protobuf garbage", "\xff\xff\xff\xff", ContentTypeProtobuf, 0, false},
		{"protobuf length beyond the body", "\x0a\x7f\x00", ContentTypeProtobuf, 0, false},
		{"empty JSON", "", ContentTypeJSON, 0, false},
		{"empty JSON object", "{}", ContentTypeJSON, 0, true},
		{"JSON array", "[]", ContentTypeJSON, 0, false},
		{"truncated JSON", string(js[:len(js)-5]), ContentTypeJSON, 0, false},
		{"base64 id (protojson's form)", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"CvdlGRbNQ92ESOshHIAxnA=="}]}]}]}`, ContentTypeJSON, 0, false},
		{"short hex id", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"b7ad6b71"}]}]}]}`, ContentTypeJSON, 0, false},
		{"unknown enum name", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SPAN_KIND_BOGUS"}]}]}]}`, ContentTypeJSON, 0, false},
		{"wrong type", `{"resourceSpans":{}}`, ContentTypeJSON, 0, false},
		{"int64 as number and as string", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":1748779140123456789,` +
			`"endTimeUnixNano":"1748779140123456789","attributes":[{"key":"n","value":{"intValue":7}}]}]}]}]}`, ContentTypeJSON, 1, true},
		{"unknown fields are ignored", `{"resourceSpans":[],"future":{"x":[1,2]}}`, ContentTypeJSON, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.body), tt.contentType)
			if !tt.valid {
				require.Error(t, err)
				assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err), err.Error())
				assert.LessOrEqual(t, len(err.Error()), 300, "the message is bounded")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.spans, got.SpanCount())
		})
	}
}

// The error message quotes at most a bounded part of the codec's message, in valid UTF-8.
func TestDecodeErrorMessage(t *testing.T) {
	_, err := Decode([]byte("{\"resourceSpans\":\xff"+strings.Repeat("x", 1000)), ContentTypeJSON)
	require.Error(t, err)
	var e *errs.Error
	require.ErrorAs(t, err, &e)
	assert.True(t, strings.HasPrefix(e.Message, "invalid OTLP JSON body: "), e.Message)
	assert.LessOrEqual(t, len(e.Message), len("invalid OTLP JSON body: ")+maxErrorDetail+3)
	assert.NotContains(t, e.Message, "\xff")
}

// A JSON Export does not share memory with the body: its strings are the decoder's own (a
// protobuf Export's are the body's bytes, which Decode's caller leaves as they are).
func TestDecodeJSONDoesNotRetainBody(t *testing.T) {
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(fixtureTraces(t))
	require.NoError(t, err)
	x, err := Decode(body, ContentTypeJSON)
	require.NoError(t, err)
	records := func() []string { // the spans as stored: copies
		spans, _, _ := Map(x, testProject, testNow)
		var out []string
		for _, s := range spans {
			out = append(out, string(s.AppendJSON(nil)))
		}
		return out
	}
	want := records()
	for i := range body {
		body[i] = 'x'
	}
	assert.Equal(t, want, records())
}

// TestDecodePanicIsInternal: a decoder that panics (a bug) makes Decode return a *PanicError
// with the stack, which has no errs code, so that it is answered 500 and logged, not 400.
func TestDecodePanicIsInternal(t *testing.T) {
	saved := decoders
	t.Cleanup(func() { decoders = saved })
	boom := func([]byte) (*Export, error) { panic("index out of range") }
	decoders.protobuf, decoders.json = boom, boom
	tests := []struct{ contentType, encoding string }{
		{ContentTypeProtobuf, "protobuf"},
		{ContentTypeJSON + "; charset=utf-8", "JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.encoding, func(t *testing.T) {
			x, err := Decode([]byte("{}"), tt.contentType)
			assert.Nil(t, x)
			var p *PanicError
			require.ErrorAs(t, err, &p)
			assert.Equal(t, tt.encoding, p.Encoding)
			assert.Equal(t, "index out of range", p.Value)
			assert.Contains(t, string(p.Stack), "TestDecodePanicIsInternal")
			assert.Equal(t, errs.CodeInternal, errs.CodeOf(err))
			assert.Equal(t, "the OTLP "+tt.encoding+" decoder panicked: index out of range", err.Error())
		})
	}
}
