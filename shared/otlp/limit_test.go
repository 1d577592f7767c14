package otlp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/plumehq/plume/shared/errs"
)

// manySpans returns an export of n minimal valid spans: all in one ScopeSpans, or each in a
// ResourceSpans of its own when spread (the limit then counts across scopes).
func manySpans(n int, spread bool) ptrace.Traces {
	td := ptrace.NewTraces()
	var ss ptrace.ScopeSpans
	for i := range n {
		if spread || i == 0 {
			ss = td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
		}
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{1, 2, 3, 4, byte(i >> 16), byte(i >> 8), byte(i), 8, 9, 10, 11, 12, 13, 14, 15, 16})
		sp.SetSpanID(pcommon.SpanID{1, 2, 3, 4, byte(i >> 16), byte(i >> 8), byte(i), 8})
		sp.SetName("s")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(time.Second)))
	}
	return td
}

// encode returns td in the encoding of contentType.
func encode(t testing.TB, td ptrace.Traces, contentType string) []byte {
	t.Helper()
	var (
		body []byte
		err  error
	)
	if contentType == ContentTypeProtobuf {
		body, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	} else {
		body, err = (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	}
	require.NoError(t, err)
	return body
}

// TestDecodeSpanLimit: an export of MaxSpansPerExport spans is decoded whole, one more is
// refused with errs.CodeTooLarge naming the limit, however the spans are laid out, in both
// encodings; the JSON count agrees with pdata's where the keys are spelled otherwise or
// repeated.
func TestDecodeSpanLimit(t *testing.T) {
	snakeCase := func(b []byte) []byte {
		s := strings.ReplaceAll(string(b), `"resourceSpans"`, `"resource_spans"`)
		return []byte(strings.ReplaceAll(s, `"scopeSpans"`, `"scope_spans"`))
	}
	// repeated is OTLP/JSON with the spans of one ScopeSpans split between two "spans" keys,
	// which pdata reads as one list.
	repeated := func(first, second int) []byte {
		spans := func(n, from int) string {
			parts := make([]string, n)
			for i := range parts {
				parts[i] = fmt.Sprintf(`{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"%016x","name":"s","startTimeUnixNano":"%d"}`, from+i+1, testStart.UnixNano())
			}
			return "[" + strings.Join(parts, ",") + "]"
		}
		return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":` + spans(first, 0) + `,"spans":` + spans(second, first) + `}]}]}`)
	}
	tests := []struct {
		name, contentType string
		body              []byte
		tooLarge          bool
	}{
		{"protobuf, one scope, at the limit", ContentTypeProtobuf, encode(t, manySpans(MaxSpansPerExport, false), ContentTypeProtobuf), false},
		{"protobuf, one scope, over", ContentTypeProtobuf, encode(t, manySpans(MaxSpansPerExport+1, false), ContentTypeProtobuf), true},
		{"protobuf, a resource per span, at the limit", ContentTypeProtobuf, encode(t, manySpans(MaxSpansPerExport, true), ContentTypeProtobuf), false},
		{"protobuf, a resource per span, over", ContentTypeProtobuf, encode(t, manySpans(MaxSpansPerExport+1, true), ContentTypeProtobuf), true},
		{"JSON, one scope, at the limit", ContentTypeJSON, encode(t, manySpans(MaxSpansPerExport, false), ContentTypeJSON), false},
		{"JSON, one scope, over", ContentTypeJSON, encode(t, manySpans(MaxSpansPerExport+1, false), ContentTypeJSON), true},
		{"JSON, a resource per span, at the limit", ContentTypeJSON, encode(t, manySpans(MaxSpansPerExport, true), ContentTypeJSON), false},
		{"JSON, a resource per span, over", ContentTypeJSON, encode(t, manySpans(MaxSpansPerExport+1, true), ContentTypeJSON), true},
		{"JSON, snake_case keys, at the limit", ContentTypeJSON, snakeCase(encode(t, manySpans(MaxSpansPerExport, true), ContentTypeJSON)), false},
		{"JSON, snake_case keys, over", ContentTypeJSON, snakeCase(encode(t, manySpans(MaxSpansPerExport+1, true), ContentTypeJSON)), true},
		{"JSON, repeated spans key, at the limit", ContentTypeJSON, repeated(MaxSpansPerExport/2, MaxSpansPerExport/2), false},
		{"JSON, repeated spans key, over", ContentTypeJSON, repeated(MaxSpansPerExport/2, MaxSpansPerExport/2+1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.contentType == ContentTypeJSON { // the decoder's count is pdata's
				td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(tt.body)
				require.NoError(t, err)
				require.Equal(t, tt.tooLarge, td.SpanCount() > MaxSpansPerExport, "pdata counts %d spans", td.SpanCount())
			}
			x, err := Decode(tt.body, tt.contentType)
			if tt.tooLarge {
				require.Error(t, err)
				assert.Equal(t, errs.CodeTooLarge, errs.CodeOf(err))
				assert.Contains(t, err.Error(), fmt.Sprintf("at most %d spans per request", MaxSpansPerExport))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, MaxSpansPerExport, x.SpanCount())
			spans, rejected, reasons := Map(x, testProject, testNow)
			assert.Len(t, spans, MaxSpansPerExport, "%v", reasons)
			assert.Zero(t, rejected)
		})
	}
}

// TestDecodeStopsEarly: an export of a hundred times the limit is refused after reading at
// most the limit's worth of it: it allocates no more than decoding the largest accepted export
// does, besides the one copy of the body the protobuf decoder makes (Export's strings are
// parts of it). Decoding its 100,000 spans would allocate several times that. Work done, not
// time taken.
func TestDecodeStopsEarly(t *testing.T) {
	const huge = 100 * MaxSpansPerExport
	tests := []struct {
		name, contentType string
		spread            bool
		// bodyCopy tells whether Decode copies the body once (protobuf) before it counts.
		bodyCopy bool
	}{
		{"protobuf, one scope", ContentTypeProtobuf, false, true},
		{"protobuf, a resource per span", ContentTypeProtobuf, true, true},
		{"JSON, one scope", ContentTypeJSON, false, false},
		{"JSON, a resource per span", ContentTypeJSON, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			accepted := encode(t, manySpans(MaxSpansPerExport, tt.spread), tt.contentType)
			refused := encode(t, manySpans(huge, tt.spread), tt.contentType)
			var err error
			acceptedBytes := bytesAllocated(func() { _, err = Decode(accepted, tt.contentType) })
			require.NoError(t, err)
			refusedBytes := bytesAllocated(func() { _, err = Decode(refused, tt.contentType) })
			require.Equal(t, errs.CodeTooLarge, errs.CodeOf(err))
			budget := acceptedBytes
			if tt.bodyCopy {
				budget += uint64(len(refused))
			}
			t.Logf("%d spans (%d bytes) refused allocating %d bytes; %d spans accepted allocating %d", huge, len(refused), refusedBytes, MaxSpansPerExport, acceptedBytes)
			assert.LessOrEqual(t, refusedBytes, budget)
		})
	}
}

