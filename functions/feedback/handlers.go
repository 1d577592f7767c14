package feedback

import (
	"net/http"
	"slices"
	"strings"
	"time"

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
	web.OK(w, toUnified(u))
}

// createLink serves POST /feedback-links: a link for the key's project. Its URL carries the
// token, shown this once.
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
	web.OK(w, toLink(l, s.baseURL(r)+"/f/"+token, time.Now()))
}

// listLinks serves GET /feedback-links: the key's project's links, newest first, without URLs.
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
	web.OK(w, api.LinkList{Links: out, Count: len(out)})
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

// baseURL is where link pages are served: PublicURL, else the scheme and host of the request.
func (s *server) baseURL(r *http.Request) string {
	if s.d.PublicURL != "" {
		return strings.TrimRight(s.d.PublicURL, "/")
	}
	scheme := "https"
	if proto := r.Header.Get("X-Forwarded-Proto"); proto != "" {
		scheme = proto
	} else if r.TLS == nil && isLoopback(r.Host) {
		scheme = "http"
	}
	return scheme + "://" + r.Host
}

// isLoopback reports whether host (with an optional port) is a local address, served over
// plain HTTP by plume-local.
func isLoopback(host string) bool {
	h := host
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:i]
	}
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "[::1]"
}
