package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// Queue holds deliveries to attempt: an SQS queue in a deployment (a delay is the message's
// DelaySeconds), in-process locally.
type Queue interface {
	SendAfter(ctx context.Context, body []byte, delay time.Duration) error
}

// Poster posts a delivery: safefetch.Fetcher.Post, which refuses private, loopback and
// metadata addresses unless listed. status is the receiver's answer (0 when none).
type Poster interface {
	Post(ctx context.Context, url string, header http.Header, body []byte) (status int, err error)
}

// Message is a queued delivery: which one to attempt.
type Message struct {
	ProjectID  string `json:"project_id"`
	WebhookID  string `json:"webhook_id"`
	DeliveryID string `json:"delivery_id"`
}

// Retry is how failed attempts are retried: attempt n waits Base x 2^(n-1), at most Max (SQS
// delays a message at most 15 minutes), while the attempt falls within Window of the first.
type Retry struct {
	Base, Max, Window time.Duration
}

// DefaultRetry: 30 s, 1, 2, 4, 8 minutes, then every 15 minutes, for 24 hours.
var DefaultRetry = Retry{Base: 30 * time.Second, Max: 15 * time.Minute, Window: 24 * time.Hour}

// delay is the wait before the attempt after the attempts-th.
func (r Retry) delay(attempts int) time.Duration {
	d := r.Base
	for i := 1; i < attempts && d < r.Max; i++ {
		d *= 2
	}
	return min(d, r.Max)
}

// DeliveryID is the id of event's delivery to webhook: its time first, so that a webhook's
// deliveries sort newest first, then a hash of both ids, so that a fan-out done again writes
// the same delivery.
func DeliveryID(ev api.Event, webhookID string) string {
	h := sha256.Sum256([]byte(ev.ID + "\x00" + webhookID))
	return fmt.Sprintf("dlv_%013d_%s", ev.Time.UnixMilli(), hex.EncodeToString(h[:6]))
}

