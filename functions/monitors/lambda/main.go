// Command lambda is the monitors area's Lambda function (MonitorsFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/monitors"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(monitors.Function) }
