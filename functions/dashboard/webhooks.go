package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
)

// The webhooks pages: the project's webhooks, one webhook's delivery log with its redeliver
// buttons, and the forms that create and delete one. Every webhook route of the API is for
// admin keys only (docs/webhooks.md), so a member sees a note in place of the list and its
// forged forms are refused by the API (403); the page only hides what a member may not do.

// webhookRoutes registers the webhooks pages: /ui/webhooks and /ui/webhooks/{webhook_id}.
func (s *server) webhookRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/webhooks", s.webhooks)
	mux.HandleFunc("POST /ui/webhooks", s.createWebhook)
	mux.HandleFunc("GET /ui/webhooks/created", s.createdWebhook)
	mux.HandleFunc("GET /ui/webhooks/{webhook_id}", s.webhook)
	mux.HandleFunc("POST /ui/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", s.redeliver)
	mux.HandleFunc("GET /ui/webhooks/{webhook_id}/delete", s.confirmDeleteWebhook)
	mux.HandleFunc("POST /ui/webhooks/{webhook_id}/delete", s.deleteWebhook)
}

// createdWebhookCookie carries a new webhook's id and secret from the POST that created it to
// the one page that shows it, as issuedCookie does a key's: shown once, never in a URL or in
// the server's storage.
const (
	createdWebhookCookie = "plume_created_webhook"
	createdWebhookPath   = "/ui/webhooks/created"
)

// deliveriesShown is the most deliveries a webhook's page shows (the API's default page).
const deliveriesShown = 50

// webhookForm is the create form, as sent.
type webhookForm struct {
	URL, Format string
	Events      []string
	Error       string
}

type webhooksData struct {
	Admin    bool
	Webhooks []api.Webhook
	Form     webhookForm
	Types    []string
	Formats  []string
}

// webhooks serves GET /ui/webhooks: the project's webhooks (one read) and the create form, for
// admins; a note for members.
func (s *server) webhooks(w http.ResponseWriter, r *http.Request) {
	s.webhooksPage(w, r, http.StatusOK, webhookForm{Format: api.WebhookStandard})
}

func (s *server) webhooksPage(w http.ResponseWriter, r *http.Request, status int, form webhookForm) {
	d := webhooksData{Admin: sessionOf(r).Role == auth.RoleAdmin, Form: form, Types: api.EventTypes, Formats: []string{api.WebhookStandard, api.WebhookSlack}}
	if d.Admin {
		c, ctx := s.api(r)
		hooks, err := c.Webhooks(ctx)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		d.Webhooks = hooks
	}
	s.render(w, r, status, "webhooks", page{Title: "Webhooks", Nav: "webhooks", Data: d})
}

// createWebhook serves POST /ui/webhooks: registers a webhook and redirects to the one page
// that shows its secret. A refused form is shown again with the API's message.
func (s *server) createWebhook(w http.ResponseWriter, r *http.Request) {
	form := webhookForm{URL: strings.TrimSpace(r.PostForm.Get("url")), Format: r.PostForm.Get("format"), Events: r.PostForm["events"]}
	c, ctx := s.api(r)
	created, err := c.CreateWebhook(ctx, api.CreateWebhookRequest{URL: form.URL, Events: form.Events, Format: form.Format})
	if status, msg, ok := formError(err); ok {
		form.Error = msg
		s.webhooksPage(w, r, status, form)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: createdWebhookCookie, Value: created.ID + ":" + created.Secret, Path: createdWebhookPath, MaxAge: int(issuedLifetime / time.Second),
		HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode,
	})
	http.Redirect(w, r, createdWebhookPath, http.StatusSeeOther)
}

type createdWebhookData struct {
	Webhook *api.Webhook // nil when there is no secret to show
	Secret  string
}

