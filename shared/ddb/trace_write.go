package ddb

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/trace"
)

// PutSummaries implements trace.Index: one conditional PutItem per summary, in parallel, each
// recording writeID (a UUID). Nothing else is written on the request path: the change
// stream's consumer counts each summary stored into its trace and session (AggregateStore).
func (s *TraceStore) PutSummaries(ctx context.Context, projectID, writeID string, puts []trace.SummaryPut, at time.Time) ([]string, error) {
	if _, err := uuid.Parse(writeID); err != nil {
		return nil, fmt.Errorf("write id %q: %w", writeID, err)
	}
	conflicts := make([]bool, len(puts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(putConcurrency)
	for i, p := range puts {
		g.Go(func() error {
			sum := p.Summary
			sum.WriteID = writeID
			it := toSummaryItem(projectID, sum)
			it.TTL = s.expiry(at)
			item, err := marshal(it)
			if err != nil {
				return err
			}
			in := &dynamodb.PutItemInput{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}
			switch {
			case p.Prev != nil && p.Prev.WriteID != "":
				// Write ids are unique: once the summary is replaced, this put can never land.
				prev, err := binaryID(p.Prev.WriteID)
				if err != nil {
					return err
				}
				in.ConditionExpression = aws.String("w = :prev")
				in.ExpressionAttributeValues = map[string]types.AttributeValue{":prev": &types.AttributeValueMemberB{Value: prev}}
			case p.Prev != nil:
				in.ConditionExpression = aws.String("ua = :prev")
				in.ExpressionAttributeValues = map[string]types.AttributeValue{":prev": num(p.Prev.UpdatedAt.UnixMicro())}
			}
			_, err = s.t.api.PutItem(gctx, in)
			switch {
			case isConditionFailed(err):
				conflicts[i] = true
			case err != nil:
				return storageErr("put span summary", err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []string
	for i, c := range conflicts {
		if c {
			out = append(out, puts[i].Summary.SpanID)
		}
	}
	return out, nil
}

// PutTrace implements trace.Index: the trace item read, then written under its version with
// the fields of t (its extent widened by t's times, its session set when it has none), as the
// change stream's consumer writes the aggregates, so neither overwrites the other. Two
// requests, and a third when the trace is new (the day of its time index).
func (s *TraceStore) PutTrace(ctx context.Context, projectID string, t trace.TracePut) error {
	pk := tracePK(projectID, t.TraceID)
	return untilWon(ctx, "trace "+t.TraceID, func() (bool, error) {
		res, err := s.t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name, Key: key(pk, skTrace), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return false, storageErr("read trace "+t.TraceID, err)
		}
		cur := res.Item
		timed, err := s.timeIndexed(ctx, projectID, trace.IndexTraces)
		if err != nil {
			return false, err
		}
		if timed && cur == nil {
			if err := s.days.note(ctx, projectID, trace.IndexTraces, t.At); err != nil {
				return false, err
			}
		}
		agg := aggregateOf(cur, "sc")
		start, end := micros(t.StartedAt), optMicros(t.EndedAt)
		agg.widen(start, end)
		up := agg.set(expression.Set(expression.Name("ua"), expression.Value(t.At.UnixMicro())), "sc").
			Set(expression.Name("ca"), ifNotExists("ca", t.At.UnixMicro()))
		if timed {
			up = setTimeIndex(up, projectID, trace.IndexTraces, t.At, t.TraceID)
		}
		if agg.session == "" && t.SessionID != "" {
			up = up.Set(expression.Name("ss"), expression.Value(t.SessionID))
		}
		if agg.name == "" && t.Name != "" {
			up = up.Set(expression.Name("n"), expression.Value(t.Name))
		}
		if t.Name != "" {
			up = up.Set(expression.Name("xn"), expression.Value(t.Name))
		}
		if t.Status != "" {
			up = up.Set(expression.Name("xst"), expression.Value(t.Status))
		}
		if t.Cost != nil {
			up = up.Set(expression.Name("ocost"), expression.Value(*t.Cost))
		}
		if t.Attributes != "" {
			up = up.Set(expression.Name("attrs"), expression.Value(t.Attributes))
		}
		if start != nil {
			up = up.Set(expression.Name("xsa"), expression.Value(*start))
		}
		if end != nil {
			up = up.Set(expression.Name("xea"), expression.Value(*end))
		}
		if ttl := s.laterExpiry(cur, t.At); ttl != 0 {
			up = up.Set(expression.Name(infra.AttrTTL), expression.Value(ttl))
		}
		return s.updateUnder(ctx, pk, skTrace, setTags(up, t.Tags), agg.guard())
	})
}

// spanExtent computes a trace's start and end from its spans' summaries and the times given
// through POST /traces: what the stream's consumer uses when a span moved its start later or
// its end earlier. adding are the spans the consumer's update adds, which the trace item may
// list only once it is written.
func (s *TraceStore) spanExtent(ctx context.Context, projectID, traceID string, cur map[string]types.AttributeValue, adding []string) (start, end *int64, err error) {
	start, end = optMicrosAttr(cur, "xsa"), optMicrosAttr(cur, "xea")
	ids, err := s.TraceSpanIDs(ctx, projectID, traceID)
	if err != nil {
		return nil, nil, err
	}
	ids = once(append(ids, adding...))
	sums, err := s.Summaries(ctx, projectID, ids)
	if err != nil {
		return nil, nil, err
	}
	for _, sum := range sums {
		start = minPtr(start, micros(sum.StartedAt))
		end = maxPtr(end, optMicros(sum.End()))
	}
	return start, end, nil
}

// putTraceLink writes a session's item listing a trace in it (T#<trace>), by records of the
// trace from first to last: an upsert of a deterministic key (its creation time kept by
// if_not_exists), so writing it again changes nothing but its expiry, which follows the trace's
// (linkTTL).
// Readers of a session's traces (SessionTraceIDs) may so see a trace a moment before the
// session's trace_count counts it, never the reverse.
func (s *TraceStore) putTraceLink(ctx context.Context, pk, traceID string, first time.Time, ttl int64) error {
	up := expression.Set(expression.Name("ca"), ifNotExists("ca", first.UnixMicro()))
	if ttl != 0 {
		up = up.Set(expression.Name(infra.AttrTTL), expression.Value(ttl))
	}
	expr, err := expression.NewBuilder().WithUpdate(up).Build()
	if err != nil {
		return fmt.Errorf("build update of trace link %s: %w", traceID, err)
	}
	_, err = s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(pk, prefixSessTrace+traceID), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if err != nil {
		return storageErr("put trace link "+traceID, err)
	}
	return nil
}

// binaryID is a UUID as the 16 bytes items keep.
func binaryID(id string) ([]byte, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("id %q: %w", id, err)
	}
	return u[:], nil
}

// idOf is the UUID of 16 bytes, "" when they are not one.
func idOf(b []byte) string {
	u, err := uuid.FromBytes(b)
	if err != nil {
		return ""
	}
	return u.String()
}
