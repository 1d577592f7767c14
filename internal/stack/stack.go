// Package stack lists every Lambda function of template.yaml: the HTTP ones as app.Functions,
// what plume-local serves, what the end-to-end tests mount, and what the tests walk to prove
// that every route of every area is authenticated and tenant-scoped; the others (scheduled
// jobs) as app.Workers, whose real bootstraps the tests start. Adding a function means adding
// it here; infra's tests then require its template resource, routes, policy and Makefile target.
package stack

import (
	"net/http"

	"github.com/plumehq/plume/functions/evaluator"
	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/functions/otlp"
	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/functions/settings"
	"github.com/plumehq/plume/functions/sweeper"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/internal/app"
)

// Functions are every HTTP function of the stack, in template.yaml's order.
var Functions = []app.Function{
	prompts.Function,
	tracing.IngestFunction,
	tracing.QueryFunction,
	otlp.Function,
	settings.Function,
	judges.Function,
	feedback.Function,
	optimizer.Function,
}

// Workers are every function of the stack that serves no HTTP route, in template.yaml's order.
var Workers = []app.Worker{
	sweeper.Function,
	evaluator.Function,
	optimizer.WorkerFunction,
}

// Handler is the whole API on one handler, every function mounted on its route keys.
func Handler(env *app.Env) (http.Handler, error) { return app.Mount(env, Functions) }
