// Command worker is the optimizer worker's Lambda function (OptimizerWorkerFunction in
// template.yaml): it executes the runs of the optimization queue.
package main

import (
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.MainWorker(optimizer.WorkerFunction) }
