// Command lambda is the signals area's Lambda function (SignalsFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/signals"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(signals.Function) }
