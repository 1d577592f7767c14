// Command evaluate evaluates every project's monitors from the rollups, on a schedule
// (MonitorFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/monitors"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.MainWorker(monitors.EvaluateFunction) }
