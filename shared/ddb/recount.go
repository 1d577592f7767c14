package ddb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// Sweep heals every trace and session with a pending delta recorded before before: what
// requests that failed half-way left, and nobody has written since. before must be a time by
// which every request that wrote before it has ended (now less trace.PendingGrace): a span
// change of such a write whose summary is not stored is dropped. It reads the write notes
// recorded before before (notes.go), and the PENDING partitions of GSI2 (eventually consistent:
// a delta applied a moment ago may still be listed, and healing it again finds nothing to do);
// it deletes a note once its traces have no pending delta recorded before before. It returns
// how many traces and sessions it healed; one that fails does not stop the others, and the
// errors are joined.
func (s *TraceStore) Sweep(ctx context.Context, before time.Time) (int, error) {
	seen := map[string]bool{}
	var aggregates []string
	notes, err := s.notesBefore(ctx, before)
	if err != nil {
		return 0, err
	}
	for _, n := range notes {
		for _, id := range n.Traces {
			if pk := tracePK(n.Project, id); !seen[pk] {
				seen[pk] = true
				aggregates = append(aggregates, pk)
			}
		}
	}
	for shard := range pendingShards {
		cond := expression.Key(infra.AttrGSI2PK).Equal(expression.Value(fmt.Sprintf("PENDING#%d", shard))).
			And(expression.Key(infra.AttrGSI2SK).LessThan(expression.Value(timeIndexSK(before, ""))))
		err := s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI2}, func(item map[string]types.AttributeValue) error {
			if pk := strAttr(item, infra.AttrPK); !seen[pk] {
				seen[pk] = true
				aggregates = append(aggregates, pk)
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("list pending deltas: %w", err)
		}
	}
	var failed []error
	healed := 0
	unsettled := map[string]bool{} // traces that failed to heal, or kept deltas from before before
	for _, pk := range aggregates {
		left, err := s.healPK(ctx, pk, before)
		if err != nil {
			failed = append(failed, fmt.Errorf("heal %s: %w", pk, err))
			unsettled[pk] = true
			continue
		}
		unsettled[pk] = left
		healed++
	}
	for _, n := range notes {
		if !slices.ContainsFunc(n.Traces, func(id string) bool { return unsettled[tracePK(n.Project, id)] }) {
			_, err := s.t.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.t.name, Key: key(n.PK, n.SK)})
			if err != nil {
				failed = append(failed, storageErr("delete write note", err))
			}
		}
	}
	return healed, errors.Join(failed...)
}

// healPK heals the trace or session of a partition key (tracePK, sessionPK), taking the
// writes before before as settled. left tells whether a trace keeps pending deltas recorded
// before before.
func (s *TraceStore) healPK(ctx context.Context, pk string, before time.Time) (left bool, err error) {
	rest, ok := strings.CutPrefix(pk, "P#")
	projectID, rest, ok2 := strings.Cut(rest, "#")
	if !ok || !ok2 {
		return false, fmt.Errorf("not an aggregate's key")
	}
	if traceID, ok := strings.CutPrefix(rest, "T#"); ok {
		settled := func(p pendingItem) bool { return p.at().Before(before) }
		h, err := s.healTrace(ctx, projectID, traceID, nil, settled, settled)
		if err != nil || h.Session == "" {
			return h.Left, err
		}
		return h.Left, s.HealSession(ctx, projectID, h.Session)
	}
	if sessionID, ok := strings.CutPrefix(rest, "SE#"); ok {
		return false, s.HealSession(ctx, projectID, sessionID)
	}
	return false, fmt.Errorf("not an aggregate's key")
}

