// Command lambda is the gateway area's Lambda function (GatewayFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/gateway"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(gateway.Function) }