// sdkBatch returns an export of n spans as an SDK's BatchSpanProcessor sends them, each with
// 4 KiB of attributes: 16 string attributes of 256 bytes, key included.
func sdkBatch(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("io.opentelemetry.http")
	for i := range n {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{0xa1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, byte(i >> 8), byte(i)})
		sp.SetSpanID(pcommon.SpanID{0xb1, 2, 3, 4, 5, 6, byte(i >> 8), byte(i)})
		sp.SetParentSpanID(pcommon.SpanID{0xc1, 2, 3, 4, 5, 6, byte(i >> 8), byte(i)})
		sp.SetName("chat gpt-4o")
		sp.SetKind(ptrace.SpanKindClient)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(time.Second)))
		sp.Status().SetCode(ptrace.StatusCodeOk)
		for j := range 16 {
			key := fmt.Sprintf("app.attribute.number_%02d", j)
			sp.Attributes().PutStr(key, strings.Repeat("v", 256-len(key)))
		}
	}
	return td
}

// TestDefaultBatchFits holds the figures of MaxExportBytes's doc: what real exporters send fits
// it with room to spare, in both encodings. An SDK's default batch (512 spans) of 4 KiB of
// attributes a span takes under half of it; MaxSpansPerExport such spans fit; and as many spans
// as instrumented services send them (benchTraces) take under a fifth.
func TestDefaultBatchFits(t *testing.T) {
	tests := []struct {
		name   string
		td     ptrace.Traces
		within int
	}{
		{"512 spans of 4 KiB of attributes", sdkBatch(512), MaxExportBytes / 2},
		{"MaxSpansPerExport spans of 4 KiB of attributes", sdkBatch(MaxSpansPerExport), MaxExportBytes},
		{"MaxSpansPerExport spans of instrumented services", benchTraces(t, MaxSpansPerExport), MaxExportBytes / 5},
	}
	for _, tt := range tests {
		for _, contentType := range []string{ContentTypeProtobuf, ContentTypeJSON} {
			t.Run(tt.name+" "+contentType, func(t *testing.T) {
				body := encode(t, tt.td, contentType)
				t.Logf("%d bytes (%.2f MiB, %d a span)", len(body), float64(len(body))/(1<<20), len(body)/tt.td.SpanCount())
				assert.LessOrEqual(t, len(body), tt.within)
				x, err := Decode(body, contentType)
				require.NoError(t, err)
				assert.Equal(t, tt.td.SpanCount(), x.SpanCount())
			})
		}
	}
}
