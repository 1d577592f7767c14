package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// tracesFilter is the filter of the traces page, read from and written to its query string so
// that a filtered page is a shareable URL.
type tracesFilter struct {
	Name, Status string
	Offset       int
}

func (f tracesFilter) query(offset int) string {
	v := url.Values{}
	if f.Name != "" {
		v.Set("name", f.Name)
	}
	if f.Status != "" {
		v.Set("status", f.Status)
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	if len(v) == 0 {
		return "/ui/traces"
	}
	return "/ui/traces?" + v.Encode()
}

type tracesData struct {
	Filter         tracesFilter
	Statuses       []string
	Traces         []trace.Trace
	First, Last    int
	Prev, Next     string
	Truncated      bool
	FilterApplied  bool
	ClearFilterURL string
}

// traces serves GET /ui/traces: the project's traces newest first, 50 a page, filtered by
// name and status.
func (s *server) traces(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := tracesFilter{Name: strings.TrimSpace(q.Get("name")), Status: q.Get("status")}
	if len(f.Name) > maxNameFilter {
		s.fail(w, r, errs.Invalid("The name filter is longer than %d bytes.", maxNameFilter))
		return
	}
	statuses := []string{trace.StatusOK, trace.StatusError, trace.StatusUnset}
	if f.Status != "" && !slices.Contains(statuses, f.Status) {
		s.fail(w, r, errs.Invalid("Status must be one of ok, error or unset."))
		return
	}
	if o := q.Get("offset"); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil || n < 0 || n > 1_000_000 {
			s.fail(w, r, errs.Invalid("The page offset must be a whole number from 0 to 1000000."))
			return
		}
		f.Offset = n
	}
	tq := trace.TraceQuery{Common: trace.Common{Limit: tracesPerPage + 1, Offset: f.Offset}, Status: f.Status}
	if f.Name != "" {
		tq.Names = []string{f.Name}
	}
	ts, info, err := s.d.Queries.Traces(r.Context(), sessionOf(r).ProjectID, tq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := tracesData{Filter: f, Statuses: statuses, Truncated: info.Truncated, FilterApplied: f.Name != "" || f.Status != "",
		ClearFilterURL: "/ui/traces"}
	if len(ts) > tracesPerPage {
		ts = ts[:tracesPerPage]
		d.Next = f.query(f.Offset + tracesPerPage)
	}
	if f.Offset > 0 {
		d.Prev = f.query(max(f.Offset-tracesPerPage, 0))
	}
	d.Traces, d.First, d.Last = ts, f.Offset+1, f.Offset+len(ts)
	s.render(w, r, http.StatusOK, "traces", page{Title: "Traces", Nav: "traces", Data: d})
}
