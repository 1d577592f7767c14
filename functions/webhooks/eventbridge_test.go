package webhooks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/awstest"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/eventbus"
)

// countingBus counts the PutEvents requests sent to moto and the entries they carry.
type countingBus struct {
	eventbus.API
	mu               sync.Mutex
	requests, events int
}

func (c *countingBus) PutEvents(ctx context.Context, in *eventbus.PutEventsInput) (*eventbus.PutEventsOutput, error) {
	c.mu.Lock()
	c.requests++
	c.events += len(in.Entries)
	c.mu.Unlock()
	return c.API.PutEvents(ctx, in)
}

// envelope is what an EventBridge rule sends its SQS target: the event around Plume's.
type envelope struct {
	Source     string    `json:"source"`
	DetailType string    `json:"detail-type"`
	Detail     api.Event `json:"detail"`
}

// TestEventsOnEventBridge: a pin's prompt.tag.moved goes on the bus, where a rule matching
// {"source": ["plume"]} routes it to a queue, with the event (its id) as its detail; the
// version's event beside it. The stream applied again puts the same events with the same ids
// (consumers deduplicate by them). One PutEvents request per batch of up to 10 events.
func TestEventsOnEventBridge(t *testing.T) {
	name, queueURL := awstest.NewBus(t, "plume-events", `{"source": ["plume"]}`)
	counting := &countingBus{API: eventbus.NewClient(awstest.Config(t))}
	a := apitest.New(t, apitest.Options{EventBus: eventbus.New(counting, name)})

	v1 := a.EnsurePrompt(t, a.A, "support-bot", "v1")
	pin(t, a, a.A, "support-bot", "production", 1)
	a.DrainStream(t)

	got := receive(t, queueURL, 2)
	byType := map[string]envelope{}
	for _, m := range got {
		assert.Equal(t, "plume", m.Source)
		assert.Equal(t, m.DetailType, m.Detail.Type)
		assert.Equal(t, a.A.ProjectID, m.Detail.ProjectID)
		byType[m.DetailType] = m
	}
	require.Contains(t, byType, api.EventPromptTagMoved)
	require.Contains(t, byType, api.EventPromptVersionCreated)
	moved := byType[api.EventPromptTagMoved].Detail
	assert.Regexp(t, `^evt_[0-9a-f]{32}$`, moved.ID)
	var body api.PromptTagMoved
	require.NoError(t, json.Unmarshal(moved.Data, &body))
	assert.Equal(t, api.PromptTagMoved{Slug: "support-bot", Tag: "production", ToVersion: 1, ToVersionID: v1, By: a.A.UserID}, body)
	counting.mu.Lock()
	assert.Equal(t, 2, counting.events, "each event put once")
	assert.LessOrEqual(t, counting.requests, 2, "one request per stream batch")
	counting.mu.Unlock()

	// The stream applied again, as a retried batch is: the same events, the same ids.
	a.ReplayEvents(t)
	again := receive(t, queueURL, 2)
	ids := map[string]bool{}
	for _, m := range append(got, again...) {
		ids[m.Detail.ID] = true
	}
	assert.Len(t, ids, 2, "two events, each with one id however often it is put")
}

// receive reads n messages from the queue (deleting them), waiting up to 30 s.
func receive(t *testing.T, queueURL string, n int) []envelope {
	t.Helper()
	client := awstest.SQS(t)
	var out []envelope
	deadline := time.Now().Add(30 * time.Second)
	for len(out) < n && time.Now().Before(deadline) {
		res, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &queueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		require.NoError(t, err)
		for _, m := range res.Messages {
			var e envelope
			require.NoError(t, json.Unmarshal([]byte(aws.ToString(m.Body)), &e), aws.ToString(m.Body))
			out = append(out, e)
			_, err := client.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &queueURL, ReceiptHandle: m.ReceiptHandle})
			require.NoError(t, err)
		}
	}
	require.Len(t, out, n, "messages routed to the queue")
	return out
}

// refusingBus is moto's EventBridge behind a switch: while refuse is on, every entry of every
// PutEvents is refused (FailedEntryCount, an ErrorCode each), as a throttled bus answers.
type refusingBus struct {
	eventbus.API
	mu      sync.Mutex
	refuse  bool
	refused map[string]int // entries refused, by Plume's event id
}

