package sweeper

import "github.com/plumehq/plume/internal/app"

// Function is SweeperFunction of template.yaml, invoked by its schedule.
var Function = app.Worker{
	Name: "SweeperFunction",
	Build: func(e *app.Env) (app.Job, error) {
		return NewJob(e.Traces(), e.Now), nil
	},
}
