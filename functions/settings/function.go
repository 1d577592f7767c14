package settings

import (
	"cmp"
	"net/http"
	"strings"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
)

// Function is SettingsFunction of template.yaml.
var Function = app.Function{
	Name:   "SettingsFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		// The gateway's default mode is off (gateway.ParseTraceMode); config checked the value.
		trace := cmp.Or(strings.ToLower(e.Config.GatewayTrace), "off")
		g := Gateway{Endpoint: e.Config.GatewayURL, Limits: e.Config.GatewayLimits, Trace: trace}
		if l := e.GatewayLimits(); l != nil {
			g.Usage = l // not a nil *Limiter in the interface
		}
		return NewHandler(e.Prices(), e.PriceTable(), ddb.NewAuthStore(e.Table()), e.Authn(), g), nil
	},
}
