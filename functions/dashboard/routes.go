// Package dashboard is Plume's dashboard: server-rendered pages under /ui/ for people, signed
// in with an API key. It is its own Lambda function (DashboardFunction) so that it gets only
// the permissions it needs: the trace and prompt reads of the API and its session items.
//
// Pages are html/template files (every value from user data escaped by context), compiled at
// build time and executed by package view without text/template (pages_gen.go), styled and scripted
// only by the embedded assets under /ui/assets/ (hashed names, cached for a year), under a
// Content-Security-Policy that allows no inline script or style and no other origin but the
// bucket's, for the images of span attachments (Deps.ImageOrigin). Every page
// works without the script; it adds lazy loading of span details and collapsing of the tree.
//
// Sign-in: POST /ui/login checks the key with the API's Authenticator and starts a server-side
// session (session.go). The dashboard's routes are registered on an auth.Router as open routes
// (they take no Authorization header); sessions are required by one wrapper around the
// signed-in pages, never by each handler.
package dashboard

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/auth"
)

// Routes are the API Gateway HTTP API route keys of DashboardFunction: everything under /ui.
var Routes = []string{
	"ANY /ui",
	"ANY /ui/{proxy+}",
}

// SessionStore keeps the dashboard's sessions, by the SHA-256 of their id.
type SessionStore interface {
	// CreateWebSession stores a new session; an existing one of the same hash is a conflict.
	CreateWebSession(ctx context.Context, idHash string, s auth.WebSession) error
	// WebSession returns the session, or an errs.CodeNotFound error when there is none or it
	// has expired at now.
	WebSession(ctx context.Context, idHash string, now time.Time) (auth.WebSession, error)
	// DeleteWebSession deletes the session; a gone one is not an error.
	DeleteWebSession(ctx context.Context, idHash string) error
}

// Deps are what the dashboard is built from.
type Deps struct {
	Sessions SessionStore
	// Authn checks the key of a sign-in, as the API checks a bearer key, and the key of a
	// session on every request (from its cache), so that a revoked or expired key ends its
	// sessions: the API areas of API share it, so a revocation made here is seen at once.
	Authn *auth.Authenticator
	// API is the REST API's areas mounted in this process (app.Mount), which every page calls
	// through the Go client on behalf of the session (api.go).
	API http.Handler
	// ImageOrigin is the origin (scheme://host[:port]) of the bucket's presigned attachment
	// URLs (AttachmentOrigin): every page's Content-Security-Policy allows images from it, and
	// a span's image attachments whose URL has it are shown inline, any other as a link. ""
	// (no bucket) allows images from the dashboard only and shows every attachment as a link.
	ImageOrigin string
	// ImageOriginOf, when ImageOrigin is "", is asked for it by the first page that needs it
	// rather than at the function's start (AttachmentOrigin presigns a URL: about 0.5 ms of
	// CPU, which every cold start would pay); after an error, pages allow images from the
	// dashboard only until a later page asks again.
	ImageOriginOf func() (string, error)
	// PublicURL is the deployment's public base URL (PLUME_PUBLIC_URL, "" when unset), shown in
	// the setup snippets of an empty project.
	PublicURL string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// NewHandler returns the dashboard. Its routes are open on the auth.Router: the signed-in pages
// are behind one session check (server.signedIn), the sign-in page and assets are not.
func NewHandler(d Deps) *auth.Router {
	if d.Now == nil {
		d.Now = time.Now
	}
	s := newServer(d)
	// The pages' ServeMux is made on the first signed-in request, not at start: registering
	// their seventy patterns (each checked against the others) was about 0.7 ms of every
	// DashboardFunction init, which the sign-in page and the assets do not need.
	routed := sync.OnceValue(s.pages)
	pages := s.recovered(s.signedIn(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { routed().ServeHTTP(w, r) })))
	r := auth.NewRouter(d.Authn)
	r.HandleOpen("GET /ui/assets/", http.HandlerFunc(serveAsset))
	r.HandleOpen("GET /ui/login", s.recovered(http.HandlerFunc(s.loginPage)))
	r.HandleOpen("POST /ui/login", s.recovered(http.HandlerFunc(s.login)))
	r.HandleOpen("GET /ui", pages)
	r.HandleOpen("GET /ui/", pages)
	r.HandleOpen("POST /ui/", pages)
	return r
}

// pages are the signed-in pages. Their path wildcards are not in auth's params table (the
// Router's rules are for API routes); each handler checks its ids with validID before a read.
func (s *server) pages() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /ui/{$}", s.overview)
	mux.HandleFunc("GET /ui/traces", s.traces)
	mux.HandleFunc("GET /ui/traces/{trace_id}", s.trace)
	mux.HandleFunc("GET /ui/traces/{trace_id}/spans/{span_id}", s.span)
	mux.HandleFunc("GET /ui/prompts", s.prompts)
	mux.HandleFunc("GET /ui/prompts/{slug}", s.prompt)
	mux.HandleFunc("POST /ui/logout", s.logout)
	// The areas whose pages register themselves, each in its own file.
	for _, area := range []func(*http.ServeMux){s.sessionRoutes, s.spanRoutes, s.spanFeedbackRoutes, s.promptWriteRoutes, s.judgeRoutes, s.optimizeRoutes, s.settingsRoutes, s.gatewayRoutes, s.datasetRoutes, s.abTestRoutes, s.monitorRoutes, s.webhookRoutes, s.eventRoutes} {
		area(mux)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, errNotFound)
	})
	return mux
}
