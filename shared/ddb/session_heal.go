package ddb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/trace"
)

// toSession is what a trace's heal writes for its session: the session's update itself when
// direct and the session has no pending delta waiting (one transaction does it all), else the
// session's pending delta sp, which HealSession applies.
// It reports whether it wrote the pending delta.
func (s *TraceStore) toSession(ctx context.Context, projectID, sessionID string, sp pendingItem, direct bool) ([]types.TransactWriteItem, bool, error) {
	if direct {
		cur, pend, err := s.readPending(ctx, sessionPK(projectID, sessionID), skSession)
		if err != nil {
			return nil, false, err
		}
		if len(pend) == 0 {
			actions, err := s.sessionActions(ctx, projectID, sessionID, cur, []pendingItem{sp})
			return actions, false, err
		}
	}
	item, err := marshal(sp)
	if err != nil {
		return nil, false, err
	}
	return []types.TransactWriteItem{{Put: &types.Put{TableName: &s.t.name, Item: item}}}, true, nil
}

// HealSession implements trace.Index. Like HealTrace, a heal that keeps losing to concurrent
// healers of the session stops, logs a warning and succeeds, leaving the deltas to the next
// healer.
func (s *TraceStore) HealSession(ctx context.Context, projectID, sessionID string) error {
	err := s.healSession(ctx, projectID, sessionID)
	if lost := (*lostHeals)(nil); errors.As(err, &lost) {
		slog.WarnContext(ctx, "session heal left to the next healer: it kept losing to concurrent heals",
			"project_id", projectID, "session_id", sessionID, "attempts", lost.attempts, "cause", lost.last)
		return nil
	}
	return err
}

// healSession applies the session's pending items; after maxHealRetries lost transactions it
// returns a *lostHeals.
func (s *TraceStore) healSession(ctx context.Context, projectID, sessionID string) error {
	pk := sessionPK(projectID, sessionID)
	for lost := 0; ; {
		cur, pend, err := s.readPending(ctx, pk, skSession)
		if err != nil {
			return err
		}
		if len(pend) == 0 {
			return nil
		}
		more := len(pend) > sessionPendingPerHeal
		pend = pend[:min(len(pend), sessionPendingPerHeal)]
		err = s.applySession(ctx, projectID, sessionID, cur, pend)
		switch {
		case isContention(err):
			if lost++; lost > maxHealRetries {
				return &lostHeals{aggregate: "session " + sessionID, attempts: lost, last: err}
			}
			if err := sleep(ctx, backoff(lost)); err != nil {
				return err
			}
		case err != nil:
			return err
		case !more:
			return nil
		}
	}
}

func (s *TraceStore) applySession(ctx context.Context, projectID, sessionID string, cur map[string]types.AttributeValue, pend []pendingItem) error {
	actions, err := s.sessionActions(ctx, projectID, sessionID, cur, pend)
	if err != nil {
		return err
	}
	actions = append(actions, deletes(s.t.name, pend)...)
	if _, err := s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}); err != nil {
		if isContention(err) {
			return err
		}
		return storageErr("apply pending deltas of session "+sessionID, err)
	}
	return nil
}

