package otlp

// The cost of large exports, bounded by work done (bytes allocated), not by time: the tests
// must hold on any machine, however busy. The time is in the benchmarks.

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/plumehq/plume/shared/trace"
)

// Many attributes (distinct or duplicated) cost linear time.
func TestMapManyAttributes(t *testing.T) {
	const n = 200_000
	body := manyAttributes(t, n)
	var x *Export
	var spans []trace.Span
	var rejected int
	var err error
	allocated := bytesAllocated(func() {
		x, err = Decode(body, ContentTypeProtobuf)
		require.NoError(t, err)
		spans, rejected, _ = Map(x, testProject, testNow)
	})
	t.Logf("mapped %d attributes (%d bytes of protobuf) allocating %d bytes", n+n/4, len(body), allocated)
	require.Zero(t, rejected)
	require.Len(t, spans, 1)
	checkSpan(t, spans[0], testNow)
	// Work done, not time taken (that is BenchmarkMapManyAttributes): the bytes allocated are
	// within a constant of the body's size, and half the attributes take about half of them,
	// where work quadratic in the attributes would take a quarter.
	assert.Less(t, allocated, uint64(maxAllocPerBodyByte*len(body)))
	half := manyAttributes(t, n/2)
	allocatedHalf := bytesAllocated(func() {
		x, err := Decode(half, ContentTypeProtobuf)
		require.NoError(t, err)
		Map(x, testProject, testNow)
	})
	assert.Greater(t, 3*allocatedHalf, allocated, "allocated %d for %d attributes, %d for half", allocated, n+n/4, allocatedHalf)
	assert.LessOrEqual(t, len(spans[0].Attributes), trace.MaxAttributeBytes)
}

// manyAttributes is the protobuf export of one span with n integer attributes and an object
// attribute of n/4 members.
func manyAttributes(t testing.TB, n int) []byte {
	raw := make(map[string]any, n+1)
	nested := make(map[string]any, n/4)
	for i := 0; i < n; i++ {
		raw[fmt.Sprintf("k%d", i)] = i
	}
	for i := 0; i < n/4; i++ {
		nested[fmt.Sprintf("n%d", i)] = true
	}
	raw["nested"] = nested
	td, _ := oneSpan(t, raw) // FromRaw: linear, where Map.Put* is quadratic
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	return body
}

// A large resource is cut once (its largest attributes dropped) rather than copied whole into
// the attributes of each of its spans, to the export's budget shared between them.
func TestMapLargeResource(t *testing.T) {
	td, sp := oneSpan(t, nil)
	res := td.ResourceSpans().At(0).Resource().Attributes()
	for i := 0; i < 100; i++ {
		res.PutStr(fmt.Sprintf("big.%02d", i), strings.Repeat("r", 40<<10+i))
	}
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 1; i < 1000; i++ {
		s := spans.AppendEmpty()
		sp.CopyTo(s)
		s.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, byte(i >> 8), byte(i)})
	}
	got, rejected, _ := mapTraces(t, td)
	require.Zero(t, rejected)
	require.Len(t, got, 1000)
	x := pdataExport(t, td)
	allocated := bytesAllocated(func() { Map(x, testProject, testNow) })
	// Work done, not time taken: the 4 MB resource is cut once, so each of the 1,000 spans
	// carries at most resourceLimit(1000) of it (the export's resourceBudget shared between its
	// spans); copied whole into each span it would be 4 GB, and at maxResourceBytes a span, 64 MB.
	// The resource itself is read, encoded and sorted by size once: a few times its size.
	assert.Less(t, allocated, uint64(1000*8<<10+resourceBudget+4*resourceBytes(res)))
	for _, s := range []trace.Span{got[0], got[999]} {
		checkSpan(t, s, testNow)
		attrs := attrsOf(t, s)
		resource := attrs["resource"].(map[string]any)
		assert.Equal(t, "svc", resource["service.name"])
		assert.Len(t, resource, 1, "service.name alone fits in resourceLimit(1000)")
		note := attrs["plume.truncated"].(map[string]any)["attributes"].(map[string]any)
		assert.Equal(t, 100.0, note["dropped"])
		assert.Equal(t, []any{"resource.big.99", "resource.big.98", "resource.big.97", "resource.big.96",
			"resource.big.95", "resource.big.94", "resource.big.93", "resource.big.92"}, note["keys"])
	}
}

// TestResourceLimit: a span's copy of its resource is at most maxResourceBytes, and the copies
// of one export at most resourceBudget together.
func TestResourceLimit(t *testing.T) {
	for _, spans := range []int{0, 1, 10, 80, 512, 1000} {
		limit := resourceLimit(spans)
		assert.LessOrEqual(t, limit, maxResourceBytes, "%d spans", spans)
		assert.LessOrEqual(t, spans*limit, resourceBudget, "%d spans", spans)
		assert.GreaterOrEqual(t, limit, 4<<10, "%d spans: a service's usual resource still fits", spans)
	}
	assert.Equal(t, maxResourceBytes, resourceLimit(1))
}

// maxAllocPerBodyByte bounds the bytes Decode and Map allocate per byte of a protobuf body of
// many small attributes (about 45 today: the attributes are decoded, deduplicated and written
// as JSON): linear work, whatever the machine's speed.
const maxAllocPerBodyByte = 64

// bytesAllocated returns the bytes the heap allocated while f ran (the package's tests do not
// run in parallel, so the count is f's own).
func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// resourceBytes is the size of the string values of a resource's attributes.
func resourceBytes(m pcommon.Map) int {
	n := 0
	for k, v := range m.All() {
		n += len(k) + len(v.Str())
	}
	return n
}

// BenchmarkMapManyAttributes measures Decode + Map of one span of 250,000 attributes (the time
// that TestMapManyAttributes bounds by work done), per attribute.
func BenchmarkMapManyAttributes(b *testing.B) {
	const n = 200_000
	body := manyAttributes(b, n)
	b.ReportAllocs()
	for b.Loop() {
		x, err := Decode(body, ContentTypeProtobuf)
		if err != nil {
			b.Fatal(err)
		}
		Map(x, testProject, testNow)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(n+n/4), "ns/attribute")
}
