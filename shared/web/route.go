package web

import (
	"net/http"

	"github.com/plumehq/plume/shared/errs"
)

func notFoundRoute(r *http.Request) error {
	return errs.NotFound("no route for %s %s", r.Method, r.URL.Path)
}
