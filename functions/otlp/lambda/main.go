// Command lambda is the otlp area's Lambda function (OTLPFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/otlp"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(otlp.Function) }
