package feedback

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/web"
)

// maxFeedbackBody caps a feedback submission: the largest fields (expected_output 64 KB, reason
// and metadata 16 KB each, criteria) with room for JSON escaping.
const maxFeedbackBody = 512 << 10

type server struct{ d Deps }

// submit serves POST /v1/prompts/{slug}/completions/{completion_id}/feedback: the caller's
// feedback on a completion, replacing their earlier one (spec §4.2).
func (s *server) submit(w http.ResponseWriter, r *http.Request) {
	p, _ := auth.FromContext(r.Context())
	var req api.FeedbackRequest
	if err := web.Decode(w, r, &req, maxFeedbackBody); err != nil {
		web.Error(w, r, err)
		return
	}
	f, err := s.d.Feedback.Submit(r.Context(), p.ProjectID, r.PathValue("slug"), r.PathValue("completion_id"), p.User, "", toInput(req))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if !auth.MayRead(r) {
		// What the completion's span says (its trace, its version) is not an ingest key's to read.
		f.TraceID, f.PromptVersionID = "", ""
	}
	web.OK(w, toFeedback(f))
}

// unified serves GET /projects/{project_id}/feedback/{entity_type}/{entity_id} (spec §2.5).
func (s *server) unified(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	u, err := feedback.ReadUnified(r.Context(), s.d.Reader, pid, r.PathValue("entity_type"), r.PathValue("entity_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	// A trace of 10,000 long evaluations is far past Lambda's 6 MB: the answer holds the items
	// that fit from ?offset= and says where the rest starts; the summary counts them all.
	whole := toUnified(u)
	web.List(w, r, whole.Items, func(items []api.FeedbackItem) any {
		page := whole
		page.Items = items
		return page
	})
}

// createLink serves POST /feedback-links: a link for the key's project. Its URL (linkURL)
// carries the token, shown this once.
func (s *server) createLink(w http.ResponseWriter, r *http.Request) {
	p, _ := auth.FromContext(r.Context())
	var req api.LinkRequest
	if err := web.Decode(w, r, &req, web.DefaultBodyLimit); err != nil {
		web.Error(w, r, err)
		return
	}
	l, token, err := s.d.Links.Create(r.Context(), p.ProjectID, p.User, toLinkInput(req))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toLink(l, s.linkURL(r, token), time.Now()))
}

// listLinks serves GET /feedback-links: the key's project's links, newest first, without URLs,
// as many as fit one answer from ?offset= (web.List).
func (s *server) listLinks(w http.ResponseWriter, r *http.Request) {
	p, _ := auth.FromContext(r.Context())
	links, err := s.d.Links.List(r.Context(), p.ProjectID)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	slices.SortFunc(links, func(a, b feedback.Link) int { return b.CreatedAt.Compare(a.CreatedAt) })
	now := time.Now()
	out := make([]api.Link, len(links))
	for i, l := range links {
		out[i] = toLink(l, "", now)
	}
	web.List(w, r, out, func(out []api.Link) any { return api.LinkList{Links: out, Count: len(out)} })
}

// revokeLink serves DELETE /feedback-links/{link_id}: the link stops working at once (its pages
// say it was revoked); the feedback given through it stays.
func (s *server) revokeLink(w http.ResponseWriter, r *http.Request) {
	p, _ := auth.FromContext(r.Context())
	l, err := s.d.Links.Revoke(r.Context(), p.ProjectID, r.PathValue("link_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toLink(l, "", time.Now()))
}

// linkURL is the URL of the page of the link whose token is token.
//
// Its base is never taken from the request's Host or X-Forwarded-* headers: whoever holds a
// key can set those, and a link pointing at a host of theirs would send the reviewers it is
// shared with, and its token, there. The base is PublicURL (PLUME_PUBLIC_URL) when set; else,
// in Lambda, the domain API Gateway or the Function URL received the request on, which the
// adapter takes from the event's request context (requestContext.domainName, one of the
// API's own domains; never a header) and which is always HTTPS; else there is no trusted
// base and the URL is the path /f/<token>, relative to wherever the API is served.
// plume-local sets PublicURL to its own address; a deployment behind a CDN or a proxy, whose
// public address the function cannot see, must set PLUME_PUBLIC_URL.
func (s *server) linkURL(r *http.Request, token string) string {
	base := s.d.PublicURL
	if base == "" {
		if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.DomainName != "" {
			base = "https://" + rc.DomainName
		}
	}
	return strings.TrimRight(base, "/") + "/f/" + token
}