func (r *refusingBus) PutEvents(ctx context.Context, in *eventbus.PutEventsInput) (*eventbus.PutEventsOutput, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.refuse {
		return r.API.PutEvents(ctx, in)
	}
	out := &eventbus.PutEventsOutput{FailedEntryCount: len(in.Entries)}
	for _, e := range in.Entries {
		var ev api.Event
		if err := json.Unmarshal([]byte(e.Detail), &ev); err == nil {
			r.refused[ev.ID]++
		}
		out.Entries = append(out.Entries, eventbus.EntryResult{ErrorCode: "ThrottlingException", ErrorMessage: "Rate exceeded"})
	}
	return out, nil
}

func (r *refusingBus) set(refuse bool) {
	r.mu.Lock()
	r.refuse = refuse
	r.mu.Unlock()
}

// TestEventBridgeRefusalFailsTheBatch: while EventBridge refuses every attempt, the stream
// batch of a pin fails (EventConsumer returns the error, so Lambda retries the batch) after
// eventbus.DefaultAttempts puts of each entry; the batch applied again once the bus accepts
// puts each event once, with the id its webhook delivery carries, and the webhook receives
// the tag move once, with one id, however often the batch was applied.
func TestEventBridgeRefusalFailsTheBatch(t *testing.T) {
	name, queueURL := awstest.NewBus(t, "plume-refused", `{"source": ["plume"]}`)
	bus := &refusingBus{API: eventbus.NewClient(awstest.Config(t)), refused: map[string]int{}}
	eb := eventbus.New(bus, name)
	eb.Backoff = time.Millisecond
	a := apitest.New(t, apitest.Options{EventBus: eb, Config: func(c *config.Config) {
		c.Webhooks.AllowedHosts = []string{"127.0.0.1"}
	}})
	rcv := newReceiver(t, http.StatusOK)
	hook := createWebhook(t, a, a.A, rcv.URL, api.EventPromptTagMoved)
	a.EnsurePrompt(t, a.A, "support-bot", "v1")
	pin(t, a, a.A, "support-bot", "production", 1)

	events, err := a.Env.EventConsumer()
	require.NoError(t, err)
	o := ddbtest.Client(t, nil).Options()
	p := &ddb.StreamPoller{DB: ddbtest.Client(t, nil), TableName: a.TableName,
		Streams: ddb.NewStreamsClient(aws.Config{Region: o.Region, Credentials: o.Credentials}, ddbtest.Endpoint(t)),
		Apply:   events}

	// Refused on every attempt: the batch fails, twice over.
	bus.set(true)
	for range 2 {
		_, err := p.Poll(context.Background())
		require.Error(t, err, "a batch whose events EventBridge refused fails, to be retried")
	}
	bus.set(false)
	bus.mu.Lock()
	require.Len(t, bus.refused, 2, "the version's event and the tag move")
	for id, n := range bus.refused {
		assert.Equal(t, 2*eventbus.DefaultAttempts, n, "event %s: every attempt of both applications refused", id)
	}
	bus.mu.Unlock()

	// The bus accepts again: the batch applied once more succeeds.
	for idle, polls := 0, 0; idle < 2; polls++ {
		require.Less(t, polls, 50, "the stream drains")
		busy, err := p.Poll(context.Background())
		require.NoError(t, err)
		if idle++; busy {
			idle = 0
		}
	}
	onBus := receive(t, queueURL, 2)
	byType := map[string]string{}
	for _, m := range onBus {
		byType[m.DetailType] = m.Detail.ID
	}
	require.Contains(t, byType, api.EventPromptTagMoved)

	got := rcv.got(t, 1)
	require.Eventually(t, func() bool {
		s := a.Webhooks.Stats()
		return s.Invocations == s.Successes+s.Failures
	}, 30*time.Second, 5*time.Millisecond)
	got = rcv.got(t, len(got))
	require.Len(t, got, 1, "the tag move delivered once, though its batch was applied three times")
	verify(t, hook.Secret, got[0])
	assert.Equal(t, byType[api.EventPromptTagMoved], got[0].header.Get("webhook-id"), "the id on the bus is the delivery's")
	log := deliveries(t, a, a.A, hook.ID)
	require.Len(t, log, 1, "one delivery")
	assert.Equal(t, 1, log[0].Attempts)
	var page []api.Event
	a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/events", a.A.Key, nil).Decode(t, &page)
	assert.Len(t, page, 2, "each event logged once")
}
