package webhooks_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
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
