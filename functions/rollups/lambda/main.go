// Command lambda is the rollups' stream consumer (RollupFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/rollups"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.MainWorker(rollups.Function) }
