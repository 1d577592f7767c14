package datasets

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/ddb"
)

// Function is DatasetsFunction of template.yaml.
var Function = app.Function{
	Name:   "DatasetsFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		blobs, err := e.Blobs()
		if err != nil {
			return nil, err
		}
		store := ddb.NewDatasetStore(e.Table())
		return NewHandler(dataset.NewService(store, blobs, e.Now), dataset.NewExperiments(store, store, e.Now).WithJudges(e.JudgeStore(), blobs), e.Authn()), nil
	},
}
