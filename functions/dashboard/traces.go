package dashboard

import (
	"net/http"

	"github.com/plumehq/plume/shared/trace"
)

// tracesPage is the traces page's filter: the list filter (filter.go) with the traces' status
// and their sorts (keys of api.TraceList.Sorts).
var tracesPage = filterPage{
	Path: "/ui/traces", Noun: "traces", One: "trace",
	Own: choice{Key: "status", Label: "Status", Options: []option{
		{Value: "", Label: "Any"},
		{Value: trace.StatusOK, Label: trace.StatusOK},
		{Value: trace.StatusError, Label: trace.StatusError},
		{Value: trace.StatusUnset, Label: trace.StatusUnset},
	}},
	Sorts: []listSort{
		{Key: "newest", Label: "Newest first"},
		{Key: "oldest", Label: "Oldest first", ascending: true},
		{Key: "duration", Label: "Longest first", by: "duration_ms"},
		{Key: "cost", Label: "Most expensive first", by: "cost"},
		{Key: "spans", Label: "Most spans first", by: "span_count"},
		{Key: "name", Label: "Name A to Z", by: "name", ascending: true},
	},
}

type tracesData struct {
	Filter listFilter
	Traces []trace.Trace
	pager
	Truncated bool
}

// traces serves GET /ui/traces: the project's traces, 50 a page, filtered by name, status,
// tags, creation time, duration and cost and sorted as chosen, through the query GET /traces
// answers (one index walk of at most trace.MaxAggregateScan traces), paged by its cursors.
func (s *server) traces(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(tracesPage, r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ts, info, err := s.d.Queries.Traces(r.Context(), sessionOf(r).ProjectID,
		trace.TraceQuery{Status: f.Own.Value, Common: f.common(tracesPerPage)})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := tracesData{Filter: f, Traces: ts, Truncated: info.Truncated,
		pager: f.At.paging(len(ts), info.Next, f.link)}
	s.render(w, r, http.StatusOK, "traces", page{Title: "Traces", Nav: "traces", Data: d})
}
