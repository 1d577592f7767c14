package web

import (
	"net/http"
	"path"
	"strings"
)

// Mount registers h on mux for every API Gateway HTTP API route key in routes ("ANY
// /v1/prompts/{proxy+}", "GET /healthz"), translated to ServeMux patterns ("/v1/prompts/{proxy...}").
// plume-local mounts each area on the same route keys that template.yaml gives API Gateway,
// so local and deployed routing agree. As API Gateway does, a path with one more slash at its
// end reaches the same route (the zeroeval TypeScript SDK posts to /signals/); the handler
// sees the path as sent.
func Mount(mux *http.ServeMux, routes []string, h http.Handler) {
	for _, r := range routes {
		p := Pattern(r)
		mux.Handle(p, h)
		if !strings.HasSuffix(p, "}") && !strings.HasSuffix(p, "/") {
			mux.Handle(p+"/{$}", h)
		}
	}
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
