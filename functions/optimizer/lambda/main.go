// Command lambda is the optimization runs API's Lambda function (OptimizerFunction in
// template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(optimizer.Function) }
