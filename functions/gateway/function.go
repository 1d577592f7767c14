package gateway

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
)

// Function is GatewayFunction of template.yaml.
var Function = app.Function{
	Name:   "GatewayFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		return NewHandler(Deps{
			Models:   e.Models,
			Prices:   e.PriceTable(),
			Pricer:   e.Pricer(),
			Limits:   e.GatewayLimits(),
			Bindings: e.Prompts(),
			Authn:    e.Authn(),
		}), nil
	},
	Streaming: true,
}
