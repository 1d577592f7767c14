package deadletter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/awstest"
	"github.com/plumehq/plume/shared/awsjson"
	"github.com/plumehq/plume/shared/deadletter"
)

// record is a destination record for the event {"n": n}.
func record(n int) deadletter.Record {
	return deadletter.Record{
		Version:   deadletter.Version,
		Timestamp: time.Date(2026, 3, 2, 9, 41, 17, 0, time.UTC),
		RequestContext: deadletter.RequestContext{
			RequestID:              fmt.Sprintf("request-%d", n),
			FunctionARN:            "arn:aws:lambda:us-east-1:123456789012:function:f:$LATEST",
			Condition:              deadletter.ConditionRetriesExhausted,
			ApproximateInvokeCount: 3,
		},
		RequestPayload:  json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)),
		ResponseContext: deadletter.ResponseContext{StatusCode: 200, ExecutedVersion: deadletter.ExecutedVersionLatest, FunctionError: deadletter.FunctionErrorUnhandled},
		ResponsePayload: json.RawMessage(`{"errorMessage":"boom"}`),
	}
}

// recorder is a replay handler that records the events it is given and fails those whose
// n is in fail.
type recorder struct {
	mu     sync.Mutex
	events []string
	fail   map[int]bool
}

func (r *recorder) handle(_ context.Context, payload []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, string(payload))
	var e struct{ N int }
	if json.Unmarshal(payload, &e) == nil && r.fail[e.N] {
		return errors.New("still failing " + strconv.Itoa(e.N))
	}
	return nil
}

// messagesLeft is the number of messages on the queue, visible or not.
func messagesLeft(t *testing.T, client *sqs.Client, url string) int {
	t.Helper()
	out, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{
		QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	require.NoError(t, err)
	total := 0
	for _, name := range []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible} {
		n, err := strconv.Atoi(out.Attributes[string(name)])
		require.NoError(t, err)
		total += n
	}
	return total
}

// sqsJSON is SQS in moto, reached as a function reaches it.
func sqsJSON(t *testing.T) *awsjson.Client {
	return awsjson.New(awstest.Config(t), awsjson.SQS)
}

// countingAPI counts the operations sent, by name.
type countingAPI struct {
	deadletter.API
	mu     sync.Mutex
	counts map[string]int
}

func (c *countingAPI) Call(ctx context.Context, op string, in, out any) error {
	c.mu.Lock()
	c.counts[op]++
	c.mu.Unlock()
	return c.API.Call(ctx, op, in, out)
}

func TestReplay(t *testing.T) {
	client := awstest.SQS(t)
	url := awstest.NewQueue(t, "deadletter")
	q := deadletter.New(sqsJSON(t), url)

	for n := range 3 {
		require.NoError(t, q.Send(t.Context(), record(n)))
	}
	// What DeadLetterConfig sends: the event without a record, and a body that is no event.
	for _, body := range []string{`{"n":3}`, `not an event`} {
		_, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(body)})
		require.NoError(t, err)
	}

	h := &recorder{fail: map[int]bool{1: true}}
	res, err := q.Replay(t.Context(), h.handle, deadletter.ReplayOptions{VisibilityTimeout: time.Hour})
	require.NoError(t, err)

	assert.ElementsMatch(t, []string{`{"n":0}`, `{"n":1}`, `{"n":2}`, `{"n":3}`}, h.events, "each event once, unwrapped")
	assert.Equal(t, 5, res.Received)
	assert.Equal(t, 3, res.Replayed)
	assert.Equal(t, 1, res.Failed)
	assert.Equal(t, 1, res.Skipped)
	require.Len(t, res.Problems, 2)
	var failed, skipped int
	for _, p := range res.Problems {
		assert.NotEmpty(t, p.MessageID)
		if errors.Is(p.Err, deadletter.ErrNoEvent) {
			skipped++
		} else {
			assert.EqualError(t, p.Err, "still failing 1")
			failed++
		}
	}
	assert.Equal(t, 1, failed)
	assert.Equal(t, 1, skipped)
	assert.Equal(t, 2, messagesLeft(t, client, url), "the failed and the skipped message stay on the queue")
}

// TestReplayMax: a replay receives at most Max messages; the rest wait for the next one.
func TestReplayMax(t *testing.T) {
	client := awstest.SQS(t)
	url := awstest.NewQueue(t, "deadletter-max")
	counting := &countingAPI{API: sqsJSON(t), counts: map[string]int{}}
	q := deadletter.New(counting, url)
	const sent = 25
	for n := range sent {
		require.NoError(t, q.Send(t.Context(), record(n)))
	}

	h := &recorder{}
	res, err := q.Replay(t.Context(), h.handle, deadletter.ReplayOptions{Max: 12})
	require.NoError(t, err)
	assert.Equal(t, deadletter.ReplayResult{Received: 12, Replayed: 12}, res)
	assert.Equal(t, map[string]int{"SendMessage": sent, "ReceiveMessage": 2, "DeleteMessage": 12}, counting.counts,
		"a send per record, a receive per 10 messages, a delete per message replayed")

	res, err = q.Replay(t.Context(), h.handle, deadletter.ReplayOptions{})
	require.NoError(t, err)
	assert.Equal(t, deadletter.ReplayResult{Received: sent - 12, Replayed: sent - 12}, res)
	assert.Len(t, h.events, sent)
	assert.Zero(t, messagesLeft(t, client, url))
}

func TestReplayEmptyQueue(t *testing.T) {
	q := deadletter.New(sqsJSON(t), awstest.NewQueue(t, "deadletter-empty"))
	res, err := q.Replay(t.Context(), func(context.Context, []byte) error {
		t.Error("handler called on an empty queue")
		return nil
	}, deadletter.ReplayOptions{})
	require.NoError(t, err)
	assert.Equal(t, deadletter.ReplayResult{}, res)
}

// TestReplayStopsWhenContextEnds: a handler that sees its context end stops the replay; the
// message stays on the queue.
func TestReplayStopsWhenContextEnds(t *testing.T) {
	client := awstest.SQS(t)
	url := awstest.NewQueue(t, "deadletter-cancel")
	q := deadletter.New(sqsJSON(t), url)
	for n := range 2 {
		require.NoError(t, q.Send(t.Context(), record(n)))
	}
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	res, err := q.Replay(ctx, func(ctx context.Context, _ []byte) error {
		calls++
		cancel()
		return ctx.Err()
	}, deadletter.ReplayOptions{VisibilityTimeout: time.Hour})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls)
	assert.Equal(t, 1, res.Failed)
	assert.Zero(t, res.Replayed)
	assert.Equal(t, 2, messagesLeft(t, client, url))
}

func TestReplayUnknownQueue(t *testing.T) {
	client := awstest.SQS(t)
	url := awstest.NewQueue(t, "deadletter-gone")
	_, err := client.DeleteQueue(t.Context(), &sqs.DeleteQueueInput{QueueUrl: &url})
	require.NoError(t, err)

	q := deadletter.New(sqsJSON(t), url)
	_, err = q.Replay(t.Context(), func(context.Context, []byte) error { return nil }, deadletter.ReplayOptions{})
	assert.ErrorContains(t, err, "receive from "+url)
	assert.ErrorIs(t, err, awsjson.ErrNotFound)
	assert.ErrorContains(t, q.Send(t.Context(), record(0)), "send the record of request request-0")
}
