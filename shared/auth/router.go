package auth

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/plumehq/plume/shared/web"
)

// projectWildcard is the path wildcard that makes a route project-scoped.
const projectWildcard = "{project_id}"

// Router is the router of every HTTP area: a ServeMux whose routes are authenticated, answer 403
// to a key whose role the route does not admit (its Access, declared at registration) and,
// when their pattern holds a {project_id} wildcard, answer 403 to a key of another project, all
// before their handler runs. Tenancy and roles are properties of the router rather than calls
// each handler must remember; the router remembers its routes so that a test can walk every
// one of them.
//
// A Router is an http.Handler with the standard middleware of web.Chain (request id, access
// log, panic recovery). Paths that match no route answer the JSON 404, after authentication
// when the router has an Authenticator, so that an unauthenticated caller learns nothing of
// the routes.
type Router struct {
	authn   *Authenticator
	mux     *http.ServeMux
	handler http.Handler
	routes  []Route
}

// Route is one registered ServeMux pattern.
type Route struct {
	Pattern string
	// Open routes take no API key: health, the public feedback-link pages, and routes whose
	// handler authenticates by itself to answer in its own protocol (OTLP).
	Open bool
	// Access is the roles the route admits; not checked on open routes.
	Access Access
}

// NewRouter returns an empty router whose routes authenticate with authn. With a nil authn the
// router takes only open routes.
func NewRouter(authn *Authenticator) *Router {
	rt := &Router{authn: authn, mux: http.NewServeMux()}
	var notFound http.Handler = http.HandlerFunc(web.NotFound)
	if authn != nil {
		notFound = authn.Middleware(notFound)
	}
	rt.mux.Handle("/", notFound)
	rt.handler = web.Chain(web.CleanPathsOnly(rt.mux, notFound))
	return rt
}

// Handle registers an authenticated route. The route admits member and admin keys, or the
// roles of access when given (AllowIngest: ingest keys too; AdminOnly: admin keys only); a key
// of another role gets 403 and h never runs. A pattern with a {project_id} wildcard is
// project-scoped: a key of another project gets 403 and h never runs. Every path wildcard is
// checked against its rule in the params table (400 or 404 before h runs); a wildcard the table
// does not know panics here, at startup.
func (rt *Router) Handle(pattern string, h http.Handler, access ...Access) {
	if rt.authn == nil {
		panic(fmt.Sprintf("auth: route %q needs an Authenticator", pattern))
	}
	a := accessOf(pattern, access)
	h = checkParams(pattern, wildcardsOf(pattern), web.Error, h)
	if isProjectScoped(pattern) {
		h = requireProject(h)
	}
	rt.mux.Handle(pattern, rt.authn.Middleware(requireRole(a, h)))
	rt.routes = append(rt.routes, Route{Pattern: pattern, Access: a})
}

// HandleFunc is Handle for a function.
func (rt *Router) HandleFunc(pattern string, h http.HandlerFunc, access ...Access) {
	rt.Handle(pattern, h, access...)
}

// HandleOpen registers a route that takes no API key. Project-scoped patterns cannot be open.
// Its path wildcards are checked as Handle checks them; a refused value is answered by fail
// when given (a route that answers in its own format), else by web.Error.
func (rt *Router) HandleOpen(pattern string, h http.Handler, fail ...ErrorWriter) {
	if isProjectScoped(pattern) {
		panic(fmt.Sprintf("auth: project-scoped route %q cannot be open", pattern))
	}
	write := ErrorWriter(web.Error)
	if len(fail) > 0 {
		write = fail[0]
	}
	rt.mux.Handle(pattern, checkParams(pattern, wildcardsOf(pattern), write, h))
	rt.routes = append(rt.routes, Route{Pattern: pattern, Open: true})
}

// Routes returns the registered routes, in the order they were registered.
func (rt *Router) Routes() []Route { return append([]Route(nil), rt.routes...) }

// ServeHTTP serves r through the standard middleware and the matching route.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) { rt.handler.ServeHTTP(w, r) }

// isProjectScoped reports whether a ServeMux pattern has a {project_id} path wildcard.
func isProjectScoped(pattern string) bool { return strings.Contains(pattern, projectWildcard) }

// KeyProject is the path segment that names the caller's own project in place of its id: the
// zeroeval Python SDK's log_completion posts to /projects/{project_id}/prompts/{slug}/completions
// with the placeholder left in (COMPAT.md), and a key has exactly one project.
const KeyProject = projectWildcard

// requireProject answers 403 when the {project_id} of the path is not the caller's project
// (KeyProject is). It runs behind the Authenticator's Middleware, so the caller is known.
func requireProject(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("project_id") == KeyProject {
			next.ServeHTTP(w, r)
			return
		}
		if _, err := RequireProject(r.Context(), r.PathValue("project_id")); err != nil {
			web.Error(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// MayRead reports whether the request's caller may read what its project stores: its role
// admits the routes of Members. A write route answers a caller that may not (an ingest key)
// with what its request sent, never with what was stored before it.
func MayRead(r *http.Request) bool {
	p, _ := FromContext(r.Context())
	return Members.Allows(p.Role)
}

// ProjectID returns the project of the request's caller. Every authenticated route has one;
// on a project-scoped route it equals the path's {project_id}.
func ProjectID(r *http.Request) string {
	p, _ := FromContext(r.Context())
	return p.ProjectID
}
