package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/plumehq/plume/shared/trace"
)

// BenchmarkTreeRows orders a 10,000-span trace into its tree with waterfall bars and subtree
// totals, as the trace page does before rendering a page of it: each span has up to ten
// children, four levels deep, in shuffled start order.
func BenchmarkTreeRows(b *testing.B) {
	const n = 10_000
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	sums := make(map[string]trace.Summary, n)
	for i := range n {
		id, parent := fmt.Sprintf("span-%05d", i), ""
		if i > 0 {
			parent = fmt.Sprintf("span-%05d", (i-1)/10)
		}
		start := at.Add(time.Duration((i*7919)%n) * time.Millisecond)
		end, cost := start.Add(time.Second), 0.001
		sums[id] = trace.Summary{SpanID: id, ParentSpanID: parent, Name: "step", StartedAt: start, EndedAt: &end, Cost: &cost}
	}
	b.ReportAllocs()
	for b.Loop() {
		rows := treeRows(sums)
		if len(rows) != n {
			b.Fatalf("%d rows", len(rows))
		}
	}
}