// sessionActions are the writes that add deltas to the session read as cur, for the caller's
// transaction: its update, first, under its version condition, and with retention on the
// refresh of its listing of each trace already in it. The listing of each trace that joins it
// is written before, outside the transaction (putTraceLink).
func (s *TraceStore) sessionActions(ctx context.Context, projectID, sessionID string, cur map[string]types.AttributeValue, deltas []pendingItem) ([]types.TransactWriteItem, error) {
	pk := sessionPK(projectID, sessionID)
	first := deltas[0].at()
	if cur == nil {
		if err := s.days.note(ctx, projectID, trace.IndexSessions, first); err != nil {
			return nil, err
		}
	}
	agg := aggregateOf(cur, "tc")
	name := ""
	tags := map[string]string{}
	var traces []string              // the traces of deltas, in order
	joined := map[string]bool{}      // those that join the session with these deltas
	lastOf := map[string]time.Time{} // the latest delta of each
	last := first
	for _, p := range deltas {
		if _, ok := lastOf[p.Trace]; !ok {
			traces = append(traces, p.Trace)
		}
		lastOf[p.Trace] = p.at()
		if p.Joined {
			agg.count++
			joined[p.Trace] = true
		}
		agg.errors += int64(p.Errors)
		agg.cost += p.Cost
		agg.widen(p.Start, p.End)
		name = cmp.Or(p.SessionName, name)
		maps.Copy(tags, p.SessionTags)
		last = p.at()
	}
	if slices.ContainsFunc(deltas, func(p pendingItem) bool { return p.Shrink }) {
		var err error
		if agg.start, agg.end, err = s.sessionExtent(ctx, projectID, sessionID, deltas); err != nil {
			return nil, err
		}
	}
	up := agg.set(expression.Set(expression.Name("ua"), expression.Value(last.UnixMicro())), "tc").
		Set(expression.Name("ca"), ifNotExists("ca", first.UnixMicro())).
		Set(expression.Name(infra.AttrGSI2PK), ifNotExists(infra.AttrGSI2PK, timeIndexPK(projectID, trace.IndexSessions, first, shardOf(sessionID)))).
		Set(expression.Name(infra.AttrGSI2SK), ifNotExists(infra.AttrGSI2SK, timeIndexSK(first, sessionID)))
	if name != "" {
		up = up.Set(expression.Name("n"), expression.Value(name))
	}
	up = setTags(up, tags)
	if ttl := s.laterExpiry(cur, last); ttl != 0 {
		up = up.Set(expression.Name(infra.AttrTTL), expression.Value(ttl))
	}
	update, err := s.updateAction(pk, skSession, up, agg.guard())
	if err != nil {
		return nil, err
	}
	actions := []types.TransactWriteItem{update}
	for _, traceID := range traces {
		switch {
		case traceID == "":
		case joined[traceID]:
			if err := s.putTraceLink(ctx, pk, traceID, first, lastOf[traceID]); err != nil {
				return nil, err
			}
		default:
			refresh, err := s.refreshTraceLink(pk, traceID, first, lastOf[traceID])
			if err != nil {
				return nil, err
			}
			actions = append(actions, refresh...)
		}
	}
	return actions, nil
}

// sessionExtent is a session's start and end recomputed from its traces, for deltas of which
// one narrowed its trace (Shrink: a span of it moved its start later or its end earlier): a
// minimum and a maximum cannot be undone by a difference. Each trace counts with its stored
// extent brought up to date by the deltas, in order: a narrowing delta carries its trace's
// whole extent and replaces it, another widens it (a direct heal stores its trace only with
// the session's update). Cost, only for such deltas: one Query of the session's traces and one
// BatchGetItem per 100 of them.
func (s *TraceStore) sessionExtent(ctx context.Context, projectID, sessionID string, deltas []pendingItem) (start, end *int64, err error) {
	ids, err := s.SessionTraceIDs(ctx, projectID, sessionID)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range deltas {
		if p.Trace != "" && !slices.Contains(ids, p.Trace) {
			ids = append(ids, p.Trace) // joins the session with these deltas
		}
	}
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = key(tracePK(projectID, id), skTrace)
	}
	found, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	type extent struct{ start, end *int64 }
	of := make(map[string]extent, len(ids))
	for i, id := range ids {
		a := aggregateOf(found[keyString(keys[i])], "sc")
		of[id] = extent{a.start, a.end}
	}
	for _, p := range deltas {
		if p.Trace == "" {
			continue
		}
		e := of[p.Trace]
		if p.Shrink {
			e = extent{p.Start, p.End}
		} else {
			e = extent{minPtr(e.start, p.Start), maxPtr(e.end, p.End)}
		}
		of[p.Trace] = e
	}
	for _, e := range of {
		start, end = minPtr(start, e.start), maxPtr(end, e.end)
	}
	return start, end, nil
}

