package tracing

import (
	"net/http"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// getTree serves GET /traces/{trace_id}/tree: a page of the trace's span tree (api.SpanTree),
// which the dashboard's trace page draws.
func (s *queryServer) getTree(w http.ResponseWriter, r *http.Request) {
	p := &params{q: r.URL.Query()}
	offset := p.int("offset", 0, 0, 1_000_000)
	limit := p.int("limit", api.SpanTreeDefaultLimit, 1, api.SpanTreeMaxLimit)
	if p.err != nil {
		web.Error(w, r, p.err)
		return
	}
	traceID := r.PathValue("trace_id")
	t, err := s.q.Tree(r.Context(), auth.ProjectID(r), traceID, offset, limit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, toSpanTree(traceID, offset, t))
}

// toSpanTree is the API form of a page of a tree.
func toSpanTree(traceID string, offset int, t trace.Tree) api.SpanTree {
	out := api.SpanTree{
		TraceID: traceID, SpanCount: t.SpanCount, Whole: t.Whole, Offset: offset,
		InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, Spans: make([]api.TreeSpan, len(t.Nodes)),
	}
	if t.Next > 0 {
		out.NextOffset = &t.Next
	}
	for i, n := range t.Nodes {
		sub := api.SubtreeTotals{Spans: n.Sub.Spans, Errors: n.Sub.Errors, InputTokens: n.Sub.InputTokens, OutputTokens: n.Sub.OutputTokens}
		if n.Sub.Costed {
			sub.Cost = &n.Sub.Cost
		}
		out.Spans[i] = api.TreeSpan{
			ID: n.SpanID, ParentSpanID: optional(n.ParentSpanID), Name: n.Name, NameCut: n.NameCut, Kind: n.Kind, Status: optional(n.Status),
			StartedAt: n.StartedAt, EndedAt: n.EndedAt, DurationMS: n.DurationMS, Cost: n.Cost,
			InputTokens: n.InputTokens, OutputTokens: n.OutputTokens, HasError: n.HasError, ErrorCode: optional(n.ErrorCode),
			Tags: n.Tags, Depth: n.Depth, HasChildren: n.HasChildren, Subtree: sub,
		}
	}
	return out
}

// optional is s, or nil when it is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
