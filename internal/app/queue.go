package app

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/plumehq/plume/shared/asyncinvoke"
	"github.com/plumehq/plume/shared/awsjson"
	"github.com/plumehq/plume/shared/errs"
)

// Queue hands work to a worker function: an SQS queue in a deployment, in-process locally.
type Queue interface {
	Send(ctx context.Context, body []byte) error
}

// SQSQueue is a Queue on an SQS queue.
type SQSQueue struct {
	client *awsjson.Client
	url    string
}

// NewSQSQueue returns the queue at url, reached through client (an awsjson.Client of
// awsjson.SQS).
func NewSQSQueue(client *awsjson.Client, url string) *SQSQueue {
	return &SQSQueue{client: client, url: url}
}

// sendMessageInput is the input of SQS's SendMessage.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
type sendMessageInput struct {
	QueueURL     string `json:"QueueUrl"`
	MessageBody  string
	DelaySeconds int32 `json:",omitempty"`
}

// Send implements Queue with one SendMessage.
func (q *SQSQueue) Send(ctx context.Context, body []byte) error {
	return q.SendAfter(ctx, body, 0)
}

// SendAfter sends body to be received after delay (SQS's DelaySeconds, at most 15 minutes).
func (q *SQSQueue) SendAfter(ctx context.Context, body []byte, delay time.Duration) error {
	seconds := int32(min(delay, 15*time.Minute) / time.Second)
	if err := q.client.Call(ctx, "SendMessage", sendMessageInput{QueueURL: q.url, MessageBody: string(body), DelaySeconds: seconds}, nil); err != nil {
		return fmt.Errorf("send to %s: %w", q.url, err)
	}
	return nil
}

// LocalQueue is a Queue served in-process (plume-local, tests): each message goes to the
// worker's handler asynchronously, retried as Lambda retries an event (shared/asyncinvoke).
// The worker is attached after the Env is built (Serve), since it is built from the Env.
type LocalQueue struct {
	inv atomic.Pointer[asyncinvoke.Invoker]
}

// Serve makes h the queue's worker.
func (q *LocalQueue) Serve(h asyncinvoke.Handler, cfg asyncinvoke.Config) {
	q.inv.Store(asyncinvoke.New(h, cfg))
}

// Send implements Queue: errs.Unavailable when no worker serves the queue.
func (q *LocalQueue) Send(_ context.Context, body []byte) error {
	inv := q.inv.Load()
	if inv == nil {
		return errs.Unavailable("no worker serves this queue")
	}
	inv.Invoke(body)
	return nil
}

// SendAfter is Send after delay, as SQS delays a message: the message waits in a timer, and
// one still waiting when the queue closes is dropped (plume-local's queue is not durable).
func (q *LocalQueue) SendAfter(ctx context.Context, body []byte, delay time.Duration) error {
	if delay <= 0 {
		return q.Send(ctx, body)
	}
	if q.inv.Load() == nil {
		return errs.Unavailable("no worker serves this queue")
	}
	time.AfterFunc(delay, func() { _ = q.Send(context.Background(), body) })
	return nil
}

// Close stops the worker after the messages in progress, or when ctx ends.
func (q *LocalQueue) Close(ctx context.Context) error {
	if inv := q.inv.Load(); inv != nil {
		return inv.Close(ctx)
	}
	return nil
}

// Stats counts what the worker did (zero before Serve).
func (q *LocalQueue) Stats() asyncinvoke.Stats {
	if inv := q.inv.Load(); inv != nil {
		return inv.Stats()
	}
	return asyncinvoke.Stats{}
}
