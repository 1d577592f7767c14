package trace

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// Tree is a page of a trace's span tree (Queries.Tree).
type Tree struct {
	Trace Trace
	// SpanCount is how many spans the trace lists (its member items), whose summaries may
	// still be on their way for the newest.
	SpanCount int
	// Whole: Nodes are a page of the whole trace's tree, depth first, with depths and subtree
	// totals over the whole trace. Otherwise (more than api.SpanTreeWholeMax spans) they are the
	// spans of the page in the order the trace received them, drawn as a tree of their own:
	// a span whose parent is on another page is a root of the page.
	Whole bool
	Nodes []TreeNode
	// Next is the offset of the next page, 0 when this page is the last.
	Next int
	// InputTokens and OutputTokens are the sums over the spans read: the whole trace's when
	// Whole, this page's otherwise.
	InputTokens, OutputTokens int64
}

// TreeNode is a span of a tree: its summary, depth, and the totals of its subtree (itself and
// every span under it).
type TreeNode struct {
	Summary
	Depth       int
	HasChildren bool
	Sub         Subtree
}

// Subtree are the totals of a span's subtree: its spans, its spans with an error, the sum of
// its known costs (Costed false when no span of it has one) and its llm spans' tokens.
type Subtree struct {
	Spans, Errors             int
	Cost                      float64
	Costed                    bool
	InputTokens, OutputTokens int64
}

// Tree answers GET /traces/{trace_id}/tree: limit spans of the trace's tree from offset. It
// reads the trace (not found: errs.CodeNotFound), its member items (one Query for up to some
// 60,000 span ids) and the summaries of at most api.SpanTreeWholeMax spans, or of the page's:
// reading a large trace's every summary would cost a batch read per 100 spans on every page.
func (q *Queries) Tree(ctx context.Context, projectID, traceID string, offset, limit int) (Tree, error) {
	ts, err := q.r.Traces(ctx, projectID, []string{traceID})
	if err != nil {
		return Tree{}, err
	}
	if len(ts) == 0 {
		return Tree{}, errs.NotFound("trace %s not found", traceID)
	}
	ids, err := q.r.TraceSpanIDs(ctx, projectID, traceID)
	if err != nil {
		return Tree{}, err
	}
	t := Tree{Trace: ts[0], SpanCount: len(ids), Whole: len(ids) <= api.SpanTreeWholeMax}
	if !t.Whole {
		ids = ids[min(offset, len(ids)):min(offset+limit, len(ids))]
	}
	sums, err := q.r.Summaries(ctx, projectID, ids)
	if err != nil {
		return Tree{}, err
	}
	nodes := treeNodes(sums)
	for _, n := range nodes {
		t.InputTokens, t.OutputTokens = t.InputTokens+n.InputTokens, t.OutputTokens+n.OutputTokens
	}
	t.Nodes = nodes
	if t.Whole {
		t.Nodes = nodes[min(offset, len(nodes)):min(offset+limit, len(nodes))]
		t.SpanCount = len(nodes)
	}
	if offset+limit < t.SpanCount {
		t.Next = offset + limit
	}
	return t, nil
}

// treeNodes orders spans depth first, children by start time, roots first (a span whose
// parent is not among them is a root), each with its depth and subtree. Every span appears
// once, even in a parent cycle, which a client can send. It works on indices into one slice of
// the summaries, sorted once by start, so that every child list is in start order as it is
// built and no summary is copied but into its node.
func treeNodes(sums map[string]Summary) []TreeNode {
	n := len(sums)
	if n == 0 {
		return nil
	}
	vals, spans := make([]Summary, 0, n), make([]*Summary, n)
	for _, s := range sums {
		vals = append(vals, s)
	}
	for i := range vals {
		spans[i] = &vals[i]
	}
	slices.SortFunc(spans, func(a, b *Summary) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), strings.Compare(a.SpanID, b.SpanID))
	})
	index := make(map[string]int32, n)
	for i, s := range spans {
		index[s.SpanID] = int32(i)
	}
	// Children as one array: kids[first[p]:first[p+1]] are p's, in start order.
	parent, first := make([]int32, n), make([]int32, n+1)
	for i, s := range spans {
		parent[i] = -1
		if p, ok := index[s.ParentSpanID]; ok && s.ParentSpanID != s.SpanID {
			parent[i] = p
			first[p+1]++
		}
	}
	for p := range n {
		first[p+1] += first[p]
	}
	kids, next := make([]int32, first[n]), slices.Clone(first[:n])
	for i, p := range parent {
		if p >= 0 {
			kids[next[p]] = int32(i)
			next[p]++
		}
	}
	nodes := make([]TreeNode, 0, n)
	seen := make([]bool, n)
	type item struct{ i, depth int32 }
	var stack []item
	walk := func(root int32) {
		stack = append(stack[:0], item{root, 0})
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[it.i] {
				continue
			}
			seen[it.i] = true
			own := kids[first[it.i]:first[it.i+1]]
			nodes = append(nodes, TreeNode{Summary: *spans[it.i], Depth: int(it.depth), HasChildren: len(own) > 0})
			for _, k := range slices.Backward(own) {
				stack = append(stack, item{k, it.depth + 1})
			}
		}
	}
	for i := range int32(n) {
		if parent[i] < 0 {
			walk(i)
		}
	}
	// Spans in a cycle of parents, reachable from no root: each unseen one, in start order,
	// is walked as a root.
	for i := range int32(n) {
		if !seen[i] {
			walk(i)
		}
	}
	rollUp(nodes)
	return nodes
}

// rollUp sums each node's subtree: nodes are in depth-first order, so a node's subtree is the
// nodes after it that are deeper, and walking backwards each node takes the totals its
// children left at the level below it.
func rollUp(nodes []TreeNode) {
	// By depth: the totals of nodes at that depth not yet taken by a parent.
	pending := make([]Subtree, 0, 16)
	for i := len(nodes) - 1; i >= 0; i-- {
		d := nodes[i].Depth
		for len(pending) < d+2 {
			pending = append(pending, Subtree{})
		}
		t := pending[d+1]
		pending[d+1] = Subtree{}
		t.Spans++
		if nodes[i].HasError {
			t.Errors++
		}
		if c := nodes[i].Cost; c != nil {
			t.Cost, t.Costed = t.Cost+*c, true
		}
		t.InputTokens, t.OutputTokens = t.InputTokens+nodes[i].InputTokens, t.OutputTokens+nodes[i].OutputTokens
		nodes[i].Sub = t
		p := &pending[d]
		p.Spans, p.Errors, p.Cost, p.Costed = p.Spans+t.Spans, p.Errors+t.Errors, p.Cost+t.Cost, p.Costed || t.Costed
		p.InputTokens, p.OutputTokens = p.InputTokens+t.InputTokens, p.OutputTokens+t.OutputTokens
	}
}
