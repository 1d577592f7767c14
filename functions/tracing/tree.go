package tracing

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// getTree serves GET /traces/{trace_id}/tree: a page of the trace's span tree (api.SpanTree),
// which the dashboard's trace page draws.
func (s *queryServer) getTree(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, err := intParam(q, "offset", 0, 0, 1_000_000)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	limit, err := intParam(q, "limit", api.SpanTreeDefaultLimit, 1, api.SpanTreeMaxLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	t, err := s.q.Tree(r.Context(), auth.ProjectID(r), r.PathValue("trace_id"), offset, limit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, toSpanTree(offset, t))
}

// toSpanTree is the API form of a page of a tree.
func toSpanTree(offset int, t trace.Tree) api.SpanTree {
	out := api.SpanTree{
		Trace: toTraces([]trace.Trace{t.Trace})[0], SpanCount: t.SpanCount, Whole: t.Whole, Offset: offset,
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
		out.Spans[i] = api.TreeSpan{SpanSummary: toSummary(n.Summary), Depth: n.Depth, HasChildren: n.HasChildren, Subtree: sub}
	}
	return out
}

// getSummaries serves GET /spans/summaries. With ids: the summaries of up to
// api.MaxSummaryIDs spans of the project, in the order asked, unknown ids left out; the
// dashboard links evaluations and examples to their spans' traces with it. Without: the list
// GET /spans answers for the same query (its parameters, cursors and headers), as summaries,
// so that a page of spans reads no span body (the dashboard's spans page).
func (s *queryServer) getSummaries(w http.ResponseWriter, r *http.Request) {
	if !r.URL.Query().Has("ids") {
		answerList(w, r, api.SpanList, spanQuery, s.q.SpanSummaries, toSummaries)
		return
	}
	ids, err := spanIDs(r.URL.Query()["ids"])
	if err != nil {
		web.Error(w, r, err)
		return
	}
	sums, err := s.q.Summaries(r.Context(), auth.ProjectID(r), ids)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, toSummaries(sums))
}

// toSummaries is the API form of spans' summaries.
func toSummaries(sums []trace.Summary) []api.SpanSummary {
	out := make([]api.SpanSummary, len(sums))
	for i, sum := range sums {
		out[i] = toSummary(sum)
	}
	return out
}

// toSummary is the API form of a span's summary.
func toSummary(s trace.Summary) api.SpanSummary {
	return api.SpanSummary{
		ID: s.SpanID, TraceID: s.TraceID, ParentSpanID: optional(s.ParentSpanID), Name: s.Name, NameCut: s.NameCut, Kind: s.Kind,
		Status: optional(s.Status), StartedAt: s.StartedAt, EndedAt: s.EndedAt, DurationMS: s.DurationMS, Cost: s.Cost,
		InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, HasError: s.HasError, ErrorCode: optional(s.ErrorCode),
		Tags: s.Tags, PromptSlug: s.PromptSlug,
	}
}

// optional is s, or nil when it is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// intParam reads the integer query parameter name, def when absent, within [lo, hi].
func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	v := strings.TrimSpace(q.Get(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, errs.Invalid("%s must be an integer from %d to %d, not %q", name, lo, hi, v)
	}
	return n, nil
}

// spanIDs reads ?ids= (comma-separated, repeatable): at most api.MaxSummaryIDs UUIDs, in
// their canonical form.
func spanIDs(values []string) ([]string, error) {
	var ids []string
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				ids = append(ids, part)
			}
		}
	}
	if len(ids) > api.MaxSummaryIDs {
		return nil, errs.Invalid("ids takes at most %d span ids, not %d", api.MaxSummaryIDs, len(ids))
	}
	for i, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil {
			return nil, errs.Invalid("ids must be span ids (UUIDs), not %q", id)
		}
		ids[i] = u.String()
	}
	return ids, nil
}
