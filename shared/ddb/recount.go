package ddb

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// RecountTrace recomputes a trace's aggregates from its spans' summaries (and the times given
// through POST /traces) and compares them with the stored ones. It only reads: one GetItem of
// the trace, one Query of its members, a BatchGetItem per 100 spans. errs.CodeNotFound for an
// unknown trace.
func (s *TraceStore) RecountTrace(ctx context.Context, projectID, traceID string) (trace.Recount, error) {
	cur, err := s.aggregateItem(ctx, tracePK(projectID, traceID), skTrace)
	if err != nil {
		return trace.Recount{}, err
	}
	if cur == nil {
		return trace.Recount{}, errs.NotFound("trace %s not found", traceID)
	}
	r := trace.Recount{Stored: totalsOf(aggregateOf(cur, "sc")), LastChange: lastChange(cur)}
	start, end := optMicrosAttr(cur, "xsa"), optMicrosAttr(cur, "xea")
	ids, err := s.TraceSpanIDs(ctx, projectID, traceID)
	if err != nil {
		return r, err
	}
	sums, err := s.Summaries(ctx, projectID, ids)
	if err != nil {
		return r, err
	}
	var cost float64
	for _, sum := range sums {
		r.Computed.Count++
		if sum.HasError {
			r.Computed.Errors++
		}
		if sum.Cost != nil {
			cost += *sum.Cost
		}
		start, end = minPtr(start, micros(sum.StartedAt)), maxPtr(end, optMicros(sum.End()))
		if sum.UpdatedAt.After(r.LastChange) {
			r.LastChange = sum.UpdatedAt
		}
	}
	r.Computed.Cost = bound.Round(cost, bound.CostGrid)
	r.Computed.Start, r.Computed.End = timeOf(start), timeOf(end)
	return r, nil
}

// RecountSession recomputes a session's aggregates from its traces' stored aggregates and
// compares them with the stored ones. It only reads. errs.CodeNotFound for an unknown session.
func (s *TraceStore) RecountSession(ctx context.Context, projectID, sessionID string) (trace.Recount, error) {
	cur, err := s.aggregateItem(ctx, sessionPK(projectID, sessionID), skSession)
	if err != nil {
		return trace.Recount{}, err
	}
	if cur == nil {
		return trace.Recount{}, errs.NotFound("session %s not found", sessionID)
	}
	r := trace.Recount{Stored: totalsOf(aggregateOf(cur, "tc")), LastChange: lastChange(cur)}
	ids, err := s.SessionTraceIDs(ctx, projectID, sessionID)
	if err != nil {
		return r, err
	}
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = key(tracePK(projectID, id), skTrace)
	}
	items, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return r, err
	}
	var cost float64
	var start, end *int64
	r.Computed.Count = len(ids)
	for _, it := range items {
		a := aggregateOf(it, "sc")
		r.Computed.Errors += int(a.errors)
		cost += a.cost
		start, end = minPtr(start, a.start), maxPtr(end, a.end)
		if at := lastChange(it); at.After(r.LastChange) {
			r.LastChange = at
		}
	}
	r.Computed.Cost = bound.Round(cost, bound.CostGrid)
	r.Computed.Start, r.Computed.End = timeOf(start), timeOf(end)
	return r, nil
}

// aggregateItem reads a trace or session item, strongly consistent.
func (s *TraceStore) aggregateItem(ctx context.Context, pk, sk string) (map[string]types.AttributeValue, error) {
	res, err := s.t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name, Key: key(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, storageErr("read "+pk, err)
	}
	return res.Item, nil
}

// lastChange is when an aggregate item last changed: its update time, or the time of the
// newest stream record its consumer applied, whichever is later.
func lastChange(item map[string]types.AttributeValue) time.Time {
	last := timeAttr(item, "ua")
	var marks map[string]markAttr
	if m, ok := item[attrMarks]; ok && attributevalue.Unmarshal(m, &marks) == nil {
		for _, m := range marks {
			if at := time.Unix(m.At, 0); at.After(last) {
				last = at
			}
		}
	}
	return last
}

// FixTrace recounts a trace and, when its stored aggregates differ, writes the recomputed
// ones under its version. Only when nothing of the trace changed for markLife: a change of the
// last 24 hours may still be on its way to the aggregate in the change stream, which would
// then count it a second time. It returns the recount it acted on; errs.CodeUnavailable when the
// trace changed too recently, or kept changing.
func (s *TraceStore) FixTrace(ctx context.Context, projectID, traceID string) (trace.Recount, error) {
	return s.fix(ctx, tracePK(projectID, traceID), skTrace, "sc", func() (trace.Recount, error) {
		return s.RecountTrace(ctx, projectID, traceID)
	})
}

// FixSession is FixTrace for a session, recounted from its traces as stored: fix its traces
// first.
func (s *TraceStore) FixSession(ctx context.Context, projectID, sessionID string) (trace.Recount, error) {
	return s.fix(ctx, sessionPK(projectID, sessionID), skSession, "tc", func() (trace.Recount, error) {
		return s.RecountSession(ctx, projectID, sessionID)
	})
}

func (s *TraceStore) fix(ctx context.Context, pk, sk, countAttr string, recount func() (trace.Recount, error)) (trace.Recount, error) {
	var r trace.Recount
	err := untilWon(ctx, pk, func() (bool, error) {
		var err error
		if r, err = recount(); err != nil || r.Exact() {
			return false, err
		}
		if since := time.Since(r.LastChange); since < markLife {
			return false, errs.Unavailable("%s changed %s ago: the change stream may still be adding that change to its aggregates; a fix is possible once nothing changed for %s",
				pk, since.Round(time.Second), markLife)
		}
		cur, err := s.aggregateItem(ctx, pk, sk)
		if err != nil {
			return false, err
		}
		agg := aggregateOf(cur, countAttr)
		if !agg.exists || !totalsOf(agg).Equal(r.Stored) {
			return true, nil // changed since the recount: count again
		}
		agg.count, agg.errors, agg.cost = int64(r.Computed.Count), int64(r.Computed.Errors), r.Computed.Cost
		agg.start, agg.end = optMicros(r.Computed.Start), optMicros(r.Computed.End)
		up := agg.set(expression.Set(expression.Name("ua"), expression.Value(time.Now().UnixMicro())), countAttr)
		if agg.start == nil {
			up = up.Remove(expression.Name("sa"))
		}
		if agg.end == nil {
			up = up.Remove(expression.Name("ea"))
		}
		return s.updateUnder(ctx, pk, sk, up, agg.guard())
	})
	return r, err
}

func totalsOf(a aggregate) trace.Totals {
	return trace.Totals{
		Count: int(a.count), Errors: int(a.errors), Cost: a.cost, Start: timeOf(a.start), End: timeOf(a.end),
	}
}

func timeOf(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := time.UnixMicro(*us).UTC()
	return &t
}

func optMicrosAttr(item map[string]types.AttributeValue, name string) *int64 {
	if v, ok := intAttr(item, name); ok {
		return &v
	}
	return nil
}
