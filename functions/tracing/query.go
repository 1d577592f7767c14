package tracing

import (
	"net/http"
	"strconv"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
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
	p := newParams(r.URL.Query(), spanParams)
	p.setTagFilters(w.Header())
	q := trace.SpanQuery{
		Common:     p.common(spanLimits, trace.SpanSorts),
		ID:         p.uuid("id"),
		TraceID:    p.uuid("trace_id"),
		SessionID:  p.uuid("session_id"),
		Kind:       p.str("span_kind"),
		ErrorCodes: p.list("error_codes"),
	}
	switch v := p.str("parent_span_id"); v {
	case "":
	case "null":
		q.ParentSpanID = new(string)
	default:
		id := p.uuid("parent_span_id")
		q.ParentSpanID = &id
	}
	if p.err != nil {
		web.Error(w, r, p.err)
		return
	}
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
	p := newParams(r.URL.Query(), traceParams)
	p.setTagFilters(w.Header())
	q := trace.TraceQuery{
		Common:    p.common(otherLimits, trace.TraceSorts),
		ID:        p.uuid("id"),
		SessionID: p.uuid("session_id"),
		Status:    p.str("status"),
	}
	if p.err != nil {
		web.Error(w, r, p.err)
		return
	}
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
	p := newParams(r.URL.Query(), sessionParams)
	p.setTagFilters(w.Header())
	q := trace.SessionQuery{Common: p.common(otherLimits, trace.SessionSorts), ID: p.uuid("id")}
	if p.err != nil {
		web.Error(w, r, p.err)
		return
	}
	sessions, info, err := s.q.Sessions(r.Context(), auth.ProjectID(r), q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	scanHeaders(w, info)
	web.Page(w, r, toSessions(sessions), q.Offset, answerBytes)
}