// putTraceLink writes a session's item listing a trace that joins it (T#<trace>), by deltas of
// the trace from first to last.
//
// It is one UpdateItem outside the heal's transaction (one write unit, where a put in the
// transaction costs two), done before that transaction, as the member items are: an upsert of
// a deterministic key (its creation time kept by if_not_exists), so repeating it changes
// nothing, and a heal whose transaction is lost leaves at most a listing of a trace that the
// next heal adds to the session (a trace that names a session always joins it: a listing never
// names a trace of another session). Readers of a session's traces (SessionTraceIDs) may so see
// a trace a moment before the session's trace_count counts it, never the reverse.
func (s *TraceStore) putTraceLink(ctx context.Context, pk, traceID string, first, last time.Time) error {
	up := expression.Set(expression.Name("ca"), ifNotExists("ca", first.UnixMicro()))
	if ttl := s.expiry(last); ttl != 0 {
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

// refreshTraceLink is, with retention on, the refresh of the TTL of a session's listing of a
// trace already in it by later deltas of the trace, so that the listing lives as long as the
// trace: an action of the heal's transaction (an upsert: the trace is in the session either
// way), so retention adds no request. Without retention, nothing.
func (s *TraceStore) refreshTraceLink(pk, traceID string, first, last time.Time) ([]types.TransactWriteItem, error) {
	ttl := s.expiry(last)
	if ttl == 0 {
		return nil, nil
	}
	up := expression.Set(expression.Name("ca"), ifNotExists("ca", first.UnixMicro())).
		Set(expression.Name(infra.AttrTTL), expression.Value(ttl))
	expr, err := expression.NewBuilder().WithUpdate(up).Build()
	if err != nil {
		return nil, fmt.Errorf("build update of trace link %s: %w", traceID, err)
	}
	return []types.TransactWriteItem{{Update: &types.Update{
		TableName: &s.t.name, Key: key(pk, prefixSessTrace+traceID), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}}, nil
}

// HealTraces implements trace.GroupHealer: it heals traces of one request that name one
// session, as HealTrace heals each in turn, but, when it can, in one transaction that updates
// the session once for all of them (a transaction bills the session's update twice, and one
// request often carries the end of one trace of a conversation and the start of the next).
//
// That happens when every trace has pending items that can all be applied now (resolve) and
// share one session with no pending items of its own, in at most 100 items: the traces'
// updates and their pending items' deletions, under the same conditions as a heal of one
// (each trace's version, each item still there), and the session's update under its version.
// Anything else, and a transaction cancelled by a concurrent writer, heals the traces one by
// one (HealTrace), which retries and may route the session's share through its pending items.
// The effects written before the transaction (member items, completions, listings) are those
// of the same items, so the one-by-one heal writes them again without change.
func (s *TraceStore) HealTraces(ctx context.Context, projectID string, traceIDs []string, own ...trace.Written) ([]trace.Healed, error) {
	if len(traceIDs) > 1 {
		out, err := s.healTogether(ctx, projectID, traceIDs, own)
		if out != nil || err != nil {
			return out, err
		}
	}
	out := make([]trace.Healed, len(traceIDs))
	for i, id := range traceIDs {
		h, err := s.HealTrace(ctx, projectID, id, own...)
		if err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, nil
}

// healTogether is HealTraces' one transaction; it returns nil (and no error) when it does not
// apply, for the traces to be healed one by one.
func (s *TraceStore) healTogether(ctx context.Context, projectID string, traceIDs []string, own []trace.Written) ([]trace.Healed, error) {
	grace := time.Now().Add(-trace.PendingGrace)
	isOwn := func(p pendingItem) bool {
		return slices.ContainsFunc(own, func(w trace.Written) bool { return w.WriteID == p.id() })
	}
	settled := func(p pendingItem) bool { return isOwn(p) || p.at().Before(grace) }
	stored := storedBy(own)
	type toApply struct {
		at    int // the trace's index in traceIDs
		cur   map[string]types.AttributeValue
		apply []pendingItem
	}
	var reads []toApply
	out := make([]trace.Healed, len(traceIDs))
	for i, id := range traceIDs {
		cur, pend, err := s.readPending(ctx, tracePK(projectID, id), skTrace)
		if err != nil {
			return nil, err
		}
		if len(pend) == 0 {
			out[i] = trace.Healed{Session: strAttr(cur, "ss")} // as HealTrace answers
			continue
		}
		if len(pend) > tracePendingPerHeal {
			return nil, nil
		}
		writes, err := s.summaryWrites(ctx, projectID, pend, stored)
		if err != nil {
			return nil, err
		}
		apply := resolve(pend, writes, stored, settled)
		if len(apply) != len(pend) || voidOnly(apply) {
			return nil, nil
		}
		reads = append(reads, toApply{i, cur, apply})
	}
	if len(reads) < 2 {
		return nil, nil
	}
	session := ""
	var actions []types.TransactWriteItem
	var deltas []pendingItem
	for _, r := range reads {
		plan, err := s.planTrace(ctx, projectID, traceIDs[r.at], r.cur, r.apply)
		if err != nil {
			return nil, err
		}
		if plan.session == "" || (session != "" && plan.session != session) {
			return nil, nil
		}
		session = plan.session
		actions = append(actions, plan.actions...)
		deltas = append(deltas, plan.toSession)
	}
	cur, pend, err := s.readPending(ctx, sessionPK(projectID, session), skSession)
	if err != nil {
		return nil, err
	}
	if len(pend) > 0 {
		return nil, nil
	}
	slices.SortFunc(deltas, func(a, b pendingItem) int { return cmp.Compare(a.SK, b.SK) })
	more, err := s.sessionActions(ctx, projectID, session, cur, deltas)
	if err != nil {
		return nil, err
	}
	if actions = append(actions, more...); len(actions) > maxTransactActions {
		return nil, nil
	}
	if _, err := s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}); err != nil {
		if isContention(err) {
			return nil, nil
		}
		return nil, storageErr("apply pending deltas of traces of session "+session, err)
	}
	return out, nil
}
