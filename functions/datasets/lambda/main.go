// Command lambda is the datasets area's Lambda function (DatasetsFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/datasets"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(datasets.Function) }
