// Command lambda is the sweeper's Lambda function (SweeperFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/sweeper"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.MainWorker(sweeper.Function) }
