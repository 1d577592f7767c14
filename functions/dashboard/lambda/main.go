// Command lambda is the dashboard's Lambda function (DashboardFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/dashboard"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(dashboard.Function) }
