package ddb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// StreamsAPI is the part of the DynamoDB Streams client that PollStream uses.
type StreamsAPI interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// TableDescriber finds a table's stream.
type TableDescriber interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// NewStreamsClient is a DynamoDB Streams client of cfg, at endpoint when set (DynamoDB Local
// serves both APIs on one port).
func NewStreamsClient(cfg aws.Config, endpoint string) *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
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
	// Interval is how long a shard with nothing new waits, Retry how long a failed batch.
	Interval, Retry time.Duration

	arn       string
	iterators map[string]*string // open shards' next iterator; nil once read to their end
	done      map[string]bool
}

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
	if err := p.discover(ctx); err != nil {
		return false, err
	}
	for shard, it := range p.iterators {
		if it == nil {
			continue
		}
		out, err := p.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it, Limit: aws.Int32(1000)})
		if err != nil {
			// An expired iterator (DynamoDB Local expires them quickly) starts again after
			// the last record applied, which the rollups' marks make harmless.
			delete(p.iterators, shard)
			return busy, fmt.Errorf("read shard %s: %w", shard, err)
		}
		records, err := streamRecords(out.Records)
		if err != nil {
			return busy, err
		}
		if len(records) > 0 {
			if err := p.Apply(ctx, shard, records); err != nil {
				// Read the batch again: keep the iterator it was read with.
				return true, fmt.Errorf("apply %d records of shard %s: %w", len(records), shard, err)
			}
			busy = true
		}
		p.iterators[shard] = out.NextShardIterator
		if out.NextShardIterator == nil {
			p.done[shard] = true
		}
	}
	return busy, nil
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
	var shards []streamtypes.Shard
	for start := (*string)(nil); ; {
		out, err := p.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &p.arn, ExclusiveStartShardId: start})
		if err != nil {
			return fmt.Errorf("describe stream: %w", err)
		}
		shards = append(shards, out.StreamDescription.Shards...)
		if start = out.StreamDescription.LastEvaluatedShardId; start == nil {
			break
		}
	}
	for _, sh := range shards {
		id := aws.ToString(sh.ShardId)
		if _, open := p.iterators[id]; open || p.done[id] {
			continue
		}
		if parent := aws.ToString(sh.ParentShardId); parent != "" && !p.done[parent] && known(shards, parent) {
			continue // after its parent
		}
		out, err := p.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &p.arn, ShardId: sh.ShardId,
			ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return fmt.Errorf("open shard %s: %w", id, err)
		}
		p.iterators[id] = out.ShardIterator
	}
	return nil
}

func known(shards []streamtypes.Shard, id string) bool {
	for _, sh := range shards {
		if aws.ToString(sh.ShardId) == id {
			return true
		}
	}
	return false
}

// streamRecords converts the Streams API's records.
func streamRecords(in []streamtypes.Record) ([]StreamRecord, error) {
	out := make([]StreamRecord, 0, len(in))
	for _, r := range in {
		if r.Dynamodb == nil {
			continue
		}
		old, err := attributevalue.FromDynamoDBStreamsMap(r.Dynamodb.OldImage)
		if err != nil {
			return nil, err
		}
		img, err := attributevalue.FromDynamoDBStreamsMap(r.Dynamodb.NewImage)
		if err != nil {
			return nil, err
		}
		if len(old) == 0 {
			old = nil
		}
		if len(img) == 0 {
			img = nil
		}
		out = append(out, StreamRecord{EventName: string(r.EventName), Sequence: aws.ToString(r.Dynamodb.SequenceNumber), Old: old, New: img,
			At: aws.ToTime(r.Dynamodb.ApproximateCreationDateTime).UTC()})
	}
	return out, nil
}
