package signals

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
)

// Function is SignalsFunction of template.yaml.
var Function = app.Function{
	Name:   "SignalsFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		return NewHandler(e.Signals(), e.Authn()), nil
	},
}
