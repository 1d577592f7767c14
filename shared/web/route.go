package web

import (
	"net/http"
	"path"
	"strings"
)

// Mount registers h on mux for every API Gateway HTTP API route key in routes ("ANY
// /v1/prompts/{proxy+}", "GET /healthz"), at the patterns API Gateway routes to it (Patterns).
// plume-local mounts each area on the same route keys that template.yaml gives API Gateway,
// so local and deployed routing agree.
func Mount(mux *http.ServeMux, routes []string, h http.Handler) {
	for _, r := range routes {
		for _, p := range Patterns(r) {
			mux.Handle(p, h)
		}
	}
}

// Patterns are the ServeMux patterns of the requests API Gateway routes to a route key: its
// Pattern and, as API Gateway ignores one slash at the end of a path, the same path with one
// (the zeroeval TypeScript SDK posts to /signals/, routed to "POST /signals"); the handler
// sees the path as sent.
func Patterns(routeKey string) []string {
	p := Pattern(routeKey)
	if strings.HasSuffix(p, "}") || strings.HasSuffix(p, "/") {
		return []string{p}
	}
	return []string{p, p + "/{$}"}
}

// Pattern translates one API Gateway route key to a ServeMux pattern.
func Pattern(routeKey string) string {
	method, path, ok := strings.Cut(routeKey, " ")
	if !ok {
		method, path = "ANY", routeKey
	}
	path = strings.ReplaceAll(path, "+}", "...}")
	if method == "ANY" {
		return path
	}
	return method + " " + path
}

// CleanPathsOnly serves notFound for a path that is not clean ("/spans//attachments",
// "/a/./b"), where ServeMux would answer a redirect to the cleaned path: an empty id segment is
// a missing id, not another address of a resource.
func CleanPathsOnly(next, notFound http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p != "" && p != cleanPath(p) {
			notFound.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cleanPath is ServeMux's: path.Clean, keeping a trailing slash.
func cleanPath(p string) string {
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}
