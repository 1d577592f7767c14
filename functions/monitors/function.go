package monitors

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/plumehq/plume/internal/app"
)

// Function is MonitorsFunction of template.yaml.
var Function = app.Function{
	Name:   "MonitorsFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		return NewHandler(e.Monitors(), e.Authn()), nil
	},
}

// EvaluateFunction is MonitorFunction of template.yaml, invoked every minute by its schedule
// (its event is ignored): one run evaluates every project's monitors. An error (a monitor
// whose rollups or write failed) is returned to the runtime, which counts it in the Errors
// metric; the next run is the retry, so the schedule does not retry.
var EvaluateFunction = app.Worker{
	Name: "MonitorFunction",
	Build: func(e *app.Env) (app.Job, error) {
		ev := e.MonitorEvaluator()
		return func(ctx context.Context, _ []byte) error {
			res, err := ev.Run(ctx)
			slog.InfoContext(ctx, "monitors evaluated", "monitors", res.Monitors, "changes", res.Changes,
				"reminders", res.Reminders, "lost", res.Lost, "error", err)
			return err
		}, nil
	},
}
