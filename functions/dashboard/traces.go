package dashboard

import (
	"net/http"

	"github.com/plumehq/plume/api"
)

// tracesPage is the traces page's filter: the list filter (filter.go) with the traces' status
// and their sorts (keys of api.TraceList.Sorts).
var tracesPage = filterPage{
	Path: "/ui/traces", Noun: "traces", One: "trace",
	Own: choice{Key: "status", Label: "Status", Options: []option{
		{Value: "", Label: "Any"},
		{Value: api.StatusOK, Label: api.StatusOK},
		{Value: api.StatusError, Label: api.StatusError},
		{Value: api.StatusUnset, Label: api.StatusUnset},
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
	Traces []api.Trace
	pager
	Truncated bool
}

// traces serves GET /ui/traces: the project's traces, 50 a page, filtered by name, status,
// tags, creation time, duration and cost and sorted as chosen, through the query GET /traces
// answers (GET /traces through the client), paged by its cursors.
func (s *server) traces(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(tracesPage, r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	ts, info, err := c.TracesPage(ctx, api.TraceQuery{Status: f.Own.Value, ListQuery: f.query(tracesPerPage)})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := tracesData{Filter: f, Traces: ts, Truncated: info.Partial(),
		pager: f.At.paging(len(ts), info.NextCursor, f.link)}
	s.render(w, r, http.StatusOK, "traces", page{Title: "Traces", Nav: "traces", Data: d})
}
