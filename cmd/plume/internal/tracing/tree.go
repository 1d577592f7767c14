package tracing

import (
	"strings"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// treeRow is a span as a row of a trace's tree: Tree is its name after marks that show its
// depth.
type treeRow struct {
	api.Span
	Tree string `json:"tree"`
}

// treeColumns are the columns of a trace's tree.
var treeColumns = []cmdutil.Column{
	{Header: "ID", Path: "id"}, {Header: "SPAN", Path: "tree"}, {Header: "KIND", Path: "kind"}, {Header: "STATUS", Path: "status"},
	{Header: "DURATION_MS", Path: "duration_ms"}, {Header: "COST", Path: "cost"}, {Header: "STARTED", Path: "started_at"},
	{Header: "ERROR", Path: "error_code"},
}

// tree orders spans depth first: each span is followed by its children, in the order they are
// listed. A span whose parent is not listed is a root.
func tree(spans []api.Span) []treeRow {
	listed := make(map[string]bool, len(spans))
	for _, s := range spans {
		listed[s.ID] = true
	}
	children := map[string][]int{}
	var roots []int
	for i, s := range spans {
		if p := s.ParentSpanID; p != nil && listed[*p] && *p != s.ID {
			children[*p] = append(children[*p], i)
		} else {
			roots = append(roots, i)
		}
	}
	out := make([]treeRow, 0, len(spans))
	seen := make([]bool, len(spans))
	var visit func(i, depth int)
	visit = func(i, depth int) {
		if seen[i] {
			return
		}
		seen[i] = true
		out = append(out, treeRow{Span: spans[i], Tree: indent(depth) + spans[i].Name})
		for _, c := range children[spans[i].ID] {
			visit(c, depth+1)
		}
	}
	for _, i := range roots {
		visit(i, 0)
	}
	for i := range spans { // spans whose parents form a cycle
		visit(i, 0)
	}
	return out
}

// indent marks a name at depth: table cells collapse spaces, so the marks are not blank.
func indent(depth int) string {
	if depth == 0 {
		return ""
	}
	return strings.Repeat("│ ", depth-1) + "└─ "
}
