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
		mode, err := ParseTraceMode(e.Config.GatewayTrace)
		if err != nil {
			return nil, err
		}
		traces, err := e.TraceService()
		if err != nil {
			return nil, err
		}
		return NewHandler(Deps{
			Models:        e.Models,
			Prices:        e.PriceTable(),
			BedrockModels: e.Config.GatewayBedrockModels,
			Pricer:        e.Pricer(),
			Limits:        e.GatewayLimits(),
			Bindings:      e.Prompts(),
			Traces:        traces,
			Trace:         mode,
			Authn:         e.Authn(),
		}), nil
	},
	Streaming: true,
}
