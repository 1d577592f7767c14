package evaluator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/metrics"
)

// objectCreated is an Object Created event of the bucket as EventBridge delivers it
// (source aws.s3, detail-type "Object Created"; the key is not URL-encoded), or, for a
// function subscribed to the bucket directly, an S3 notification (Records; the key is
// URL-encoded, and aws-lambda-go decodes it into URLDecodedKey).
type objectCreated struct {
	Source     string    `json:"source"`
	DetailType string    `json:"detail-type"`
	Time       time.Time `json:"time"`
	Detail     struct {
		Bucket struct {
			Name string `json:"name"`
		} `json:"bucket"`
		Object struct {
			Key  string `json:"key"`
			Size int64  `json:"size"`
		} `json:"object"`
	} `json:"detail"`

	Records []events.S3EventRecord `json:"Records"`
}

// stored is one stored object an event names.
type stored struct {
	key string
	at  time.Time
}

// objects lists the stored objects ev names.
func (ev objectCreated) objects() []stored {
	var out []stored
	if ev.Source == "aws.s3" && ev.DetailType == "Object Created" && ev.Detail.Object.Key != "" {
		out = append(out, stored{ev.Detail.Object.Key, ev.Time})
	}
	for _, rec := range ev.Records {
		if rec.EventSource == "aws:s3" && strings.HasPrefix(rec.EventName, "ObjectCreated:") {
			out = append(out, stored{rec.S3.Object.URLDecodedKey, rec.EventTime})
		}
	}
	return out
}

// ObjectEvent is the event of an object stored under key in bucket at a time, as EventBridge
// delivers the bucket's Object Created events to EvaluatorFunction: plume-local and the tests
// send the same.
func ObjectEvent(bucket, key string, at time.Time) ([]byte, error) {
	return json.Marshal(map[string]any{
		"version": "0", "id": uuid.NewString(), "detail-type": "Object Created", "source": "aws.s3",
		"time": at.UTC().Format(time.RFC3339), "resources": []string{"arn:aws:s3:::" + bucket},
		"detail": map[string]any{
			"version": "0", "bucket": map[string]any{"name": bucket},
			"object": map[string]any{"key": key}, "reason": "PutObject",
		},
	})
}

// Handle runs one invocation: every span batch (spans/), backfill request (backfills/) and
// judge request about an experiment (experiment-judges/) the event names, one after the other, each logged with its Report. Any other event (such as
// the s3:TestEvent a new subscription receives) is logged and ignored. The error joins the
// objects' errors; it wraps ErrRetry when the event should come again.
func (r *Runner) Handle(ctx context.Context, payload []byte) error {
	var ev objectCreated
	if err := json.Unmarshal(payload, &ev); err != nil {
		// Not retried: the same bytes will never decode.
		slog.ErrorContext(ctx, "evaluator: undecodable event, ignored", "error", err, "event", truncate(payload))
		return nil
	}
	objects := ev.objects()
	if len(objects) == 0 {
		slog.InfoContext(ctx, "evaluator: event names no stored object, ignored", "event", truncate(payload))
		return nil
	}
	var failures []error
	for _, o := range objects {
		var (
			rep Report
			err error
		)
		switch {
		case strings.HasPrefix(o.key, judge.BackfillPrefix):
			rep, err = r.backfillObject(ctx, o.key)
		case strings.HasPrefix(o.key, dataset.JudgeRequestPrefix):
			rep, err = r.experimentObject(ctx, o.key)
		default:
			rep, err = r.Batch(ctx, o.key, o.at)
		}
		level := slog.LevelInfo
		if err != nil {
			level = slog.LevelWarn
			failures = append(failures, fmt.Errorf("%s: %w", o.key, err))
		}
		slog.Log(ctx, level, "evaluator: object evaluated", "key", o.key, "report", rep, "error", err)
		if rep.Matched > 0 {
			metrics.Emit(ctx, nil, time.Now(), "", metrics.Count(metrics.Evaluations, rep.Evaluated), metrics.Count(metrics.EvaluationsFailed, rep.Failed),
				metrics.Count(metrics.ModelCalls, rep.ModelCalls), metrics.Amount(metrics.ModelCostUSD, rep.Cost))
		}
	}
	return errors.Join(failures...)
}

// truncate is the start of payload for a log line.
func truncate(payload []byte) string {
	const n = 512
	if len(payload) > n {
		return string(payload[:n]) + "..."
	}
	return string(payload)
}
