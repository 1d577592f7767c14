package prompts

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
)

// Function is PromptsFunction of template.yaml.
var Function = app.Function{
	Name:   "PromptsFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		return NewHandler(e.Prompts(), e.Authn()), nil
	},
}
