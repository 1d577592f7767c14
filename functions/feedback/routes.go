// Package feedback is the feedback HTTP area (spec §4.2): completion feedback, unified feedback
// of spans, traces and sessions, feedback links, and the public pages those links open. The
// Lambda entry point is functions/feedback/lambda; plume-local mounts the same handler.
package feedback

import (
	"context"
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// Routes are the API Gateway HTTP API route keys of FeedbackFunction. The /f/ routes are the
// public feedback-link pages: they take no API key.
var Routes = []string{
	"POST /v1/prompts/{slug}/completions/{completion_id}/feedback",
	"GET /projects/{project_id}/feedback/{entity_type}/{entity_id}",
	"GET /projects/{project_id}/prompts/{slug}/completions",
	"POST /feedback-links",
	"GET /feedback-links",
	"DELETE /feedback-links/{link_id}",
	"GET /f/{token}",
	"POST /f/{token}",
}

// Completions finds the recent completions (llm spans) of a prompt and their full records.
type Completions interface {
	// Completions returns the newest llm spans linked to a prompt, at most limit.
	Completions(ctx context.Context, projectID, slug string, limit int) ([]trace.Summary, error)
}

// Deps are what the area is built from.
type Deps struct {
	Feedback *feedback.Service
	Reader   feedback.Reader
	Links    *feedback.Links
	// Completions and Blobs serve the pages: which spans to show, and their input and output.
	Completions Completions
	Blobs       trace.Blobs
	// CompletionPages serves the API's pages of a prompt's completions.
	CompletionPages CompletionPages
	// PublicURL is the base of feedback-link URLs ("https://feedback.example.com"); empty means
	// the API Gateway or Function URL domain of the request in Lambda, else a relative URL
	// (server.linkURL says why never the request's Host).
	PublicURL string
}

// NewHandler returns the feedback area: the API behind authentication, the pages without.
func NewHandler(d Deps, authn *auth.Authenticator) http.Handler {
	s := &server{d: d}
	pages := newPageServer(d)
	r := auth.NewRouter(authn)
	r.HandleFunc("POST /v1/prompts/{slug}/completions/{completion_id}/feedback", s.submit, auth.AllowIngest)
	r.HandleFunc("GET /projects/{project_id}/feedback/{entity_type}/{entity_id}", s.unified)
	r.HandleFunc("GET /projects/{project_id}/prompts/{slug}/completions", s.completions)
	r.HandleFunc("POST /feedback-links", s.createLink)
	r.HandleFunc("GET /feedback-links", s.listLinks)
	r.HandleFunc("DELETE /feedback-links/{link_id}", s.revokeLink)
	// The token is a secret: the logs show the route instead. A malformed token gets the page
	// of an unknown link, without a read.
	r.HandleOpen("GET /f/{token}", web.LogPathAs("/f/{token}", pages.recovered(pages.show)), pages.failOpening)
	r.HandleOpen("POST /f/{token}", web.LogPathAs("/f/{token}", pages.recovered(pages.submit)), pages.failOpening)
	return r
}
