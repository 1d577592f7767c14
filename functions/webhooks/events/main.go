// Command events raises the project's events from the table's change stream and fans them
// out to webhooks (EventsFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/webhooks"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.MainWorker(webhooks.EventsFunction) }
