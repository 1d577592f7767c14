package otlp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The id vectors of COMPAT.md ("OTLP"), which the zeroeval SDKs produce.
func TestIDs(t *testing.T) {
	tests := []struct {
		name, trace, span, wantTrace, wantSpan string
	}{
		{
			name:  "COMPAT.md vectors",
			trace: "0af7651916cd43dd8448eb211c80319c", wantTrace: "0af76519-16cd-43dd-8448-eb211c80319c",
			span: "b7ad6b7169203331", wantSpan: "b7ad6b71-6920-3331-0000-000000000000",
		},
		{
			name:  "all bits set",
			trace: "ffffffffffffffffffffffffffffffff", wantTrace: "ffffffff-ffff-ffff-ffff-ffffffffffff",
			span: "ffffffffffffffff", wantSpan: "ffffffff-ffff-ffff-0000-000000000000",
		},
		{
			name:  "low bytes",
			trace: "000102030405060708090a0b0c0d0e0f", wantTrace: "00010203-0405-0607-0809-0a0b0c0d0e0f",
			span: "0001020304050607", wantSpan: "00010203-0405-0607-0000-000000000000",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantTrace, TraceID(traceIDOf(t, tt.trace)))
			assert.Equal(t, tt.wantSpan, SpanID(spanIDOf(t, tt.span)))
		})
	}
}

// Parents map like span ids, so an OpenTelemetry child of an SDK span (or the reverse) nests.
func TestMapIDsAndParent(t *testing.T) {
	td, sp := oneSpan(t, nil)
	child := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	sp.CopyTo(child)
	child.SetSpanID(spanIDOf(t, "00f067aa0ba902b7"))
	child.SetParentSpanID(sp.SpanID())

	spans, rejected, reasons := mapTraces(t, td)
	assert.Zero(t, rejected)
	assert.Empty(t, reasons)
	if assert.Len(t, spans, 2) {
		assert.Equal(t, "0af76519-16cd-43dd-8448-eb211c80319c", spans[0].TraceID)
		assert.Equal(t, "b7ad6b71-6920-3331-0000-000000000000", spans[0].ID)
		assert.Nil(t, spans[0].ParentSpanID)
		assert.Equal(t, "00f067aa-0ba9-02b7-0000-000000000000", spans[1].ID)
		assert.Equal(t, ptr("b7ad6b71-6920-3331-0000-000000000000"), spans[1].ParentSpanID)
		assert.Equal(t, spans[0].TraceID, spans[1].TraceID)
		for _, s := range spans {
			checkSpan(t, s, testNow)
		}
	}
}
