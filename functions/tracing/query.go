package tracing

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// answerBytes is the byte budget of a list answer (web.Page): api.MaxAnswerBytes, smaller only
// in tests, to cut pages of small spans.
var answerBytes = api.MaxAnswerBytes

type queryServer struct {
	q *trace.Queries
}

// scanHeaders tell the client how much a query examined and whether its scan bound cut it.
func scanHeaders(w http.ResponseWriter, info trace.QueryInfo) {
	w.Header().Set(api.ScannedHeader, strconv.Itoa(info.Scanned))
	if info.Truncated {
		w.Header().Set(api.ScanTruncatedHeader, "true")
	}
}

// getSpans serves GET /spans (spec §4.3), and GET /spans?session_id= (the spans of every trace
// of a session), which the spec does not have. Like GET /traces and /sessions, it answers as
// much of the page as fits in answerBytes and says where the rest starts (web.Page).
func (s *queryServer) getSpans(w http.ResponseWriter, r *http.Request) {
	setTagFilters(w.Header(), api.SpanList, r.URL.Query())
	in, err := api.ParseSpanQuery(r.URL.Query())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	c, err := common(in.ListQuery)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	q := trace.SpanQuery{Common: c, ID: in.ID, TraceID: in.TraceID, SessionID: in.SessionID, ParentSpanID: in.ParentSpanID,
		Kind: string(in.SpanKind), ErrorCodes: in.ErrorCodes}
	spans, info, err := s.q.Spans(r.Context(), auth.ProjectID(r), q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	scanHeaders(w, info)
	web.Page(w, r, toSpans(spans), q.Offset, answerBytes)
}

// getTraces serves GET /traces (spec §4.4).
func (s *queryServer) getTraces(w http.ResponseWriter, r *http.Request) {
	setTagFilters(w.Header(), api.TraceList, r.URL.Query())
	in, err := api.ParseTraceQuery(r.URL.Query())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	c, err := common(in.ListQuery)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	q := trace.TraceQuery{Common: c, ID: in.ID, SessionID: in.SessionID, Status: in.Status}
	traces, info, err := s.q.Traces(r.Context(), auth.ProjectID(r), q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	scanHeaders(w, info)
	web.Page(w, r, toTraces(traces), q.Offset, answerBytes)
}

// getSessions serves GET /sessions (spec §4.5).
func (s *queryServer) getSessions(w http.ResponseWriter, r *http.Request) {
	setTagFilters(w.Header(), api.SessionList, r.URL.Query())
	in, err := api.ParseSessionQuery(r.URL.Query())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	c, err := common(in.ListQuery)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	q := trace.SessionQuery{Common: c, ID: in.ID}
	sessions, info, err := s.q.Sessions(r.Context(), auth.ProjectID(r), q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	scanHeaders(w, info)
	web.Page(w, r, toSessions(sessions), q.Offset, answerBytes)
}

// common is the shared part of a list query as the query of shared/trace: its times parsed as
// span times are (api.QueryTime).
func common(in api.ListQuery) (trace.Common, error) {
	c := trace.Common{
		Names: in.Names, HasError: in.HasError, DurationMin: in.DurationMin, DurationMax: in.DurationMax,
		CostMin: in.CostMin, CostMax: in.CostMax, Tags: in.Tags, SortBy: in.SortBy, Ascending: in.SortOrder == api.SortAsc,
		Limit: in.Limit, Offset: in.Offset,
	}
	var err error
	if c.CreatedBefore, err = queryTime(api.ParamCreatedBefore, in.CreatedBefore); err != nil {
		return c, err
	}
	c.CreatedAfter, err = queryTime(api.ParamCreatedAfter, in.CreatedAfter)
	return c, err
}

// queryTime is the time of parameter name, nil when not given.
func queryTime(name string, v api.QueryTime) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := trace.ParseTimeString(string(v))
	if err != nil {
		return nil, errs.Invalid("%s must be an ISO 8601 time, not %q", name, v)
	}
	return &t, nil
}

// setTagFilters sets api.TagFiltersHeader to the names of the parameters of q that list reads
// as tag filters, query-escaped (a name may hold a comma or bytes a header cannot),
// comma-separated; it sets nothing when there are none, nor when there are more than
// api.MaxTagFilters (the parse refuses them, and the error says how many: the header would
// only echo the query back).
func setTagFilters(h http.Header, list api.List, q url.Values) {
	names := api.TagFilters(list, q)
	if len(names) == 0 || len(names) > api.MaxTagFilters {
		return
	}
	for i, n := range names {
		names[i] = url.QueryEscape(n)
	}
	h.Set(api.TagFiltersHeader, strings.Join(names, ","))
}
