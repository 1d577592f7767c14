package settings

import (
	"net/http"

	"github.com/plumehq/plume/functions/gateway"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
)

// Function is SettingsFunction of template.yaml.
var Function = app.Function{
	Name:   "SettingsFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		mode, err := gateway.ParseTraceMode(e.Config.GatewayTrace)
		if err != nil {
			return nil, err
		}
		g := Gateway{Endpoint: e.Config.GatewayURL, Limits: e.Config.GatewayLimits, Trace: string(mode)}
		if l := e.GatewayLimits(); l != nil {
			g.Usage = l // not a nil *Limiter in the interface
		}
		return NewHandler(e.Prices(), e.PriceTable(), ddb.NewAuthStore(e.Table()), e.Authn(), g), nil
	},
}
