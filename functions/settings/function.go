package settings

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
)

// Function is SettingsFunction of template.yaml.
var Function = app.Function{
	Name:   "SettingsFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		return NewHandler(e.Prices(), e.PriceTable(), e.Authn()), nil
	},
}
