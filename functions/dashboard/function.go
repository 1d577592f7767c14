package dashboard

import (
	"net/http"

	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/functions/settings"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
)

// apiFunctions are the REST areas the pages call in-process (api.go). DashboardFunction's
// policy in template.yaml is the union of theirs and its sessions'; the optimization runs' area
// is added when the process has the runs' queue.
var apiFunctions = []app.Function{prompts.Function, tracing.QueryFunction, judges.Function, feedback.Function, settings.Function}

// Function is DashboardFunction of template.yaml.
var Function = app.Function{
	Name:   "DashboardFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		q, err := e.TraceQueries()
		if err != nil {
			return nil, err
		}
		fns := apiFunctions
		if _, err := e.OptimizationQueue(); err == nil {
			fns = append(fns[:len(fns):len(fns)], optimizer.Function)
		}
		api, err := app.Mount(e, fns)
		if err != nil {
			return nil, err
		}
		examples, err := e.OptimizationExamples()
		if err != nil {
			return nil, err
		}
		return NewHandler(Deps{
			Sessions: ddb.NewWebSessionStore(e.Table()), Authn: e.Authn(), Keys: ddb.NewAuthStore(e.Table()),
			KeyCacheTTL: e.Config.AuthCacheTTL, Queries: q, Reader: e.Traces(), Prompts: e.Prompts(), API: api, Now: e.Now,
			PromptFeedback: examples,
		}), nil
	},
}
