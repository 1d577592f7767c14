package feedback

import (
	"net/http"

	"github.com/plumehq/plume/internal/app"
)

// Function is FeedbackFunction of template.yaml.
var Function = app.Function{
	Name:   "FeedbackFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		blobs, err := e.Blobs()
		if err != nil {
			return nil, err
		}
		return NewHandler(Deps{
			Feedback: e.Feedback(), Reader: e.FeedbackStore(), Links: e.FeedbackLinks(),
			Completions: e.Traces(), Blobs: blobs, CompletionPages: e.FeedbackStore(), PublicURL: e.Config.PublicURL,
		}, e.Authn()), nil
	},
}
