package api

import "time"

// Webhook formats: what a delivery's body is.
const (
	// WebhookStandard delivers the Event itself, as JSON.
	WebhookStandard = "standard"
	// WebhookSlack delivers {"text": "..."}, a Slack incoming webhook's message.
	WebhookSlack = "slack"
)

// Delivery statuses, as WebhookDelivery reports them.
const (
	// DeliveryPending: not delivered yet; NextAttemptAt says when it is tried (again).
	DeliveryPending = "pending"
	// DeliverySucceeded: the receiver answered 2xx.
	DeliverySucceeded = "succeeded"
	// DeliveryFailed: every attempt failed for the retry window (24 hours); the delivery went
	// to the dead-letter queue. A redeliver starts it again.
	DeliveryFailed = "failed"
)

// CreateWebhookRequest is the body of POST /projects/{project_id}/webhooks. Events are the
// event types delivered (EventTypes); Format is WebhookStandard (the default) or WebhookSlack.
type CreateWebhookRequest struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Format string   `json:"format,omitempty"`
}

// Webhook is a webhook as GET /projects/{project_id}/webhooks lists it and GET
// /projects/{project_id}/webhooks/{webhook_id} answers it: never its secret.
type Webhook struct {
	ID        string    `json:"id"`
	ProjectID string    `json:"project_id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	Format    string    `json:"format"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
}

// CreatedWebhook is the answer of POST /projects/{project_id}/webhooks: the webhook and its
// signing secret ("whsec_" + base64), which no other answer shows.
type CreatedWebhook struct {
	Webhook
	Secret string `json:"secret"`
}

// WebhookList is the answer of GET /projects/{project_id}/webhooks.
type WebhookList struct {
	Webhooks []Webhook `json:"webhooks"`
}

// WebhookDelivery is one event's delivery to one webhook, as the delivery log shows it.
// LastStatusCode is the receiver's last answer (null when it never answered); LastError why
// the last attempt failed.
type WebhookDelivery struct {
	ID             string     `json:"id"`
	WebhookID      string     `json:"webhook_id"`
	EventID        string     `json:"event_id"`
	EventType      string     `json:"event_type"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	LastStatusCode *int       `json:"last_status_code"`
	LastError      string     `json:"last_error,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
}

// WebhookDeliveryList is the answer of GET /projects/{project_id}/webhooks/{webhook_id}/deliveries:
// the newest deliveries first (limit, default 50, at most 200).
type WebhookDeliveryList struct {
	Deliveries []WebhookDelivery `json:"deliveries"`
}

// WebhookDeleted answers DELETE /projects/{project_id}/webhooks/{webhook_id}.
type WebhookDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}
