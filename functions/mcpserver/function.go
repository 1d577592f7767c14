package mcpserver

import (
	"context"
	"net/http"

	"github.com/plumehq/plume/functions/datasets"
	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/functions/monitors"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/functions/signals"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/functions/webhooks"
	"github.com/plumehq/plume/internal/app"
)

// apiFunctions are the areas whose routes the tools call in-process. MCPFunction's policy in
// template.yaml is the union of theirs; the optimization runs' area is added when the process
// has the runs' queue (optimizationFunctions). Of the datasets, webhooks and monitors areas the
// tools call the reads, and the monitors' create; no tool deletes.
var apiFunctions = []app.Function{prompts.Function, tracing.QueryFunction, judges.Function, feedback.Function, signals.Function,
	app.Only(datasets.Function, http.MethodGet), app.Only(webhooks.Function, http.MethodGet),
	app.Only(monitors.Function, http.MethodGet, http.MethodPost)}

// optimizationFunctions are the areas mounted when optimization runs can be queued.
var optimizationFunctions = []app.Function{optimizer.Function}

// Function is MCPFunction of template.yaml: the tool server with the REST areas its tools call,
// mounted in the same process.
var Function = app.Function{
	Name:   "MCPFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		fns := apiFunctions
		_, queueErr := e.OptimizationQueue()
		if queueErr == nil {
			fns = append(fns[:len(fns):len(fns)], optimizationFunctions...)
		}
		api, err := app.Mount(e, fns)
		if err != nil {
			return nil, err
		}
		return NewHandler(api, e.Authn(), Config{
			BaseURL:              e.Config.PublicURL,
			ModelsConfigured:     modelsConfigured(e),
			OptimizationsEnabled: queueErr == nil,
		}), nil
	},
}

// modelsConfigured tells whether the workers that call models (the judge runner, the optimizer)
// have a provider: the deployment names a provider secret (PLUME_PROVIDER_SECRET; only its
// name is read here, never the secret, which this function may not read), or the default judge
// model's provider has its key, base URL or AWS credentials in this process's configuration
// (plume-local's real or fake providers; Bedrock with the function's role). No model is called.
func modelsConfigured(e *app.Env) bool {
	if e.Config.ProviderSecret != "" {
		return true
	}
	models, err := e.Models(context.Background())
	return err == nil && models.Configured(models.JudgeModel())
}
