package mcpserver

import (
	"net/http"

	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/internal/app"
)

// apiFunctions are the areas whose routes the tools call in-process.
var apiFunctions = []app.Function{prompts.Function, tracing.QueryFunction, judges.Function, feedback.Function, optimizer.Function}

// Function is MCPFunction of template.yaml.
var Function = app.Function{
	Name:   "MCPFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		api, err := app.Mount(e, apiFunctions)
		if err != nil {
			return nil, err
		}
		_, queueErr := e.OptimizationQueue()
		return NewHandler(api, e.Authn(), Config{OptimizationsEnabled: queueErr == nil}), nil
	},
}
