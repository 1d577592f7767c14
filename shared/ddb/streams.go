package ddb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/plumehq/plume/shared/awsjson"
)

// StreamsAPI sends an operation of the DynamoDB Streams API (*awsjson.Client): its JSON
// protocol, spoken by our own client rather than the SDK's, whose endpoint tables every
// function would start with (this package is in every function; the poller in none).
type StreamsAPI interface {
	Call(ctx context.Context, op string, in, out any) error
}

// TableDescriber finds a table's stream.
type TableDescriber interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// NewStreamsClient is a DynamoDB Streams client of cfg, at endpoint when set (DynamoDB Local
// serves both APIs on one port).
func NewStreamsClient(cfg aws.Config, endpoint string) *awsjson.Client {
	c := awsjson.New(cfg, awsjson.DynamoDBStreams)
	if endpoint != "" {
		c = c.WithEndpoint(endpoint)
	}
	return c
}

// StreamPoller reads a table's change stream the way Lambda's event source mapping does for
// RollupFunction, for plume-local and the tests: every shard from its oldest record, a parent
// shard's records before its children's, each batch handed to Apply in order, and a batch
// whose Apply fails handed again (after Retry) until it succeeds, holding its shard back.
type StreamPoller struct {
	DB        TableDescriber
	TableName string
	Streams   StreamsAPI
	Apply     func(ctx context.Context, shard string, records []StreamRecord) error
	// ApplyWindow, when set, is applied instead of Apply, as Lambda applies a consumer with a
	// tumbling window: each batch with the state its shard's previous batch answered, and, once
	// the shard has nothing new or Window has passed since the window's first batch, a last
	// invocation without records (Final) that ends the window. A failed invocation is tried
	// again with the same state.
	ApplyWindow WindowApply
	// Interval is how long a shard with nothing new waits, Retry how long a failed batch;
	// Window is how long a window lasts at most (0: until its shard has nothing new).
	Interval, Retry, Window time.Duration

	windows map[string]*polledWindow // each shard's open window

	arn       string
	iterators map[string]*string // open shards' next iterator; nil once read to their end
	done      map[string]bool
	// discovered is when the shards were last listed; ended is set when a shard was read to
	// its end since (its children, if any, are then listed).
	discovered time.Time
	ended      bool
}

// rediscover is how often the shards are listed again when none ended: a shard's children
// appear once it ends, so this only bounds how long a missed listing could go unnoticed.
const rediscover = 30 * time.Second

// Run polls until ctx ends.
func (p *StreamPoller) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		busy, err := p.Poll(ctx)
		if err != nil && ctx.Err() == nil {
			slog.Warn("stream poller: a poll failed; trying again", "error", err)
		}
		if !busy {
			select {
			case <-ctx.Done():
			case <-time.After(p.Interval):
			}
		}
	}
	return nil
}

// Poll reads what each shard has now and applies it; busy reports that some shard had records
// (there may be more). A failed Apply is its error, the batch to be read again.
func (p *StreamPoller) Poll(ctx context.Context) (busy bool, _ error) {
	if p.arn == "" || p.ended || time.Since(p.discovered) > rediscover {
		if err := p.discover(ctx); err != nil {
			return false, err
		}
		p.discovered, p.ended = time.Now(), false
	}
	for shard, it := range p.iterators {
		if it == nil {
			continue
		}
		var out struct {
			Records           []streamRecordJSON
			NextShardIterator *string
		}
		err := p.Streams.Call(ctx, "GetRecords", map[string]any{"ShardIterator": *it, "Limit": 1000}, &out)
		if err != nil {
			// An expired iterator (DynamoDB Local expires them quickly) starts again after
			// the last record applied, which the rollups' marks make harmless.
			delete(p.iterators, shard)
			p.ended = true // list the shards again, to open it anew
			return busy, fmt.Errorf("read shard %s: %w", shard, err)
		}
		records := make([]StreamRecord, 0, len(out.Records))
		for _, r := range out.Records {
			rec, err := r.record()
			if err != nil {
				return busy, fmt.Errorf("read shard %s: %w", shard, err)
			}
			records = append(records, rec)
		}
		if len(records) > 0 {
			if err := p.apply(ctx, shard, records); err != nil {
				// Read the batch again: keep the iterator it was read with.
				return true, fmt.Errorf("apply %d records of shard %s: %w", len(records), shard, err)
			}
			busy = true
		}
		p.iterators[shard] = out.NextShardIterator
		if out.NextShardIterator == nil {
			p.done[shard], p.ended = true, true
		}
		if w := p.windows[shard]; w != nil && (len(records) == 0 || out.NextShardIterator == nil || (p.Window > 0 && time.Since(w.began) >= p.Window)) {
			if err := p.endWindow(ctx, shard, w); err != nil {
				return true, err
			}
			busy = true
		}
	}
	return busy, nil
}

