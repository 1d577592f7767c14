package webhooks_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/webhook"
)

// queued records what is sent to the deliveries' queue.
type queued struct {
	mu     sync.Mutex
	bodies [][]byte
	delays []time.Duration
}

func (q *queued) SendAfter(_ context.Context, body []byte, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.bodies, q.delays = append(q.bodies, body), append(q.delays, delay)
	return nil
}

// TestRequestsPerDelivery counts the AWS requests of an event's fan-out and of each attempt:
// the fan-out is one Query per project of the batch and, per subscribed webhook, one PutItem
// and one SendMessage; an attempt is one BatchGetItem and one PutItem, and one SendMessage
// more when it is retried.
func TestRequestsPerDelivery(t *testing.T) {
	a := newAPI(t, time.Second, time.Hour)
	ok, failing := newReceiver(t, http.StatusOK), newReceiver(t, http.StatusServiceUnavailable)
	createWebhook(t, a, a.A, ok.URL, api.EventPromptTagMoved)
	createWebhook(t, a, a.A, failing.URL, api.EventPromptTagMoved)
	createWebhook(t, a, a.A, ok.URL, api.EventJudgeCreated) // not subscribed: costs nothing more
	ctx, store := context.Background(), a.Env.WebhookStore()
	ev := api.Event{ID: "evt_0123456789abcdef0123456789abcdef", Type: api.EventPromptTagMoved, Time: time.Now().UTC(), ProjectID: a.A.ProjectID, Data: []byte(`{}`)}

	q := &queued{}
	a.DDB.Reset()
	require.NoError(t, webhook.Fanout(ctx, store, q, []api.Event{ev}, time.Now().UTC()))
	assert.Equal(t, map[string]int{"Query": 1, "PutItem": 2}, a.DDB.Counts(), "fan-out of one event to two webhooks")
	require.Len(t, q.bodies, 2, "two SendMessage")

	d, err := a.Env.Deliverer()
	require.NoError(t, err)
	d.Queue = q
	for i, body := range q.bodies[:2] {
		a.DDB.Reset()
		require.NoError(t, d.Handle(ctx, body))
		assert.Equal(t, map[string]int{"BatchGetItem": 1, "PutItem": 1}, a.DDB.Counts(), "attempt %d", i)
	}
	assert.Len(t, ok.got(t, 1), 1)
	assert.Len(t, failing.got(t, 1), 1)
	require.Len(t, q.bodies, 3, "the failed attempt queued again: one SendMessage")
	assert.Equal(t, time.Second, q.delays[2], "after the retry base")
	t.Logf("fan-out: 1 Query per project + (1 PutItem + 1 SendMessage) per delivery; attempt: 1 BatchGetItem + 1 PutItem (+1 SendMessage on failure)")
}

// failingQueue refuses every message, as SQS unreachable does.
type failingQueue struct{}

func (failingQueue) SendAfter(context.Context, []byte, time.Duration) error {
	return errors.New("sqs: connection refused")
}

// TestRetriedFanoutQueuesOnce applies a fan-out again, as a stream batch retried after a
// part of it failed is: a delivery an attempt has taken is not queued again (it was 1
// SendMessage per delivery each time the batch was applied), one no attempt has taken is (its
// message may never have been sent), and a fan-out whose queueing failed is made good by the
// retry. Counted in SendMessage and DynamoDB requests: the refused PutItem answers the stored
// delivery, so the retry reads nothing more.
func TestRetriedFanoutQueuesOnce(t *testing.T) {
	a := newAPI(t, time.Second, time.Hour)
	ok := newReceiver(t, http.StatusOK)
	createWebhook(t, a, a.A, ok.URL, api.EventPromptTagMoved)
	createWebhook(t, a, a.A, ok.URL, api.EventPromptTagMoved)
	ctx, store := context.Background(), a.Env.WebhookStore()
	ev := api.Event{ID: "evt_00000000000000000000000000000001", Type: api.EventPromptTagMoved, Time: time.Now().UTC(), ProjectID: a.A.ProjectID, Data: []byte(`{}`)}
	d, err := a.Env.Deliverer()
	require.NoError(t, err)

	// The first fan-out writes both deliveries and fails to queue them.
	require.Error(t, webhook.Fanout(ctx, store, failingQueue{}, []api.Event{ev}, time.Now().UTC()))

	// Retried: both exist, neither attempted: both queued.
	q := &queued{}
	d.Queue = q
	require.NoError(t, webhook.Fanout(ctx, store, q, []api.Event{ev}, time.Now().UTC()))
	require.Len(t, q.bodies, 2, "the deliveries the failed fan-out wrote are queued by its retry")

	// One is attempted; retried again, only the other is queued again.
	require.NoError(t, d.Handle(ctx, q.bodies[0]))
	q.bodies = nil
	a.DDB.Reset()
	require.NoError(t, webhook.Fanout(ctx, store, q, []api.Event{ev}, time.Now().UTC()))
	assert.Equal(t, map[string]int{"Query": 1, "PutItem": 2}, a.DDB.Counts(), "the refused writes answer the stored deliveries")
	require.Len(t, q.bodies, 1, "the attempted delivery is not queued again")

	// Both attempted: a retry queues nothing.
	require.NoError(t, d.Handle(ctx, q.bodies[0]))
	q.bodies = nil
	a.DDB.Reset()
	require.NoError(t, webhook.Fanout(ctx, store, q, []api.Event{ev}, time.Now().UTC()))
	assert.Empty(t, q.bodies, "SendMessage of a batch applied again")
	assert.Equal(t, map[string]int{"Query": 1, "PutItem": 2}, a.DDB.Counts())

	got := ok.got(t, 2)
	assert.Len(t, got, 2, "each delivery posted once")
	assert.Equal(t, got[0].header.Get("webhook-id"), got[1].header.Get("webhook-id"), "one event, one id")
	for _, dl := range append(deliveries(t, a, a.A, mustHooks(t, a)[0]), deliveries(t, a, a.A, mustHooks(t, a)[1])...) {
		assert.Equal(t, api.DeliverySucceeded, dl.Status)
		assert.Equal(t, 1, dl.Attempts)
	}
}

func mustHooks(t *testing.T, a *apitest.API) []string {
	t.Helper()
	var list api.WebhookList
	a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/webhooks", a.A.Key, nil).Decode(t, &list)
	ids := make([]string, len(list.Webhooks))
	for i, w := range list.Webhooks {
		ids[i] = w.ID
	}
	return ids
}
