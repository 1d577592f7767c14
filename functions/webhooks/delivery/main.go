// Command delivery attempts queued webhook deliveries (WebhookDeliveryFunction in
// template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/webhooks"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.MainWorker(webhooks.DeliveryFunction) }
