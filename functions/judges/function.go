package judges

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
)

// Function is JudgesFunction of template.yaml.
var Function = app.Function{
	Name:   "JudgesFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		blobs, err := e.Blobs()
		if err != nil {
			return nil, err
		}
		return NewHandler(e.Judges().WithBackfills(blobs), e.JudgeStore(), e.Authn()), nil
	},
}
