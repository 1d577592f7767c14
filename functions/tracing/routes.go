// Package tracing is the tracing HTTP area (spec §4.3-4.5): span, trace and session ingestion
// and queries. It is served by two Lambda functions so that each gets only the permissions it
// needs: ingest (functions/tracing/ingest) writes spans and never deletes; query
// (functions/tracing/query) only reads. plume-local mounts both.
package tracing

import (
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// IngestRoutes are the API Gateway route keys of TracingIngestFunction.
var IngestRoutes = []string{
	"POST /spans",
	"POST /traces",
	"POST /sessions",
}

// QueryRoutes are the API Gateway route keys of TracingQueryFunction.
var QueryRoutes = []string{
	"GET /spans",
	"GET /traces",
	"GET /sessions",
}

// route is one ServeMux pattern and its handler.
type route struct {
	pattern string
	handler http.HandlerFunc
}

// NewIngestHandler returns the writing half of the area.
func NewIngestHandler(svc *trace.Service, authn *auth.Authenticator) http.Handler {
	s := &ingestServer{svc: svc}
	return newHandler(authn, s.routes())
}

// NewQueryHandler returns the reading half of the area.
func NewQueryHandler(q *trace.Queries, authn *auth.Authenticator) http.Handler {
	s := &queryServer{q: q}
	return newHandler(authn, s.routes())
}

func newHandler(authn *auth.Authenticator, routes []route) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.HandleFunc(rt.pattern, rt.handler)
	}
	mux.HandleFunc("/", web.NotFound)
	return web.Chain(authn.Middleware(mux))
}

func (s *ingestServer) routes() []route {
	return []route{
		{"POST /spans", s.postSpans},
		{"POST /traces", s.postTraces},
		{"POST /sessions", s.postSessions},
	}
}

func (s *queryServer) routes() []route {
	return []route{
		{"GET /spans", s.getSpans},
		{"GET /traces", s.getTraces},
		{"GET /sessions", s.getSessions},
	}
}
