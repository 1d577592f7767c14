// Package webhooks is the webhooks area: a project's admins register the HTTP endpoints its
// events (api.Event) are delivered to, read each webhook's delivery log and redeliver. It
// holds the area's two workers too: EventsFunction, the consumer of the table's change stream
// that raises the events and fans them out (Env.EventConsumer), and WebhookDeliveryFunction,
// the delivery queue's worker (webhook.Deliverer). See docs/webhooks.md.
package webhooks

import (
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/eventlog"
	"github.com/plumehq/plume/shared/webhook"
)

// Routes are the API Gateway HTTP API route keys of WebhooksFunction.
var Routes = []string{
	"ANY /projects/{project_id}/webhooks",
	"ANY /projects/{project_id}/webhooks/{proxy+}",
	"ANY /projects/{project_id}/events",
}

// NewHandler returns the webhooks area. Every webhook route is for admin keys only: a
// webhook's URL receives the project's events, and its secret signs them (docs/keys.md). The
// project's event log (GET /projects/{project_id}/events) is read by members too, as they read
// the prompts and judges whose changes it records.
func NewHandler(svc *webhook.Service, events eventlog.Store, authn *auth.Authenticator) http.Handler {
	s := &server{svc: svc, events: events}
	mux := auth.NewRouter(authn)
	mux.HandleFunc("POST /projects/{project_id}/webhooks", s.create, auth.AdminOnly)
	mux.HandleFunc("GET /projects/{project_id}/webhooks", s.list, auth.AdminOnly)
	mux.HandleFunc("GET /projects/{project_id}/webhooks/{webhook_id}", s.get, auth.AdminOnly)
	mux.HandleFunc("DELETE /projects/{project_id}/webhooks/{webhook_id}", s.delete, auth.AdminOnly)
	mux.HandleFunc("GET /projects/{project_id}/webhooks/{webhook_id}/deliveries", s.deliveries, auth.AdminOnly)
	mux.HandleFunc("POST /projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", s.redeliver, auth.AdminOnly)
	mux.HandleFunc("GET /projects/{project_id}/events", s.eventLog)
	return mux
}
