package trace

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestTreeNodes: the order, depths and subtree totals of a trace's tree.
func TestTreeNodes(t *testing.T) {
	at := time.Now()
	cost := func(c float64) *float64 { return &c }
	span := func(id, parent string, second int, c *float64, failed bool) Summary {
		return Summary{SpanID: id, ParentSpanID: parent, StartedAt: at.Add(time.Duration(second) * time.Second), Cost: c, HasError: failed, InputTokens: 10}
	}
	type node struct {
		id            string
		depth         int
		spans, errors int
		cost          any // nil: no span of the subtree has a cost
		tokens        int64
	}
	tests := []struct {
		name  string
		spans []Summary
		want  []node
	}{
		{"subtrees summed, children in start order", []Summary{
			span("c", "", 5, nil, false), span("b", "a", 2, cost(0.5), true), span("a1", "a", 1, cost(0.25), false),
			span("b1", "b", 3, nil, true), span("a", "", 0, nil, false),
		}, []node{
			{"a", 0, 4, 2, 0.75, 40}, {"a1", 1, 1, 0, 0.25, 10}, {"b", 1, 2, 2, 0.5, 20}, {"b1", 2, 1, 1, nil, 10}, {"c", 0, 1, 0, nil, 10},
		}},
		{"a parent not among the spans makes a root", []Summary{span("x", "gone", 1, nil, false), span("y", "x", 2, nil, false)},
			[]node{{"x", 0, 2, 0, nil, 20}, {"y", 1, 1, 0, nil, 10}}},
		{"a span that is its own parent is a root", []Summary{span("s", "s", 0, nil, false)}, []node{{"s", 0, 1, 0, nil, 10}}},
		{"a cycle of parents is walked once, from its first span", []Summary{span("p", "q", 0, nil, false), span("q", "p", 1, nil, false)},
			[]node{{"p", 0, 2, 0, nil, 20}, {"q", 1, 1, 0, nil, 10}}},
		{"no spans", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sums := map[string]Summary{}
			for _, s := range tt.spans {
				sums[s.SpanID] = s
			}
			var got []node
			for _, n := range treeNodes(sums) {
				var c any
				if n.Sub.Costed {
					c = n.Sub.Cost
				}
				got = append(got, node{n.SpanID, n.Depth, n.Sub.Spans, n.Sub.Errors, c, n.Sub.InputTokens + n.Sub.OutputTokens})
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// BenchmarkTreeNodes orders a 10,000-span trace into its tree with subtree totals (the
// dashboard's trace page did for every page of such a trace; the route now builds at most
// api.SpanTreeWholeMax spans' tree): each span has up to ten children, four levels deep, in
// shuffled start order.
func BenchmarkTreeNodes(b *testing.B) {
	const n = 10_000
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	sums := make(map[string]Summary, n)
	for i := range n {
		id, parent := fmt.Sprintf("span-%05d", i), ""
		if i > 0 {
			parent = fmt.Sprintf("span-%05d", (i-1)/10)
		}
		start := at.Add(time.Duration((i*7919)%n) * time.Millisecond)
		end, cost := start.Add(time.Second), 0.001
		sums[id] = Summary{SpanID: id, ParentSpanID: parent, Name: "step", StartedAt: start, EndedAt: &end, Cost: &cost}
	}
	b.ReportAllocs()
	for b.Loop() {
		if nodes := treeNodes(sums); len(nodes) != n {
			b.Fatalf("%d nodes", len(nodes))
		}
	}
}
