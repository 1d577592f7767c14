package dashboard

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
)

// Function is DashboardFunction of template.yaml.
var Function = app.Function{
	Name:   "DashboardFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		q, err := e.TraceQueries()
		if err != nil {
			return nil, err
		}
		return NewHandler(Deps{
			Sessions: ddb.NewWebSessionStore(e.Table()), Authn: e.Authn(), Keys: ddb.NewAuthStore(e.Table()),
			KeyCacheTTL: e.Config.AuthCacheTTL, Queries: q, Reader: e.Traces(), Prompts: e.Prompts(), Now: e.Now,
		}), nil
	},
}
