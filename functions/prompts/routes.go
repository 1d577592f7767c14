// Package prompts is the prompt registry's HTTP area (spec §4.1): the handler that the prompts
// Lambda serves (functions/prompts/lambda) and that plume-local mounts.
//
// The Lambda entry point lives in the lambda subdirectory rather than beside this file because
// plume-local must import the handler, and a package main cannot be imported.
package prompts

import (
	"net/http"

	"github.com/plumehq/plume/api/openapi"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/web"
)

// Routes are the API Gateway HTTP API route keys this area serves. template.yaml declares the
// same keys for PromptsFunction (a test proves it) and plume-local mounts the area on them, so
// local and deployed routing cannot drift apart.
var Routes = []string{
	"GET /healthz",
	"GET /openapi.json",
	"ANY /v1/prompts/{proxy+}",
	"ANY /v1/tasks/{proxy+}",
	"ANY /v1/prompt-versions/{proxy+}",
	"ANY /projects/{project_id}/prompts",
	"ANY /projects/{project_id}/prompts/{proxy+}",
}

// NewHandler returns the prompts area: every route behind authentication, except the public
// GET /healthz, which the API's health check reaches through this function, and the API's
// OpenAPI document, GET /openapi.json.
func NewHandler(prompts *prompt.Service, authn *auth.Authenticator) http.Handler {
	s := &server{prompts: prompts}
	r := auth.NewRouter(authn)
	r.HandleOpen("GET /healthz", http.HandlerFunc(web.Health))
	r.HandleOpen("GET /openapi.json", openapi.Handler())
	for _, rt := range s.routes() {
		r.HandleFunc(rt.pattern, rt.handler, rt.access)
	}
	return r
}

// route is one ServeMux pattern and its handler.
type route struct {
	pattern string
	handler http.HandlerFunc
	access  auth.Access
}

// routes lists every endpoint of the area (spec §4.1 plus the project's prompt list).
func (s *server) routes() []route {
	return []route{
		// What SDKs call at run time (fetch, ensure, resolve): ingest keys may too.
		{"GET /v1/prompts/{slug}", s.getPrompt, auth.AllowIngest},
		{"POST /v1/tasks/{task}/prompt/versions/ensure", s.ensureVersion, auth.AllowIngest},
		{"GET /v1/tasks/{task}/prompt/versions/by-hash/{hash}", s.versionByHash, auth.AllowIngest},
		{"GET /v1/tasks/{task}/prompt/latest", s.latestVersion, auth.AllowIngest},
		{"GET /v1/prompt-versions/{version_id}/model", s.versionModel, auth.AllowIngest},
		// Browsing and managing the registry needs a member or admin key.
		{"GET /projects/{project_id}/prompts", s.listPrompts, auth.Members},
		{"GET /projects/{project_id}/prompts/{slug}/versions", s.listVersions, auth.Members},
		{"PATCH /projects/{project_id}/prompts/{slug}/versions/{version}", s.bindModel, auth.Members},
		{"GET /projects/{project_id}/prompts/{slug}/tags", s.listTags, auth.Members},
		// "{tag}:pin", "{tag}:split" and "{tag}:end-split" are one path segment, so the
		// wildcard takes it whole and tagAction splits it.
		{"POST /projects/{project_id}/prompts/{slug}/tags/{tag_action}", s.tagAction, auth.Members},
	}
}
