// Command lambda is the webhooks area's Lambda function (WebhooksFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/webhooks"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(webhooks.Function) }
