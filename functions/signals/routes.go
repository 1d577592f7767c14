// Package signals is the signals and A/B tests HTTP area (issue 29): the business signals the
// zeroeval SDKs record on spans, traces, sessions and completions, the choices of ze.choose,
// and the per-variant report of each A/B test. The Lambda entry point is
// functions/signals/lambda; plume-local mounts the same handler.
//
// Applications (ingest keys included) send signals and choices; reading them back, and the
// reports, takes a key that may read the project.
package signals

import (
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/signal"
)

// Routes are the API Gateway HTTP API route keys of SignalsFunction. The TypeScript SDK posts
// one signal to /signals/: API Gateway routes it to "POST /signals" (a route key cannot end
// with a slash) and the handler answers both paths.
var Routes = []string{
	"POST /signals",
	"POST /signals/bulk",
	"GET /signals/entity/{signal_entity_type}/{entity_id}",
	"POST /ab-choices",
	"GET /projects/{project_id}/ab-tests",
	"GET /projects/{project_id}/ab-tests/{test_name}",
}

// NewHandler returns the signals area.
func NewHandler(svc *signal.Service, authn *auth.Authenticator) http.Handler {
	s := &server{svc: svc}
	r := auth.NewRouter(authn)
	r.HandleFunc("POST /signals", s.postOne, auth.AllowIngest)
	r.HandleFunc("POST /signals/{$}", s.postOne, auth.AllowIngest)
	r.HandleFunc("POST /signals/bulk", s.postBulk, auth.AllowIngest)
	r.HandleFunc("GET /signals/entity/{signal_entity_type}/{entity_id}", s.entity)
	r.HandleFunc("POST /ab-choices", s.choose, auth.AllowIngest)
	r.HandleFunc("GET /projects/{project_id}/ab-tests", s.tests)
	r.HandleFunc("GET /projects/{project_id}/ab-tests/{test_name}", s.report)
	return r
}
