package webhooks_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/awstest"
	"github.com/plumehq/plume/shared/eventbus"
)

// countingBus counts the PutEvents requests sent to moto and the entries they carry.
type countingBus struct {
	eventbus.API
	mu               sync.Mutex
	requests, events int
}

func (c *countingBus) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	c.mu.Lock()
	c.requests++
	c.events += len(in.Entries)
	c.mu.Unlock()
	return c.API.PutEvents(ctx, in, opts...)
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
	counting := &countingBus{API: awstest.EventBridge(t)}
	a := apitest.New(t, apitest.Options{Stream: true, EventBus: eventbus.New(counting, name)})

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