// RecountTrace recomputes a trace's aggregates from its spans' summaries (and the times given
// through POST /traces) and compares them with the stored ones. It only reads: one Query of the
// trace, one of its members, a BatchGetItem per 100 spans. errs.CodeNotFound for an unknown
// trace.
func (s *TraceStore) RecountTrace(ctx context.Context, projectID, traceID string) (trace.Recount, error) {
	cur, pend, err := s.readPending(ctx, tracePK(projectID, traceID), skTrace)
	if err != nil {
		return trace.Recount{}, err
	}
	if cur == nil && len(pend) == 0 {
		return trace.Recount{}, errs.NotFound("trace %s not found", traceID)
	}
	r := trace.Recount{Stored: totalsOf(aggregateOf(cur, "sc")), Pending: len(pend)}
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
	}
	r.Computed.Cost = bound.Round(cost, bound.CostGrid)
	r.Computed.Start, r.Computed.End = timeOf(start), timeOf(end)
	return r, nil
}

// RecountSession recomputes a session's aggregates from its traces' stored aggregates and
// compares them with the stored ones. It only reads. errs.CodeNotFound for an unknown session.
func (s *TraceStore) RecountSession(ctx context.Context, projectID, sessionID string) (trace.Recount, error) {
	cur, pend, err := s.readPending(ctx, sessionPK(projectID, sessionID), skSession)
	if err != nil {
		return trace.Recount{}, err
	}
	if cur == nil && len(pend) == 0 {
		return trace.Recount{}, errs.NotFound("session %s not found", sessionID)
	}
	r := trace.Recount{Stored: totalsOf(aggregateOf(cur, "tc")), Pending: len(pend)}
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
	}
	r.Computed.Cost = bound.Round(cost, bound.CostGrid)
	r.Computed.Start, r.Computed.End = timeOf(start), timeOf(end)
	return r, nil
}

// FixTrace applies the trace's pending deltas, recounts it and, when the stored aggregates
// still differ, writes the recomputed ones: only when no pending delta is left and under the
// version condition, so that neither a concurrent heal nor a write in flight is counted twice.
// It returns the recount it acted on, errs.CodeUnavailable when writes kept coming.
func (s *TraceStore) FixTrace(ctx context.Context, projectID, traceID string) (trace.Recount, error) {
	return s.fix(ctx, tracePK(projectID, traceID), skTrace, "sc", func() (trace.Recount, error) {
		if _, err := s.HealTrace(ctx, projectID, traceID); err != nil {
			return trace.Recount{}, err
		}
		return s.RecountTrace(ctx, projectID, traceID)
	})
}

// FixSession is FixTrace for a session, recounted from its traces as stored: fix its traces
// first.
func (s *TraceStore) FixSession(ctx context.Context, projectID, sessionID string) (trace.Recount, error) {
	return s.fix(ctx, sessionPK(projectID, sessionID), skSession, "tc", func() (trace.Recount, error) {
		if err := s.HealSession(ctx, projectID, sessionID); err != nil {
			return trace.Recount{}, err
		}
		return s.RecountSession(ctx, projectID, sessionID)
	})
}

func (s *TraceStore) fix(ctx context.Context, pk, sk, countAttr string, recount func() (trace.Recount, error)) (trace.Recount, error) {
	var r trace.Recount
	for range maxHealRetries {
		var err error
		r, err = recount()
		if err != nil || r.Exact() {
			return r, err
		}
		// Read again after the recount: a write whose spans the recount saw recorded its
		// pending delta before them, so it is seen here, and the recount is not written over a
		// delta that its heal will still add.
		cur, pend, err := s.readPending(ctx, pk, sk)
		if err != nil {
			return r, err
		}
		agg := aggregateOf(cur, countAttr)
		if len(pend) > 0 || !agg.exists || !totalsOf(agg).Equal(r.Stored) {
			if err := sleep(ctx, backoff(4)); err != nil {
				return r, err
			}
			continue // changed since the recount: heal and count again
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
		action, err := s.updateAction(pk, sk, up, agg.guard())
		if err != nil {
			return r, err
		}
		_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{action}})
		switch {
		case err == nil:
			return r, nil
		case !isContention(err):
			return r, storageErr("write recounted "+sk, err)
		}
	}
	return r, errs.Unavailable("%s is being written, or has pending deltas of requests that may still be running; retry in a few minutes", pk)
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
