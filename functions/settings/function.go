package settings

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
)

// Function is SettingsFunction of template.yaml.
var Function = app.Function{
	Name:   "SettingsFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		return NewHandler(e.Prices(), e.PriceTable(), ddb.NewAuthStore(e.Table()), e.Authn()), nil
	},
}
