// Package tracing is the tracing HTTP area (spec §4.3-4.5): span, trace and session ingestion
// and queries. It is served by two Lambda functions so that each gets only the permissions it
// needs: ingest (functions/tracing/ingest) writes spans and never deletes; query
// (functions/tracing/query) only reads. plume-local mounts both.
package tracing

import (
	"net/http"
	"time"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/rollup"
	"github.com/plumehq/plume/shared/trace"
)

// IngestRoutes are the API Gateway route keys of TracingIngestFunction.
var IngestRoutes = []string{
	"POST /spans",
	"POST /traces",
	"POST /sessions",
	"POST /spans/{span_id}/attachments",
	"POST /projects/{project_id}/prompts/{slug}/completions",
}

// QueryRoutes are the API Gateway route keys of TracingQueryFunction.
var QueryRoutes = []string{
	"GET /spans",
	"GET /traces",
	"GET /sessions",
	"GET /spans/{span_id}/attachments",
	"GET /traces/{trace_id}/tree",
	"GET /spans/summaries",
	"GET /projects/{project_id}/metrics",
	"GET /spans/{span_id}",
	"GET /traces/{trace_id}",
	"GET /sessions/{session_id}",
}

// route is one ServeMux pattern and its handler.
type route struct {
	pattern string
	handler http.HandlerFunc
	access  auth.Access
}

// NewIngestHandler returns the writing half of the area; urls signs attachment uploads.
func NewIngestHandler(svc *trace.Service, authn *auth.Authenticator, urls AttachmentURLs) http.Handler {
	s := &ingestServer{svc: svc}
	return newHandler(authn, s.routes(&attachmentServer{svc: svc, urls: urls}))
}

// NewQueryHandler returns the reading half of the area; urls signs attachment downloads,
// rollups are the metrics' counters and now their clock, signals the entities' signals that the
// answers of one span, trace or session show.
func NewQueryHandler(q *trace.Queries, signals SignalReader, rollups rollup.Reader, now func() time.Time, authn *auth.Authenticator, urls AttachmentURLs) http.Handler {
	s := &queryServer{q: q, signals: signals}
	m := &metricsServer{rollups: rollups, now: now}
	return newHandler(authn, append(s.routes(&attachmentServer{q: q, urls: urls}),
		route{"GET /projects/{project_id}/metrics", m.getMetrics, auth.Members}))
}

func newHandler(authn *auth.Authenticator, routes []route) http.Handler {
	r := auth.NewRouter(authn)
	for _, rt := range routes {
		r.HandleFunc(rt.pattern, rt.handler, rt.access)
	}
	return r
}

func (s *ingestServer) routes(a *attachmentServer) []route {
	return []route{
		// Applications write their traces: ingest keys may too.
		{"POST /spans", s.postSpans, auth.AllowIngest},
		{"POST /traces", s.postTraces, auth.AllowIngest},
		{"POST /sessions", s.postSessions, auth.AllowIngest},
		{"POST /spans/{span_id}/attachments", a.postAttachment, auth.AllowIngest},
		// zeroeval's log_completion: an application's completion becomes an llm span.
		{"POST /projects/{project_id}/prompts/{slug}/completions", s.logCompletion, auth.AllowIngest},
	}
}

func (s *queryServer) routes(a *attachmentServer) []route {
	return []route{
		// Reading traces needs a member or admin key.
		{"GET /spans", s.getSpans, auth.Members},
		{"GET /traces", s.getTraces, auth.Members},
		{"GET /sessions", s.getSessions, auth.Members},
		{"GET /spans/{span_id}/attachments", a.getAttachments, auth.Members},
		{"GET /traces/{trace_id}/tree", s.getTree, auth.Members},
		{"GET /spans/summaries", s.getSummaries, auth.Members},
		{"GET /spans/{span_id}", s.getSpan, auth.Members},
		{"GET /traces/{trace_id}", s.getTrace, auth.Members},
		{"GET /sessions/{session_id}", s.getSession, auth.Members},
	}
}
