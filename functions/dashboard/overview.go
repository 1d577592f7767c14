package dashboard

import (
	"net/http"
	"time"

	"github.com/plumehq/plume/shared/trace"
)

type overviewData struct {
	Since              time.Time
	Traces, Spans      int
	Errors             int
	Cost               float64
	Truncated          bool
	Recent             []trace.Trace
	TracesURL, ErrsURL string
}

// overview serves GET /ui/: the last 24 hours of the project's traces, counted from the same
// query GET /traces answers.
func (s *server) overview(w http.ResponseWriter, r *http.Request) {
	sess := sessionOf(r)
	since := s.d.Now().Add(-24 * time.Hour)
	ts, info, err := s.d.Queries.Traces(r.Context(), sess.ProjectID, trace.TraceQuery{
		Common: trace.Common{CreatedAfter: &since, Limit: trace.MaxAggregateScan},
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := overviewData{Since: since, Traces: len(ts), Truncated: info.Truncated}
	for _, t := range ts {
		d.Spans += t.SpanCount
		d.Cost += t.Cost
		if t.ErrorCount > 0 {
			d.Errors++
		}
	}
	d.Recent = ts[:min(len(ts), 10)]
	s.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", Data: d})
}