// createdWebhook serves GET /ui/webhooks/created: the secret of the webhook just created, once.
// The cookie that carried it is deleted with this answer, and it shows only for a webhook its
// session's project lists.
func (s *server) createdWebhook(w http.ResponseWriter, r *http.Request) {
	var d createdWebhookData
	if ck, err := r.Cookie(createdWebhookCookie); err == nil {
		http.SetCookie(w, &http.Cookie{Name: createdWebhookCookie, Path: createdWebhookPath, MaxAge: -1, HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode})
		id, secret, _ := strings.Cut(ck.Value, ":")
		if sessionOf(r).Role == auth.RoleAdmin && strings.HasPrefix(secret, "whsec_") && validID("webhook", id) == nil {
			c, ctx := s.api(r)
			hook, err := c.Webhook(ctx, id)
			var e *errs.Error
			switch {
			case err == nil:
				d.Webhook, d.Secret = &hook, secret
			case !errors.As(apiError(err), &e) || e.Code != errs.CodeNotFound:
				s.fail(w, r, err)
				return
			}
		}
	}
	s.render(w, r, http.StatusOK, "webhook-created", page{Title: "New webhook", Nav: "webhooks", Data: d})
}

// findWebhook returns the webhook of the session's project with id (one read), or a
// not-found error (the API answers 403 to a member first).
func (s *server) findWebhook(r *http.Request, id string) (api.Webhook, error) {
	if err := validID("webhook", id); err != nil {
		return api.Webhook{}, err
	}
	c, ctx := s.api(r)
	return c.Webhook(ctx, id)
}

type webhookData struct {
	Webhook    api.Webhook
	Deliveries []api.WebhookDelivery
	// Redelivered is the delivery just queued again, "" for none.
	Redelivered string
	Shown       int
}

// webhook serves GET /ui/webhooks/{webhook_id}: the webhook and its last 50 deliveries, newest
// first: two API reads (GET the webhook, GET its deliveries), three DynamoDB requests (the
// webhook's item, read by each, and one Query of the log), whatever the project and the log hold.
func (s *server) webhook(w http.ResponseWriter, r *http.Request) {
	h, err := s.findWebhook(r, r.PathValue("webhook_id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	ds, err := c.WebhookDeliveries(ctx, h.ID, deliveriesShown)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := webhookData{Webhook: h, Deliveries: ds, Shown: deliveriesShown}
	if id := r.URL.Query().Get("redelivered"); slices.ContainsFunc(ds, func(x api.WebhookDelivery) bool { return x.ID == id }) {
		d.Redelivered = id
	}
	s.render(w, r, http.StatusOK, "webhook", page{Title: "Webhook", Nav: "webhooks", Data: d})
}

// redeliver serves POST /ui/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver: the
// delivery's event is queued again, with the same id.
func (s *server) redeliver(w http.ResponseWriter, r *http.Request) {
	hookID, deliveryID := r.PathValue("webhook_id"), r.PathValue("delivery_id")
	if err := validID("webhook", hookID); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := validID("delivery", deliveryID); err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	if _, err := c.Redeliver(ctx, hookID, deliveryID); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/webhooks/"+url.PathEscape(hookID)+"?redelivered="+url.QueryEscape(deliveryID), http.StatusSeeOther)
}

// confirmDeleteWebhook serves GET /ui/webhooks/{webhook_id}/delete: what deleting does.
func (s *server) confirmDeleteWebhook(w http.ResponseWriter, r *http.Request) {
	h, err := s.findWebhook(r, r.PathValue("webhook_id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	self := "/ui/webhooks/" + url.PathEscape(h.ID)
	d := confirmData{
		Heading: "Delete the webhook to " + h.URL,
		What: []string{
			"Events: " + strings.Join(h.Events, ", "), "Format: " + h.Format,
			"Nothing more is delivered to it; a monitor that names it stays as it is and notifies it no more. This cannot be undone.",
		},
		Action: self + "/delete", Button: "Delete webhook", Cancel: self, Back: "Webhook", TestID: "delete-webhook",
	}
	s.render(w, r, http.StatusOK, "confirm", page{Title: "Delete webhook", Nav: "webhooks", Data: d})
}

// deleteWebhook serves POST /ui/webhooks/{webhook_id}/delete.
func (s *server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("webhook_id")
	if err := validID("webhook", id); err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	if err := c.DeleteWebhook(ctx, id); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/webhooks", http.StatusSeeOther)
}
