// Package judges is the judges HTTP area (spec §4.7 and the judge REST shape Plume defines):
// judge definitions, their links to prompts, evaluations recorded by evaluators, every read of
// evaluations and criteria, and a judge's agreement with the people who calibrated it. The
// Lambda entry point is functions/judges/lambda.
package judges

import (
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/judge"
)

// Routes are the API Gateway HTTP API route keys of JudgesFunction.
var Routes = []string{
	"ANY /projects/{project_id}/judges",
	"ANY /projects/{project_id}/judges/{proxy+}",
	"GET /projects/{project_id}/spans/{span_id}/evaluations",
	"PUT /projects/{project_id}/prompts/{slug}/judges/{judge_id}",
	"DELETE /projects/{project_id}/prompts/{slug}/judges/{judge_id}",
}

// NewHandler returns the judges area, every route behind authentication.
func NewHandler(svc *judge.Service, store judge.Store, authn *auth.Authenticator) http.Handler {
	s := &server{svc: svc, store: store}
	mux := auth.NewRouter(authn)
	mux.HandleFunc("POST /projects/{project_id}/judges", s.create)
	mux.HandleFunc("GET /projects/{project_id}/judges", s.list)
	mux.HandleFunc("GET /projects/{project_id}/judges/{judge_id}", s.get)
	mux.HandleFunc("PATCH /projects/{project_id}/judges/{judge_id}", s.patch)
	mux.HandleFunc("GET /projects/{project_id}/judges/{judge_id}/criteria", s.criteria)
	mux.HandleFunc("GET /projects/{project_id}/judges/{judge_id}/evaluations", s.evaluations)
	mux.HandleFunc("POST /projects/{project_id}/judges/{judge_id}/evaluations", s.record)
	mux.HandleFunc("GET /projects/{project_id}/judges/{judge_id}/performance", s.performance)
	mux.HandleFunc("POST /projects/{project_id}/judges/{judge_id}/backfill", s.backfill)
	mux.HandleFunc("GET /projects/{project_id}/judges/{judge_id}/versions", s.versions)
	mux.HandleFunc("GET /projects/{project_id}/spans/{span_id}/evaluations", s.spanEvaluations)
	mux.HandleFunc("PUT /projects/{project_id}/prompts/{slug}/judges/{judge_id}", s.link)
	mux.HandleFunc("DELETE /projects/{project_id}/prompts/{slug}/judges/{judge_id}", s.unlink)
	return mux
}
