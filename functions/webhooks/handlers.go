package webhooks

import (
	"net/http"
	"strconv"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/eventlog"
	"github.com/plumehq/plume/shared/web"
	"github.com/plumehq/plume/shared/webhook"
)

// maxBody bounds a webhook definition: a URL of at most 2 KB and a few event types.
const maxBody = 16 << 10

// Limits of the delivery log.
const (
	defaultDeliveries = 50
	maxDeliveries     = 200
)

type server struct {
	svc    *webhook.Service
	events eventlog.Store
}

// create serves POST /projects/{project_id}/webhooks: the webhook with its secret, shown once.
func (s *server) create(w http.ResponseWriter, r *http.Request) {
	var req api.CreateWebhookRequest
	if err := web.Decode(w, r, &req, maxBody); err != nil {
		web.Error(w, r, err)
		return
	}
	p, _ := auth.FromContext(r.Context())
	hook, err := s.svc.Create(r.Context(), auth.ProjectID(r), p.User.ID, req)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.CreatedWebhook{Webhook: toWebhook(hook), Secret: webhook.SecretString(hook.Secret)})
}

// list serves GET /projects/{project_id}/webhooks (at most webhook.MaxPerProject).
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	hooks, err := s.svc.List(r.Context(), auth.ProjectID(r))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := api.WebhookList{Webhooks: make([]api.Webhook, len(hooks))}
	for i, h := range hooks {
		out.Webhooks[i] = toWebhook(h)
	}
	web.OK(w, out)
}

// get serves GET /projects/{project_id}/webhooks/{webhook_id}: one webhook, never its secret.
func (s *server) get(w http.ResponseWriter, r *http.Request) {
	hook, err := s.svc.Get(r.Context(), auth.ProjectID(r), r.PathValue("webhook_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toWebhook(hook))
}

// delete serves DELETE /projects/{project_id}/webhooks/{webhook_id}.
func (s *server) delete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("webhook_id")
	if err := s.svc.Delete(r.Context(), auth.ProjectID(r), id); err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.WebhookDeleted{ID: id, Deleted: true})
}

// deliveries serves GET /projects/{project_id}/webhooks/{webhook_id}/deliveries?limit=.
func (s *server) deliveries(w http.ResponseWriter, r *http.Request) {
	limit := defaultDeliveries
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxDeliveries {
			web.Error(w, r, errs.Invalid("limit must be an integer from 1 to %d, got %q", maxDeliveries, v))
			return
		}
		limit = n
	}
	ds, err := s.svc.Deliveries(r.Context(), auth.ProjectID(r), r.PathValue("webhook_id"), limit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := api.WebhookDeliveryList{Deliveries: make([]api.WebhookDelivery, len(ds))}
	for i, d := range ds {
		out.Deliveries[i] = toDelivery(d)
	}
	web.OK(w, out)
}

// redeliver serves POST .../webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver: the
// same event, with the same id, attempted again now with a new retry window.
func (s *server) redeliver(w http.ResponseWriter, r *http.Request) {
	d, err := s.svc.Redeliver(r.Context(), auth.ProjectID(r), r.PathValue("webhook_id"), r.PathValue("delivery_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toDelivery(d))
}

// eventLog serves GET /projects/{project_id}/events?since=&types=&limit=&cursor=: a page of
// the project's events as a JSON array, newest first or, with since, oldest after it; more
// follow when the answer has api.NextCursorHeader (web.Page).
func (s *server) eventLog(w http.ResponseWriter, r *http.Request) {
	q, err := eventlog.ParseQuery(r.URL.Query())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	page, err := s.events.Events(r.Context(), auth.ProjectID(r), q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	events := page.Events
	if events == nil {
		events = []api.Event{}
	}
	web.Page(w, r, events, web.Paging{FromCursor: true, Next: page.Next}, api.MaxAnswerBytes)
}

func toWebhook(h webhook.Webhook) api.Webhook {
	return api.Webhook{ID: h.ID, ProjectID: h.ProjectID, URL: h.URL, Events: h.Events, Format: h.Format, CreatedAt: h.CreatedAt, CreatedBy: h.CreatedBy}
}

func toDelivery(d webhook.Delivery) api.WebhookDelivery {
	out := api.WebhookDelivery{ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, EventType: d.EventType, Status: d.Status,
		Attempts: d.Attempts, LastError: d.LastError, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, NextAttemptAt: d.NextAttemptAt}
	if d.LastStatusCode != 0 {
		code := d.LastStatusCode
		out.LastStatusCode = &code
	}
	return out
}