// WindowApply applies a batch of a shard's records within the shard's tumbling window w, and
// answers the window's state for its next invocation (none after the window's last).
type WindowApply func(ctx context.Context, shard string, records []StreamRecord, w StreamWindow) (map[string]string, error)

// polledWindow is a shard's open tumbling window: the state its last invocation answered.
type polledWindow struct {
	state map[string]string
	began time.Time
}

// apply applies one batch of shard, with its window's state when the consumer has windows.
func (p *StreamPoller) apply(ctx context.Context, shard string, records []StreamRecord) error {
	if p.ApplyWindow == nil {
		return p.Apply(ctx, shard, records)
	}
	w := p.windows[shard]
	if w == nil {
		w = &polledWindow{began: time.Now()}
	}
	state, err := p.ApplyWindow(ctx, shard, records, StreamWindow{State: w.state})
	if err != nil {
		return err
	}
	w.state = state
	if p.windows == nil {
		p.windows = map[string]*polledWindow{}
	}
	p.windows[shard] = w
	return nil
}

// endWindow is the last invocation of shard's window w.
func (p *StreamPoller) endWindow(ctx context.Context, shard string, w *polledWindow) error {
	if _, err := p.ApplyWindow(ctx, shard, nil, StreamWindow{State: w.state, Final: true}); err != nil {
		return fmt.Errorf("end the window of shard %s: %w", shard, err)
	}
	delete(p.windows, shard)
	return nil
}

// Drain polls until two polls in a row find nothing new (a shard may answer one empty page
// before the records that follow it): everything written before the call is applied.
func (p *StreamPoller) Drain(ctx context.Context) error {
	for idle := 0; idle < 2; {
		busy, err := p.Poll(ctx)
		if err != nil {
			return err
		}
		if idle++; busy {
			idle = 0
		}
	}
	return nil
}

// discover finds the stream's shards and opens those whose parent is read.
func (p *StreamPoller) discover(ctx context.Context) error {
	if p.arn == "" {
		out, err := p.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.TableName})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", p.TableName, err)
		}
		if out.Table.LatestStreamArn == nil {
			return errors.New("the table has no stream: create it with infra.CreateTable")
		}
		p.arn = *out.Table.LatestStreamArn
		p.iterators, p.done = map[string]*string{}, map[string]bool{}
	}
	var shards []shard
	for start := ""; ; {
		in := map[string]any{"StreamArn": p.arn}
		if start != "" {
			in["ExclusiveStartShardId"] = start
		}
		var out struct {
			StreamDescription struct {
				Shards               []shard
				LastEvaluatedShardID string `json:"LastEvaluatedShardId"`
			}
		}
		if err := p.Streams.Call(ctx, "DescribeStream", in, &out); err != nil {
			return fmt.Errorf("describe stream: %w", err)
		}
		shards = append(shards, out.StreamDescription.Shards...)
		if start = out.StreamDescription.LastEvaluatedShardID; start == "" {
			break
		}
	}
	for _, sh := range shards {
		if _, open := p.iterators[sh.ID]; open || p.done[sh.ID] {
			continue
		}
		if sh.Parent != "" && !p.done[sh.Parent] && known(shards, sh.Parent) {
			continue // after its parent
		}
		var out struct{ ShardIterator *string }
		in := map[string]any{"StreamArn": p.arn, "ShardId": sh.ID, "ShardIteratorType": "TRIM_HORIZON"}
		if err := p.Streams.Call(ctx, "GetShardIterator", in, &out); err != nil {
			return fmt.Errorf("open shard %s: %w", sh.ID, err)
		}
		p.iterators[sh.ID] = out.ShardIterator
	}
	return nil
}

// shard is a shard of the stream, as DescribeStream lists it.
type shard struct {
	ID     string `json:"ShardId"`
	Parent string `json:"ParentShardId"`
}

func known(shards []shard, id string) bool {
	return slices.ContainsFunc(shards, func(sh shard) bool { return sh.ID == id })
}
