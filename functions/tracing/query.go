package tracing

import (
	"context"
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
	q       *trace.Queries
	signals SignalReader
}

// scanHeaders tell the client how much a query examined and whether its scan bound cut it.
func scanHeaders(w http.ResponseWriter, info trace.QueryInfo) {
	w.Header().Set(api.ScannedHeader, strconv.Itoa(info.Scanned))
	if info.Truncated {
		w.Header().Set(api.ScanTruncatedHeader, "true")
	}
}

// getSpans serves GET /spans (spec §4.3), and GET /spans?session_id= (the spans of every trace
// of a session), which the spec does not have.
func (s *queryServer) getSpans(w http.ResponseWriter, r *http.Request) {
	answerList(w, r, api.SpanList, spanQuery, s.q.Spans, toSpans)
}

// getTraces serves GET /traces (spec §4.4).
func (s *queryServer) getTraces(w http.ResponseWriter, r *http.Request) {
	answerList(w, r, api.TraceList, traceQuery, s.q.Traces, toTraces)
}

// getSessions serves GET /sessions (spec §4.5).
func (s *queryServer) getSessions(w http.ResponseWriter, r *http.Request) {
	answerList(w, r, api.SessionList, sessionQuery, s.q.Sessions, toSessions)
}

// answerList answers a tracing list: the request's query read by read (the tag filters named
// in a header), run by run in the caller's project, and as much of the page as fits in
// answerBytes, in the API's form (toAPI), saying where the rest starts (web.Page).
func answerList[Q, T, A any](w http.ResponseWriter, r *http.Request, list api.List, read func(url.Values) (Q, int, error),
	run func(context.Context, string, Q) ([]T, trace.QueryInfo, error), toAPI func([]T) []A) {
	setTagFilters(w.Header(), list, r.URL.Query())
	q, offset, err := read(r.URL.Query())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	items, info, err := run(r.Context(), auth.ProjectID(r), q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	scanHeaders(w, info)
	web.Page(w, r, toAPI(items), web.Paging{Offset: offset, FromCursor: r.URL.Query().Has(api.ParamCursor), CursorAfter: info.CursorAfter, Next: info.Next}, answerBytes)
}

// spanQuery reads the query of GET /spans (api.ParseSpanQuery) as shared/trace's, with its
// offset.
func spanQuery(v url.Values) (trace.SpanQuery, int, error) {
	in, err := api.ParseSpanQuery(v)
	if err != nil {
		return trace.SpanQuery{}, 0, err
	}
	c, err := common(in.ListQuery)
	return trace.SpanQuery{Common: c, ID: in.ID, TraceID: in.TraceID, SessionID: in.SessionID, ParentSpanID: in.ParentSpanID,
		Kind: string(in.SpanKind), ErrorCodes: in.ErrorCodes}, c.Offset, err
}

// traceQuery reads the query of GET /traces, as spanQuery does.
func traceQuery(v url.Values) (trace.TraceQuery, int, error) {
	in, err := api.ParseTraceQuery(v)
	if err != nil {
		return trace.TraceQuery{}, 0, err
	}
	c, err := common(in.ListQuery)
	return trace.TraceQuery{Common: c, ID: in.ID, SessionID: in.SessionID, Status: in.Status}, c.Offset, err
}

// sessionQuery reads the query of GET /sessions, as spanQuery does.
func sessionQuery(v url.Values) (trace.SessionQuery, int, error) {
	in, err := api.ParseSessionQuery(v)
	if err != nil {
		return trace.SessionQuery{}, 0, err
	}
	c, err := common(in.ListQuery)
	return trace.SessionQuery{Common: c, ID: in.ID}, c.Offset, err
}

// common is the shared part of a list query as the query of shared/trace: its times parsed as
// span times are (api.QueryTime).
func common(in api.ListQuery) (trace.Common, error) {
	c := trace.Common{
		Names: in.Names, HasError: in.HasError, DurationMin: in.DurationMin, DurationMax: in.DurationMax,
		CostMin: in.CostMin, CostMax: in.CostMax, Tags: in.Tags, SortBy: in.SortBy, Ascending: in.SortOrder == api.SortAsc,
		Limit: in.Limit, Offset: in.Offset, Cursor: in.Cursor,
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