// Fanout queues each event's delivery to every webhook of its project subscribed to its type,
// and, for a monitor's event, to the webhooks its monitor notifies (Notifies), each once.
//
// Done again for the same events (a stream batch retried after a part of it failed), it
// writes nothing new, and queues again only the deliveries no attempt has taken yet: one that
// was attempted (Attempts > 0) had its message queued, and the deliverer queues its own
// retries, so sending it again would only be a duplicate. One not attempted yet may have been
// written by a fan-out that failed before queueing it, so it is queued again; if its first
// message was queued after all, Deliverer skips whichever message comes second once the first
// has settled it. Requests: one Query per project of the events, one PutItem per delivery (a
// refused one answers the stored delivery: no read), and one SendMessage per delivery queued.
func Fanout(ctx context.Context, store Store, queue Queue, events []api.Event, now time.Time) error {
	hooks := map[string][]Webhook{}
	for _, ev := range events {
		ws, ok := hooks[ev.ProjectID]
		if !ok {
			var err error
			if ws, err = store.Webhooks(ctx, ev.ProjectID); err != nil {
				return err
			}
			hooks[ev.ProjectID] = ws
		}
		body, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		notified := Notifies(ev)
		for _, w := range ws {
			if !w.Subscribed(ev.Type) && !slices.Contains(notified, w.ID) {
				continue
			}
			d := Delivery{ID: DeliveryID(ev, w.ID), ProjectID: ev.ProjectID, WebhookID: w.ID, EventID: ev.ID, EventType: ev.Type,
				Event: body, Status: api.DeliveryPending, CreatedAt: now, UpdatedAt: now, WindowStart: now, NextAttemptAt: &now}
			stored, created, err := store.PutDelivery(ctx, d)
			if err != nil {
				return err
			}
			if !created && stored.Attempts > 0 {
				continue // queued by the fan-out that wrote it; the deliverer has it
			}
			if err := enqueue(ctx, queue, d, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// Notifies are the webhooks an event names besides those subscribed to its type: a monitor's
// notify list (api.MonitorEvent.Notify) for monitor.alerted and monitor.resolved, none for
// the others. A webhook both subscribed and named receives the event once.
func Notifies(ev api.Event) []string {
	if ev.Type != api.EventMonitorAlerted && ev.Type != api.EventMonitorResolved {
		return nil
	}
	var b api.MonitorEvent
	if json.Unmarshal(ev.Data, &b) != nil {
		return nil
	}
	return b.Notify
}

// enqueue queues an attempt of d after delay.
func enqueue(ctx context.Context, q Queue, d Delivery, delay time.Duration) error {
	body, err := json.Marshal(Message{ProjectID: d.ProjectID, WebhookID: d.WebhookID, DeliveryID: d.ID})
	if err != nil {
		return err
	}
	if err := q.SendAfter(ctx, body, delay); err != nil {
		return fmt.Errorf("queue delivery %s: %w", d.ID, err)
	}
	return nil
}

// Deliverer attempts queued deliveries.
type Deliverer struct {
	Store  Store
	Queue  Queue
	Poster Poster
	// DeadLetter receives the message of a delivery given up after Retry.Window; nil: none.
	DeadLetter func(ctx context.Context, body []byte) error
	Retry      Retry
	Now        func() time.Time
}

// Handle attempts the delivery of one queued message. A failed attempt is not an error: it is
// recorded and queued again (or given up). An error is a failure to read or record, for the
// queue to retry the message. Requests: one BatchGetItem, one POST, one UpdateItem, and one
// SendMessage when it is retried.
func (d *Deliverer) Handle(ctx context.Context, raw []byte) error {
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil || m.DeliveryID == "" {
		slog.ErrorContext(ctx, "webhooks: a message that is not a delivery; dropped", "message", string(raw))
		return nil
	}
	dl, w, err := d.Store.Delivery(ctx, m.ProjectID, m.WebhookID, m.DeliveryID)
	if errs.Is(err, errs.CodeNotFound) {
		return nil // expired from the log
	}
	if err != nil {
		return err
	}
	if dl.Status != api.DeliveryPending {
		return nil // delivered, or given up: a message queued twice
	}
	now := d.Now().UTC()
	dl.Attempts++
	dl.UpdatedAt, dl.NextAttemptAt = now, nil
	if w == nil {
		dl.Status, dl.LastError = api.DeliveryFailed, "the webhook was deleted"
		return d.Store.RecordAttempt(ctx, dl)
	}
	status, err := d.post(ctx, *w, dl, now)
	dl.LastStatusCode, dl.LastError = status, ""
	if err == nil {
		dl.Status = api.DeliverySucceeded
		return d.Store.RecordAttempt(ctx, dl)
	}
	dl.LastError = err.Error()
	wait := d.Retry.delay(dl.Attempts)
	if next := now.Add(wait); next.Before(dl.WindowStart.Add(d.Retry.Window)) {
		dl.NextAttemptAt = &next
		if err := d.Store.RecordAttempt(ctx, dl); err != nil {
			return err
		}
		return enqueue(ctx, d.Queue, dl, wait)
	}
	dl.Status = api.DeliveryFailed
	if err := d.Store.RecordAttempt(ctx, dl); err != nil {
		return err
	}
	slog.WarnContext(ctx, "webhooks: delivery given up", "delivery", dl.ID, "webhook", w.ID, "attempts", dl.Attempts, "error", dl.LastError)
	if d.DeadLetter != nil {
		return d.DeadLetter(ctx, raw)
	}
	return nil
}

// post sends one attempt: the event (or its Slack message), signed.
func (d *Deliverer) post(ctx context.Context, w Webhook, dl Delivery, now time.Time) (int, error) {
	body := dl.Event
	if w.Format == api.WebhookSlack {
		var ev api.Event
		err := json.Unmarshal(dl.Event, &ev)
		if err != nil {
			return 0, err
		}
		if body, err = json.Marshal(map[string]string{"text": SlackText(ev)}); err != nil {
			return 0, err
		}
	}
	status, err := d.Poster.Post(ctx, w.URL, signedHeaders(w.Secret, dl.EventID, now, body), body)
	if err == nil && (status < 200 || status > 299) {
		err = fmt.Errorf("the receiver answered %d", status)
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		err = errors.New("the receiver did not answer in time")
	}
	return status, err
}
