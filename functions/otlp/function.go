package otlp

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
)

// Function is OTLPFunction of template.yaml, reached through its Function URL and the HTTP API.
var Function = app.Function{
	Name:   "OTLPFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		svc, err := e.TraceService()
		if err != nil {
			return nil, err
		}
		return NewHandler(svc, e.Authn()), nil
	},
}
