package dashboard

import (
	"net/http"
	"net/url"

	"github.com/plumehq/plume/api"
)

// spanRoutes registers the spans page: GET /ui/spans.
func (s *server) spanRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/spans", s.spans)
}

// spansPerListPage is the spans page's page size (spansPerPage is a trace's tree).
const spansPerListPage = 50

// spansPage is the spans page's filter: the list filter (filter.go) with the span's kind, its
// errors as a further select, and the spans' sorts (keys of api.SpanList.Sorts). The kinds are
// those Plume knows (api.SpanKinds); a span of another kind is found by name or tag.
var spansPage = filterPage{
	Path: "/ui/spans", Noun: "spans", One: "span",
	Own: choice{Key: "kind", Label: "Kind", Options: kindOptions(api.SpanKinds)},
	More: []choice{{Key: "has_error", Label: "Errors", Options: []option{
		{Value: "", Label: "Any"},
		{Value: "true", Label: "With errors", Summary: "with errors"},
		{Value: "false", Label: "Without errors", Summary: "without errors"},
	}}},
	Sorts: []listSort{
		{Key: "newest", Label: "Newest first"},
		{Key: "oldest", Label: "Oldest first", ascending: true},
		{Key: "duration", Label: "Longest first", by: "duration_ms"},
		{Key: "cost", Label: "Most expensive first", by: "cost"},
		{Key: "name", Label: "Name A to Z", by: "name", ascending: true},
		{Key: "kind", Label: "Kind A to Z", by: "kind", ascending: true},
	},
}

// kindOptions are the options of the kind select: Any, then kinds.
func kindOptions(kinds []api.SpanKind) []option {
	out := []option{{Value: "", Label: "Any"}}
	for _, k := range kinds {
		out = append(out, option{Value: string(k), Label: string(k), Summary: "of kind " + string(k)})
	}
	return out
}

type spansData struct {
	Filter listFilter
	Spans  []spanListRow
	pager
	Truncated bool
}

// spanListRow is a row of the spans page: a span's summary and its links.
type spanListRow struct {
	api.SpanSummary
	URL, TraceURL, PromptURL string
	// TraceShort is the start of the trace's id, the trace link's text.
	TraceShort string
}

// spans serves GET /ui/spans: the project's spans across traces, 50 a page, filtered by name,
// kind, errors, span tags, creation time, duration and cost and sorted as chosen, through the
// query GET /spans answers, but as the spans' summaries (GET /spans/summaries with that
// query): the page reads no span body. It pages by the query's cursors. The tokens column is
// the summaries' (an llm span's input and output tokens; "–" for a span without usage, and for
// one stored before summaries carried them).
//
// Cost (TestSpansPageRequests): the session and its key (two GetItem); the span index's days
// (one GetItem); per day of the range with spans, newest first, one Query per index shard
// (four) per 200 entries; per 200 entries walked, one BatchGetItem per 100 trace writes they
// name (the spans of one POST are one write) and one per 100 summaries. The newest-first
// order stops once the page is full; the other orders and filters walk the whole range (30
// days unless "Received from" is set), up to trace.MaxSpanScan spans (the caption then says
// it shows the newest part). No S3 read, but for a hit that matched only on a cut name or cut
// tags (a summary keeps 160 bytes of name and 256 of tags), whose body is read to confirm it.
func (s *server) spans(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(spansPage, r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := f.query(spansPerListPage)
	if v := f.Choice("has_error"); v != "" {
		hasError := v == "true"
		q.HasError = &hasError
	}
	c, ctx := s.api(r)
	sums, info, err := c.SpanSummariesPage(ctx, api.SpanQuery{SpanKind: api.SpanKind(f.Own.Value), ListQuery: q})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := spansData{Filter: f, Truncated: info.Partial(), pager: f.At.paging(len(sums), info.NextCursor, f.link)}
	for _, sum := range sums {
		row := spanListRow{SpanSummary: sum, URL: spanURL(sum.TraceID, sum.ID),
			TraceURL: "/ui/traces/" + url.PathEscape(sum.TraceID), TraceShort: sum.TraceID}
		if len(row.TraceShort) > 8 {
			row.TraceShort = row.TraceShort[:8] + "…"
		}
		if sum.PromptSlug != "" {
			row.PromptURL = "/ui/prompts/" + url.PathEscape(sum.PromptSlug)
		}
		d.Spans = append(d.Spans, row)
	}
	s.render(w, r, http.StatusOK, "spans", page{Title: "Spans", Nav: "spans", Data: d})
}
