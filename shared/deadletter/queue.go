package deadletter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/plumehq/plume/shared/awsjson"
)

// API sends SQS's operations: an awsjson.Client of awsjson.SQS.
type API interface {
	Call(ctx context.Context, op string, in, out any) error
}

var _ API = (*awsjson.Client)(nil)

// The operations of SQS a Queue sends, as its JSON protocol names them.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_Operations.html
type (
	sendMessageInput struct {
		QueueURL    string `json:"QueueUrl"`
		MessageBody string
	}
	receiveMessageInput struct {
		QueueURL            string `json:"QueueUrl"`
		MaxNumberOfMessages int32
		WaitTimeSeconds     int32
		VisibilityTimeout   int32 `json:",omitempty"` // 0: the queue's own
	}
	receiveMessageOutput struct {
		Messages []message
	}
	message struct {
		MessageID     string `json:"MessageId"`
		ReceiptHandle string
		Body          string
	}
	deleteMessageInput struct {
		QueueURL      string `json:"QueueUrl"`
		ReceiptHandle string
	}
)

// DefaultReplayMax is how many messages one Replay receives when ReplayOptions.Max is 0.
const DefaultReplayMax = 1000

// DefaultReplayWait is how long each receive waits for messages when ReplayOptions.WaitTime
// is 0. A receive that waits (long polling) asks every SQS server, so its empty answer means
// the queue holds no visible message; one that does not wait samples a few servers and may
// answer empty while messages remain.
const DefaultReplayWait = time.Second

// maxBatch is the most messages one ReceiveMessage returns, as SQS allows.
const maxBatch = 10

// maxWait is the longest long poll SQS allows.
const maxWait = 20 * time.Second

// maxVisibilityTimeout is the longest visibility timeout SQS allows (12 hours).
const maxVisibilityTimeout = 12 * time.Hour

// ErrNoEvent is the error of a skipped message: its body is neither a destination record with
// an event nor an event (not JSON at all).
var ErrNoEvent = errors.New("deadletter: the message holds no event")

// Queue is one dead-letter queue: an SQS queue that a function's on-failure destination (or
// plume-local's asyncinvoke.Config.OnFailure) sends Records to.
type Queue struct {
	api API
	url string
}

// New returns the queue at url.
func New(api API, url string) *Queue {
	return &Queue{api: api, url: url}
}

// Send writes r to the queue as Lambda does: its JSON is the message body. It has the
// signature of asyncinvoke.Config.OnFailure.
func (q *Queue) Send(ctx context.Context, r Record) error {
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode the record of request %s: %w", r.RequestContext.RequestID, err)
	}
	if err := q.api.Call(ctx, "SendMessage", sendMessageInput{QueueURL: q.url, MessageBody: string(body)}, nil); err != nil {
		return fmt.Errorf("send the record of request %s to %s: %w", r.RequestContext.RequestID, q.url, err)
	}
	return nil
}

// ReplayOptions bound and tune one Replay.
type ReplayOptions struct {
	// Max is the most messages received, whatever becomes of them (0: DefaultReplayMax).
	// It bounds a replay of a queue that keeps filling, or whose failed messages become
	// visible again while it runs.
	Max int
	// VisibilityTimeout hides each received message from other consumers, and from this
	// replay, for this long (whole seconds, up to 12 hours); a message whose event failed
	// becomes visible again when it ends. 0: the queue's own visibility timeout (30 seconds
	// unless the queue sets another). Make it longer than the replay lasts, or a failed
	// message comes back during the same replay and is tried and counted again (within Max).
	VisibilityTimeout time.Duration
	// WaitTime is how long each receive waits for a message before the queue counts as
	// empty (whole seconds, up to 20; 0: DefaultReplayWait).
	WaitTime time.Duration
}

// ReplayResult counts what one Replay did. When Replay returns no error, every received
// message is counted once more, as replayed, failed or skipped; when it stops on an error,
// the messages of the batch it was at that it did not finish are counted only as received
// (they become visible again after their visibility timeout).
type ReplayResult struct {
	// Received is the number of messages received.
	Received int
	// Replayed is the number of messages whose event was handled and that were deleted.
	Replayed int
	// Failed is the number of messages whose event the handler failed; they stay on the
	// queue and become visible again after their visibility timeout.
	Failed int
	// Skipped is the number of messages that hold no event (ErrNoEvent); they stay on the
	// queue, for a person to look at.
	Skipped int
	// Problems lists the failed and skipped messages, in the order they were received.
	Problems []Problem
}

// Problem is a message that was not replayed.
type Problem struct {
	// MessageID is the SQS message id.
	MessageID string
	// Err is the handler's error, or ErrNoEvent for a skipped message.
	Err error
}

// Replay receives up to opts.Max messages, in batches of up to ten, until the queue answers
// empty, and calls handle with each message's event: a destination record's requestPayload,
// or the body itself when it is an event sent without a record (DeadLetterConfig). A message
// is deleted only once handle returned nil. A handler's error does not stop the replay: it
// is counted and listed, as is a message that holds no event.
//
// Replay returns the result so far with an error when a receive or a delete fails or ctx
// ends.
func (q *Queue) Replay(ctx context.Context, handle func(ctx context.Context, payload []byte) error, opts ReplayOptions) (ReplayResult, error) {
	limit := opts.Max
	if limit <= 0 {
		limit = DefaultReplayMax
	}
	in := receiveMessageInput{QueueURL: q.url, WaitTimeSeconds: seconds(opts.WaitTime, DefaultReplayWait, maxWait)}
	if opts.VisibilityTimeout > 0 {
		in.VisibilityTimeout = seconds(opts.VisibilityTimeout, 0, maxVisibilityTimeout)
	}
	var res ReplayResult
	// Every pass receives at least one message or ends the loop, so it ends after at most
	// limit passes.
	for res.Received < limit {
		in.MaxNumberOfMessages = int32(min(maxBatch, limit-res.Received))
		var out receiveMessageOutput
		if err := q.api.Call(ctx, "ReceiveMessage", in, &out); err != nil {
			return res, fmt.Errorf("receive from %s: %w", q.url, err)
		}
		if len(out.Messages) == 0 {
			return res, nil
		}
		res.Received += len(out.Messages)
		for _, m := range out.Messages {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("replay stopped: %w", err)
			}
			id := m.MessageID
			event, ok := eventOf([]byte(m.Body))
			if !ok {
				res.Skipped++
				res.Problems = append(res.Problems, Problem{MessageID: id, Err: ErrNoEvent})
				continue
			}
			if err := handle(ctx, event); err != nil {
				res.Failed++
				res.Problems = append(res.Problems, Problem{MessageID: id, Err: err})
				if ctx.Err() != nil {
					return res, fmt.Errorf("replay stopped after message %s: %w", id, ctx.Err())
				}
				continue
			}
			if err := q.api.Call(ctx, "DeleteMessage", deleteMessageInput{QueueURL: q.url, ReceiptHandle: m.ReceiptHandle}, nil); err != nil {
				// The event was handled; it will be replayed again, which an idempotent
				// handler makes harmless.
				return res, fmt.Errorf("delete replayed message %s from %s: %w", id, q.url, err)
			}
			res.Replayed++
		}
	}
	return res, nil
}

// seconds converts d to whole seconds for SQS, at least 1: def when d is 0, rounded up, and
// at most limit.
func seconds(d, def, limit time.Duration) int32 {
	if d <= 0 {
		d = def
	}
	d = min(d, limit)
	return int32((d + time.Second - 1) / time.Second)
}
