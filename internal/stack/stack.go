// Package stack lists every Lambda function of template.yaml: the HTTP ones as app.Functions,
// what plume-local serves and what the tests walk to prove that every route of every area is
// authenticated and tenant-scoped; the others (scheduled jobs) as app.Workers, whose real
// bootstraps the tests start. Adding a function means adding it here (a REST area in
// internal/stack/restapi); infra's tests then require its template resource, routes, policy and
// Makefile target.
package stack

import (
	"net/http"
	"slices"

	"github.com/plumehq/plume/functions/dashboard"
	"github.com/plumehq/plume/functions/evaluator"
	"github.com/plumehq/plume/functions/gateway"
	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/functions/monitors"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/functions/rollups"
	"github.com/plumehq/plume/functions/webhooks"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/internal/stack/restapi"
)

// Functions are every HTTP function of the stack, in template.yaml's order: the REST API's,
// then the MCP tool server, which calls the REST API, the model gateway and the dashboard.
var Functions = append(slices.Clone(restapi.Functions),
	mcpserver.Function,
	gateway.Function,
	dashboard.Function,
)

// Workers are every function of the stack that serves no HTTP route, in template.yaml's order.
var Workers = []app.Worker{
	evaluator.Function,
	optimizer.WorkerFunction,
	rollups.Function,
	webhooks.EventsFunction,
	webhooks.DeliveryFunction,
	monitors.EvaluateFunction,
}

// Handler is the whole stack on one handler, every function mounted on its route keys and
// served as deployed (app.MountDeployed: Lambda's limits apply).
func Handler(env *app.Env) (http.Handler, error) { return app.MountDeployed(env, Functions) }
