package web

import (
	"net/http"
	"strings"
)

// Mount registers h on mux for every API Gateway HTTP API route key in routes ("ANY
// /v1/prompts/{proxy+}", "GET /healthz"), translated to ServeMux patterns ("/v1/prompts/{proxy...}").
// plume-local mounts each area on the same route keys that template.yaml gives API Gateway,
// so local and deployed routing agree.
func Mount(mux *http.ServeMux, routes []string, h http.Handler) {
	for _, r := range routes {
		mux.Handle(Pattern(r), h)
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
