package otlp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/plumehq/plume/shared/errs"
)

// fuzzSeeds are exports that exercise the mapping: the fixture trace, the mapping table's
// spans and a benchmark payload.
func fuzzSeeds(tb testing.TB) []ptrace.Traces {
	seeds := []ptrace.Traces{fixtureTraces(tb), benchTraces(tb, 5), envelopeTraces()}
	for _, attrs := range []map[string]any{
		{"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "hi", "gen_ai.completion.0.content": "yo"},
		{"llm.input_messages.0.message.role": "user", "llm.output_messages.0.message.contents.0.message_content.text": "x"},
		{"zeroeval.prompt_version": "3", "zeroeval.prompt_slug": "s", "task": "t", "tag.tags": []any{"a", "b"}},
		{"zeroeval": map[string]any{"prompt_version_id": "not-a-uuid"}, "session.id": "s", "session.name": "n"},
		{"gen_ai.usage.input_tokens": -5, "gen_ai.usage.cache_read_input_tokens": 1e12, "gen_ai.request.model": "m"},
	} {
		td, _ := oneSpan(tb, attrs)
		seeds = append(seeds, td)
	}
	return seeds
}

// envelopeTraces returns an export of two resources of two scopes each (one resource and
// one scope empty), whose spans have attributes named as the keys Map writes itself
// (written once per scope and per span) and spans of several traces one after another.
func envelopeTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range 2 {
		rs := td.ResourceSpans().AppendEmpty()
		if r == 0 {
			rs.Resource().Attributes().PutStr("service.name", "checkout")
		}
		for sc := range 2 {
			ss := rs.ScopeSpans().AppendEmpty()
			if sc == 0 {
				ss.Scope().SetName("openai")
			}
			for i := range 3 {
				sp := ss.Spans().AppendEmpty()
				sp.SetTraceID(pcommon.TraceID{1, byte(r), byte(sc), byte(i / 2), 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
				sp.SetSpanID(pcommon.SpanID{2, byte(r), byte(sc), byte(i), 5, 6, 7, 8})
				sp.SetName("chat")
				sp.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
				a := sp.Attributes()
				if i == 0 {
					a.PutStr("gen_ai.request.model", "gpt-4o")
				}
				for _, k := range []string{keyProvider, keyModel, keyInputTokens, keyZeroeval, keyResource, keyScope, keyTruncated} {
					a.PutStr(k, "own")
				}
			}
		}
	}
	return td
}

// checkDecodeError checks an error of Decode: the body is invalid, or it has more than
// MaxSpansPerExport spans, which pdata (unmarshal) finds too when it can read the body.
func checkDecodeError(t *testing.T, err error, body []byte, unmarshal func([]byte) (ptrace.Traces, error)) {
	switch errs.CodeOf(err) {
	case errs.CodeInvalid:
	case errs.CodeTooLarge:
		if td, err := unmarshal(body); err == nil {
			assert.Greater(t, td.SpanCount(), MaxSpansPerExport)
		}
	default:
		t.Errorf("Decode: %v (code %s)", err, errs.CodeOf(err))
	}
}

// checkMapped maps a decoded export and checks every span it produces.
func checkMapped(t *testing.T, x *Export) {
	assert.LessOrEqual(t, x.SpanCount(), MaxSpansPerExport)
	spans, rejected, reasons := Map(x, testProject, testNow)
	assert.Equal(t, x.SpanCount(), len(spans)+rejected)
	assert.LessOrEqual(t, len(reasons), maxReasons)
	assert.Equal(t, min(rejected, maxReasons), len(reasons))
	for _, s := range spans {
		require.NoError(t, s.Check(testNow), "span %s", s.ID) // the invariants of trace.DecodeBatch's spans
		checkSpan(t, s, testNow)
	}
}

// Decode never panics on any body; its errors are coded; it never decodes more than
// MaxSpansPerExport spans; whatever it decodes, Map turns into spans that satisfy
// DecodeBatch's invariants (trace.Span.Check).
func FuzzDecodeProtobuf(f *testing.F) {
	for _, td := range fuzzSeeds(f) {
		body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		require.NoError(f, err)
		f.Add(body)
	}
	// Random wire exports (golden_test.go): duplicate keys, Map's own keys among the span's,
	// a value before its key, other fields between attributes; the small ones.
	for seed, added := uint64(0), 0; added < 4; seed++ {
		if body := randomExport(seed); len(body) < 16<<10 {
			f.Add(body)
			added++
		}
	}
	f.Add([]byte{})
	f.Add([]byte("\x0a\x02\x12\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		td, err := Decode(body, ContentTypeProtobuf)
		if err != nil {
			checkDecodeError(t, err, body, (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces)
			return
		}
		checkMapped(t, td)
	})
}

// FuzzDecodeJSON is FuzzDecodeProtobuf for OTLP/JSON.
func FuzzDecodeJSON(f *testing.F) {
	for _, td := range fuzzSeeds(f) {
		body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		require.NoError(f, err)
		f.Add(body)
	}
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0AF7651916CD43DD8448EB211C80319C",` +
		`"spanId":"b7ad6b7169203331","name":"x","kind":"SPAN_KIND_CLIENT","startTimeUnixNano":1748779140123456789,` +
		`"status":{"code":"STATUS_CODE_ERROR","message":"m"}}]}]}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		x, err := Decode(body, ContentTypeJSON)
		if err != nil {
			checkDecodeError(t, err, body, (&ptrace.JSONUnmarshaler{}).UnmarshalTraces)
			return
		}
		checkMapped(t, x)
		// The export built from pdata's reading of the body maps as pdata's own protobuf
		// encoding of it does.
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(body)
		require.NoError(t, err)
		wantSpans, wantRejected, wantReasons := Map(pdataExport(t, td), testProject, testNow)
		spans, rejected, reasons := Map(x, testProject, testNow)
		assert.Equal(t, wantSpans, spans)
		assert.Equal(t, wantRejected, rejected)
		assert.Equal(t, wantReasons, reasons)
	})
}
