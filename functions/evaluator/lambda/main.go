// Command lambda is the judge runner's Lambda function (EvaluatorFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/evaluator"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.MainWorker(evaluator.Function) }
