// Package restapi lists the HTTP functions of Plume's REST API, in template.yaml's order: what
// internal/apitest mounts as "the whole API" for the tests of every area and of the clients
// built on it. Package stack adds what is built on top of the REST API (the MCP tool server,
// whose tools call it through client/) and the workers.
//
// The split keeps the layers acyclic: client's own tests run against this API (apitest), and
// the MCP tool server imports client, so the list apitest mounts cannot include it.
package restapi

import (
	"net/http"

	"github.com/plumehq/plume/functions/datasets"
	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/functions/monitors"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/functions/otlp"
	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/functions/settings"
	"github.com/plumehq/plume/functions/signals"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/functions/webhooks"
	"github.com/plumehq/plume/internal/app"
)

// Functions are the REST API's functions, in template.yaml's order.
var Functions = []app.Function{
	prompts.Function,
	tracing.IngestFunction,
	tracing.QueryFunction,
	otlp.Function,
	settings.Function,
	judges.Function,
	feedback.Function,
	signals.Function,
	optimizer.Function,
	webhooks.Function,
	datasets.Function,
	monitors.Function,
}

// Handler is the REST API on one handler, every function mounted on its route keys and served
// as deployed (app.MountDeployed: Lambda's limits apply).
func Handler(env *app.Env) (http.Handler, error) { return app.MountDeployed(env, Functions) }
