package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
)

// Function is WebhooksFunction of template.yaml.
var Function = app.Function{
	Name:   "WebhooksFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		return NewHandler(e.Webhooks(), e.EventLog(), e.Authn()), nil
	},
}

// EventsFunction is EventsFunction of template.yaml, invoked by its own event source mapping
// on the table's stream with a batch of one shard's records (only the items that raise events
// pass its filter). A failed batch is returned as an error: Lambda retries it until it
// succeeds, and the fan-out writes each delivery once whatever is retried.
var EventsFunction = app.Worker{
	Name: "EventsFunction",
	Build: func(e *app.Env) (app.Job, error) {
		apply, err := e.EventConsumer()
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, event []byte) error {
			shard, records, err := ddb.DecodeStreamEvent(event)
			if err != nil {
				return err
			}
			return apply(ctx, shard, records)
		}, nil
	},
}

// DeliveryFunction is WebhookDeliveryFunction of template.yaml, invoked by the delivery
// queue's event source mapping with a batch of messages. A failed attempt is queued again by
// the deliverer itself; an error (the table unreachable) fails the batch, which SQS offers
// again and, after its redrive policy, moves to the dead-letter queue.
var DeliveryFunction = app.Worker{
	Name: "WebhookDeliveryFunction",
	Build: func(e *app.Env) (app.Job, error) {
		d, err := e.Deliverer()
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, event []byte) error {
			var errsOf []error
			for _, body := range messages(event) {
				if err := d.Handle(ctx, body); err != nil {
					errsOf = append(errsOf, err)
				}
			}
			return errors.Join(errsOf...)
		}, nil
	},
}

// messages are the bodies of an SQS event's records, or the event itself when it is a single
// message (plume-local's queue, `aws lambda invoke`).
func messages(event []byte) [][]byte {
	var sqsEvent struct {
		Records []struct {
			Body string `json:"body"`
		} `json:"Records"`
	}
	if json.Unmarshal(event, &sqsEvent) != nil || len(sqsEvent.Records) == 0 {
		return [][]byte{event}
	}
	out := make([][]byte, len(sqsEvent.Records))
	for i, r := range sqsEvent.Records {
		out[i] = []byte(r.Body)
	}
	return out
}
