package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/url"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// MaxPerProject bounds a project's webhooks: each event reads them all (one Query).
const MaxPerProject = 20

// Webhook is a registered endpoint. Secret is the raw signing key; it leaves the service only
// in the answer that creates the webhook.
type Webhook struct {
	ID, ProjectID, URL, Format string
	Events                     []string
	Secret                     []byte
	CreatedAt                  time.Time
	CreatedBy                  string
}

// Subscribed reports whether w receives events of type typ.
func (w Webhook) Subscribed(typ string) bool { return slices.Contains(w.Events, typ) }

// Delivery is one event's delivery to one webhook. Event is the event as delivered (its JSON),
// so every attempt and every redelivery sends the same event with the same id. WindowStart is
// when the current series of attempts began (creation, or the last redeliver).
type Delivery struct {
	ID, ProjectID, WebhookID string
	EventID, EventType       string
	Event                    []byte
	Status                   string
	Attempts                 int
	LastStatusCode           int // 0: no answer
	LastError                string
	CreatedAt, UpdatedAt     time.Time
	WindowStart              time.Time
	NextAttemptAt            *time.Time
}

// Store keeps webhooks and their delivery logs.
type Store interface {
	// CreateWebhook stores w; errs.Conflict when the project has MaxPerProject already.
	CreateWebhook(ctx context.Context, w Webhook) error
	// Webhooks are the project's webhooks, oldest first (one Query).
	Webhooks(ctx context.Context, projectID string) ([]Webhook, error)
	// Webhook is one of the project's webhooks (one GetItem); errs.NotFound when the project
	// has none of that id.
	Webhook(ctx context.Context, projectID, id string) (Webhook, error)
	// DeleteWebhook deletes a webhook (its log expires); errs.NotFound when there is none.
	DeleteWebhook(ctx context.Context, projectID, id string) error
	// PutDelivery stores d unless a delivery with its id exists. It returns the delivery
	// stored, d or the one that was there, and whether it stored d.
	PutDelivery(ctx context.Context, d Delivery) (stored Delivery, created bool, err error)
	// Delivery reads a delivery and its webhook in one request; the webhook is nil when it
	// was deleted. errs.NotFound when the delivery does not exist.
	Delivery(ctx context.Context, projectID, webhookID, id string) (Delivery, *Webhook, error)
	// RecordAttempt stores d's status, attempts, last answer and next attempt.
	RecordAttempt(ctx context.Context, d Delivery) error
	// Deliveries are a webhook's newest deliveries, at most limit.
	Deliveries(ctx context.Context, projectID, webhookID string, limit int) ([]Delivery, error)
}

// Service manages a project's webhooks.
type Service struct {
	store Store
	queue Queue
	now   func() time.Time
}

// NewService returns the webhook service over store; redeliveries go to queue (nil: they are
// refused with errs.Unavailable).
func NewService(store Store, queue Queue, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, queue: queue, now: now}
}

// Create registers a webhook of req for the project and returns it with its secret.
// errs.Invalid for a URL that is not an absolute http(s) URL, an unknown event type or format.
func (s *Service) Create(ctx context.Context, projectID, by string, req api.CreateWebhookRequest) (Webhook, error) {
	w := Webhook{ID: "wh_" + uuid.NewString(), ProjectID: projectID, URL: req.URL, Format: req.Format,
		Events: slices.Compact(slices.Sorted(slices.Values(req.Events))), CreatedAt: s.now().UTC().Truncate(time.Microsecond), CreatedBy: by}
	if err := validate(&w); err != nil {
		return Webhook{}, err
	}
	w.Secret = make([]byte, secretBytes)
	_, _ = rand.Read(w.Secret)
	if err := s.store.CreateWebhook(ctx, w); err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// validate checks a new webhook and sets its default format.
func validate(w *Webhook) error {
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return errs.Invalid("url %q: want an absolute http or https URL without credentials", w.URL)
	}
	if len(w.URL) > 2048 {
		return errs.Invalid("url: at most 2048 characters")
	}
	if len(w.Events) == 0 {
		return errs.Invalid("events: want at least one of %v", api.EventTypes)
	}
	for _, e := range w.Events {
		if !slices.Contains(api.EventTypes, e) {
			return errs.Invalid("events: unknown event type %q (want one of %v)", e, api.EventTypes)
		}
	}
	switch w.Format {
	case "":
		w.Format = api.WebhookStandard
	case api.WebhookStandard, api.WebhookSlack:
	default:
		return errs.Invalid("format %q: want %q or %q", w.Format, api.WebhookStandard, api.WebhookSlack)
	}
	return nil
}

// List returns the project's webhooks.
func (s *Service) List(ctx context.Context, projectID string) ([]Webhook, error) {
	return s.store.Webhooks(ctx, projectID)
}

// Get returns one of the project's webhooks; errs.NotFound when the project has no webhook
// of that id (another project's is not found either).
func (s *Service) Get(ctx context.Context, projectID, id string) (Webhook, error) {
	return s.store.Webhook(ctx, projectID, id)
}

// Delete deletes a webhook: nothing more is delivered to it.
func (s *Service) Delete(ctx context.Context, projectID, id string) error {
	return s.store.DeleteWebhook(ctx, projectID, id)
}

// Deliveries returns a webhook's newest deliveries; errs.NotFound when the project has no
// such webhook.
func (s *Service) Deliveries(ctx context.Context, projectID, webhookID string, limit int) ([]Delivery, error) {
	if _, err := s.store.Webhook(ctx, projectID, webhookID); err != nil {
		return nil, err
	}
	return s.store.Deliveries(ctx, projectID, webhookID, limit)
}

// Redeliver starts a delivery again: pending, with a new retry window, queued now. The event
// and its id are the same.
func (s *Service) Redeliver(ctx context.Context, projectID, webhookID, id string) (Delivery, error) {
	if s.queue == nil {
		return Delivery{}, errs.Unavailable("webhook deliveries are not configured (PLUME_WEBHOOK_QUEUE_URL)")
	}
	d, w, err := s.store.Delivery(ctx, projectID, webhookID, id)
	if err != nil {
		return Delivery{}, err
	}
	if w == nil {
		return Delivery{}, errs.NotFound("webhook %q not found", webhookID)
	}
	now := s.now().UTC()
	d.Status, d.WindowStart, d.UpdatedAt, d.NextAttemptAt = api.DeliveryPending, now, now, &now
	if err := s.store.RecordAttempt(ctx, d); err != nil {
		return Delivery{}, err
	}
	return d, enqueue(ctx, s.queue, d, 0)
}

// secretBytes is the size of a signing key: 256 bits, HMAC-SHA256's block-sized key.
const secretBytes = 32

// SecretString is a signing key as the API shows it: "whsec_" + base64.
func SecretString(key []byte) string { return secretPrefix + base64.StdEncoding.EncodeToString(key) }

const secretPrefix = "whsec_"
