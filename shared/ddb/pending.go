package ddb

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// Pending deltas: how trace and session aggregates stay exact whatever fails.
//
// A write of spans is one transaction: the span summaries, each under its own condition, and a
// pending item in the trace's partition holding what they add to the trace (counts, cost, start
// and end, root, tags, the new members and completions). So a pending item exists exactly when
// its summaries were stored. Applying it (heal) is a second transaction: the trace item, set to
// its read state plus every pending item's delta under a condition on its version attribute v,
// the deletion of those pending items, and a pending item for the session with what the trace
// adds there. The deletion and the addition commit together, so a delta is added once or not at
// all: a crash, a throttle or a timeout between or inside the two transactions leaves either the
// pending item (applied later by whoever heals the trace next) or nothing. The session's pending
// items are applied the same way. The effects outside the transactions (member and completion
// items, the days of the time indexes) are plain puts of deterministic keys, done before the
// transaction that deletes the pending item, so repeating them is harmless and skipping them is
// impossible.
//
// Who heals: the writing request, right after its writes; any later write of the trace (a
// re-send of the same spans writes nothing but still heals); and the sweeper, which finds
// pending items older than a minute through their entry in the PENDING partitions of GSI2.
//
// A trace that joins a session adds its whole aggregate to the session at that moment (its
// later writes add their deltas), so spans written before the trace named its session are
// counted there too.
const (
	prefixPending = "PEND#"
	// pendingShards spreads the sweeper's index over this many GSI2 partitions.
	pendingShards = 8
	// tracePendingPerHeal is how many pending items one heal of a trace applies: with the trace
	// and the session's pending item, one transaction of 100 items.
	tracePendingPerHeal = 98
	// sessionPendingPerHeal leaves room for one trace link per pending item.
	sessionPendingPerHeal = 49
	// maxHealRetries bounds the heals lost to concurrent healers of the same trace or session.
	maxHealRetries = 8
)

func pendingSK(at time.Time, id string) string {
	return fmt.Sprintf("%s%016d#%s", prefixPending, at.UnixMicro(), id)
}

// pendingGSI2PK is the sweeper's partition of a pending item of the aggregate pk: every
// project's pending items share pendingShards partitions, which hold only what is not applied
// yet (almost always nothing).
func pendingGSI2PK(pk string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(pk))
	return fmt.Sprintf("PENDING#%d", h.Sum32()%pendingShards)
}

// pendingItem is a trace's or a session's pending delta.
type pendingItem struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	GSI2PK string `dynamodbav:"GSI2PK"`
	GSI2SK string `dynamodbav:"GSI2SK"`
	At     int64  `dynamodbav:"at"`
	Spans  int    `dynamodbav:"sc,omitempty"`
	Errors int    `dynamodbav:"ec,omitempty"`
	// Cost is on bound.CostGrid (costSum), as DynamoDB adds it.
	Cost        float64           `dynamodbav:"cost,omitempty"`
	Start       *int64            `dynamodbav:"sa,omitempty"`
	End         *int64            `dynamodbav:"ea,omitempty"`
	Shrink      bool              `dynamodbav:"sh,omitempty"`
	Session     string            `dynamodbav:"ss,omitempty"`
	FirstName   string            `dynamodbav:"fn,omitempty"`
	Root        *rootAttr         `dynamodbav:"root,omitempty"`
	Tags        map[string]string `dynamodbav:"tg,omitempty"`
	SessionName string            `dynamodbav:"sn,omitempty"`
	SessionTags map[string]string `dynamodbav:"stg,omitempty"`
	Members     [][]byte          `dynamodbav:"m,binaryset,omitempty"`
	Completions []completionAttr  `dynamodbav:"pc,omitempty"`
	// Batch names the request's batch of spans, which completions are listed by.
	Batch    string        `dynamodbav:"b,omitempty"`
	Explicit *explicitAttr `dynamodbav:"x,omitempty"`
	// Trace and Joined are set on a session's pending item: the trace it comes from, and
	// whether the trace joined the session with it.
	Trace  string `dynamodbav:"t,omitempty"`
	Joined bool   `dynamodbav:"j,omitempty"`
}

type rootAttr struct {
	SpanID string `dynamodbav:"id"`
	Name   string `dynamodbav:"n"`
	Status string `dynamodbav:"st,omitempty"`
	Input  string `dynamodbav:"i,omitempty"`
	Output string `dynamodbav:"o,omitempty"`
}

// completionAttr is an llm span linked to a prompt: the completion a feedback link lists.
type completionAttr struct {
	Slug string `dynamodbav:"s"`
	Span []byte `dynamodbav:"i"`
}

type explicitAttr struct {
	Name   string   `dynamodbav:"n,omitempty"`
	Status string   `dynamodbav:"st,omitempty"`
	Cost   *float64 `dynamodbav:"c,omitempty"`
	Attrs  string   `dynamodbav:"a,omitempty"`
}

// id is the write id the pending item was recorded under.
func (p pendingItem) id() string {
	rest := strings.TrimPrefix(p.SK, prefixPending)
	if _, id, ok := strings.Cut(rest, "#"); ok {
		return id
	}
	return rest
}

func (p pendingItem) at() time.Time { return time.UnixMicro(p.At).UTC() }

func newPending(pk string, at time.Time, id string) pendingItem {
	return pendingItem{
		PK: pk, SK: pendingSK(at, id), GSI2PK: pendingGSI2PK(pk), GSI2SK: timeIndexSK(at, id), At: at.UnixMicro(),
	}
}

// tracePending is the pending item of a trace write.
func tracePending(projectID, id string, d trace.TraceDelta) (pendingItem, error) {
	p := newPending(tracePK(projectID, d.TraceID), d.At, id)
	p.Spans, p.Errors, p.Cost = d.Spans, d.Errors, costSum(d.Cost)
	p.Start, p.End = micros(d.MinStart), optMicros(d.MaxEnd)
	p.Shrink, p.Session, p.FirstName, p.Batch = d.Shrink, d.SessionID, d.FirstName, d.Batch
	p.Tags, p.SessionName, p.SessionTags = d.Tags, d.SessionName, d.SessionTags
	if r := d.Root; r != nil {
		p.Root = &rootAttr{SpanID: r.SpanID, Name: r.Name, Status: r.Status, Input: r.Input, Output: r.Output}
	}
	if x := d.Explicit; x != nil {
		p.Explicit = &explicitAttr{Name: x.Name, Status: x.Status, Cost: x.Cost, Attrs: x.Attributes}
	}
	var err error
	if p.Members, err = binaryIDs(d.Members); err != nil {
		return p, err
	}
	for _, c := range d.Completions {
		u, err := uuid.Parse(c.SpanID)
		if err != nil {
			continue // only UUID span ids are indexed (the SDKs' and OTLP's all are)
		}
		p.Completions = append(p.Completions, completionAttr{Slug: c.Slug, Span: u[:]})
	}
	return p, nil
}

func binaryIDs(ids []string) ([][]byte, error) {
	out := make([][]byte, 0, len(ids))
	for _, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil {
			return nil, fmt.Errorf("span id %q: %w", id, err)
		}
		out = append(out, u[:])
	}
	return out, nil
}

// WriteTrace implements trace.Index: one TransactWriteItems with the summaries and the pending
// item. Its request token is the write id, so the SDK's retry of a transaction whose answer was
// lost is answered as the first attempt was instead of failing its conditions.
func (s *TraceStore) WriteTrace(ctx context.Context, projectID string, w trace.TraceWrite) ([]string, error) {
	if len(w.Puts) > trace.MaxSpansPerWrite {
		return nil, fmt.Errorf("write %s of trace %s: %d spans, at most %d", w.ID, w.Delta.TraceID, len(w.Puts), trace.MaxSpansPerWrite)
	}
	actions := make([]types.TransactWriteItem, 0, len(w.Puts)+1)
	ids := make([]string, len(w.Puts))
	for i, p := range w.Puts {
		ids[i] = p.Summary.SpanID
		item, err := marshal(toSummaryItem(projectID, p.Summary))
		if err != nil {
			return nil, err
		}
		put := &types.Put{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}
		if p.Prev != nil {
			put.ConditionExpression = aws.String("ua = :prev")
			put.ExpressionAttributeValues = map[string]types.AttributeValue{":prev": num(p.Prev.UnixMicro())}
		}
		actions = append(actions, types.TransactWriteItem{Put: put})
	}
	pending, err := tracePending(projectID, w.ID, w.Delta)
	if err != nil {
		return nil, err
	}
	item, err := marshal(pending)
	if err != nil {
		return nil, err
	}
	actions = append(actions, types.TransactWriteItem{Put: &types.Put{TableName: &s.t.name, Item: item}})
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: actions, ClientRequestToken: aws.String(w.ID),
	})
	switch {
	case isContention(err):
		return ids, nil
	case err != nil:
		return nil, storageErr("write spans of trace "+w.Delta.TraceID, err)
	}
	return nil, nil
}

// readPending reads an aggregate's pending items and the aggregate itself (sk) in one Query:
// in the partition, PEND# sorts after the member items (M#) and before TRACE, and before
// SESSION and the session's trace links (T#).
func (s *TraceStore) readPending(ctx context.Context, pk, sk string) (map[string]types.AttributeValue, []pendingItem, error) {
	cond := partition(pk).And(expression.Key(infra.AttrSK).Between(expression.Value(prefixPending), expression.Value(sk)))
	var cur map[string]types.AttributeValue
	var pend []pendingItem
	err := s.t.query(ctx, cond, queryOpts{}, func(item map[string]types.AttributeValue) error {
		if strAttr(item, infra.AttrSK) == sk {
			cur = item
			return nil
		}
		var p pendingItem
		if err := attributevalue.UnmarshalMap(item, &p); err != nil {
			return fmt.Errorf("decode pending delta: %w", err)
		}
		pend = append(pend, p)
		return nil
	})
	return cur, pend, err
}

// aggregate is the part of a trace or session item that heals compute: the counters and the
// times, read, changed in Go and written back under a condition on the version v.
type aggregate struct {
	exists  bool
	version *int64
	count   int64 // span_count of a trace, trace_count of a session
	errors  int64
	cost    float64
	start   *int64
	end     *int64
	session string
	name    string
}

func aggregateOf(item map[string]types.AttributeValue, countAttr string) aggregate {
	a := aggregate{exists: item != nil}
	if item == nil {
		return a
	}
	if v, ok := intAttr(item, "v"); ok {
		a.version = &v
	}
	a.count, a.errors, a.cost = intOr(item, countAttr), intOr(item, "ec"), floatAttr(item, "cost")
	if v, ok := intAttr(item, "sa"); ok {
		a.start = &v
	}
	if v, ok := intAttr(item, "ea"); ok {
		a.end = &v
	}
	a.session, a.name = strAttr(item, "ss"), strAttr(item, "n")
	return a
}

// guard is the condition of a heal's update: the aggregate is still as read.
func (a aggregate) guard() expression.ConditionBuilder {
	switch {
	case !a.exists:
		return expression.AttributeNotExists(expression.Name(infra.AttrPK))
	case a.version == nil:
		return expression.AttributeExists(expression.Name(infra.AttrPK)).And(expression.AttributeNotExists(expression.Name("v")))
	default:
		return expression.Name("v").Equal(expression.Value(*a.version))
	}
}

// set writes the counters, times and next version.
func (a aggregate) set(up expression.UpdateBuilder, countAttr string) expression.UpdateBuilder {
	next := int64(1)
	if a.version != nil {
		next = *a.version + 1
	}
	up = up.Set(expression.Name("v"), expression.Value(next)).
		Set(expression.Name(countAttr), expression.Value(a.count)).
		Set(expression.Name("ec"), expression.Value(a.errors)).
		Set(expression.Name("cost"), expression.Value(costSum(a.cost)))
	if a.start != nil {
		up = up.Set(expression.Name("sa"), expression.Value(*a.start))
	}
	if a.end != nil {
		up = up.Set(expression.Name("ea"), expression.Value(*a.end))
	}
	return up
}

func (a *aggregate) widen(start, end *int64) {
	if start != nil && (a.start == nil || *start < *a.start) {
		a.start = start
	}
	if end != nil && (a.end == nil || *end > *a.end) {
		a.end = end
	}
}

// HealTrace implements trace.Index.
func (s *TraceStore) HealTrace(ctx context.Context, projectID, traceID string) (string, error) {
	pk := tracePK(projectID, traceID)
	for lost := 0; ; {
		cur, pend, err := s.readPending(ctx, pk, skTrace)
		if err != nil {
			return "", err
		}
		if len(pend) == 0 {
			return strAttr(cur, "ss"), nil
		}
		more := len(pend) > tracePendingPerHeal
		pend = pend[:min(len(pend), tracePendingPerHeal)]
		sessionID, err := s.applyTrace(ctx, projectID, traceID, cur, pend)
		switch {
		case isContention(err):
			if lost++; lost > maxHealRetries {
				return "", errs.Unavailable("trace %s is being written by many requests at once; retry", traceID)
			}
			if err := sleep(ctx, backoff(lost)); err != nil {
				return "", err
			}
		case err != nil:
			return "", err
		case !more:
			return sessionID, nil
		}
	}
}

// applyTrace applies pend to the trace read as cur: the idempotent effects first, then one
// transaction. It returns the trace's session.
func (s *TraceStore) applyTrace(ctx context.Context, projectID, traceID string, cur map[string]types.AttributeValue, pend []pendingItem) (string, error) {
	pk := tracePK(projectID, traceID)
	first := pend[0].at()
	if cur == nil {
		if err := s.days.note(ctx, projectID, trace.IndexTraces, first); err != nil {
			return "", err
		}
	}
	if err := s.putSideItems(ctx, projectID, traceID, pend); err != nil {
		return "", err
	}

	agg := aggregateOf(cur, "sc")
	was := agg.session
	var toSession pendingItem // what the pending items add to the session
	var shrink bool
	var root *rootAttr
	var x explicitAttr
	var xStart, xEnd *int64
	tags := map[string]string{}
	sessionTags := map[string]string{}
	last := first
	for _, p := range pend {
		agg.count += int64(p.Spans)
		agg.errors += int64(p.Errors)
		agg.cost += p.Cost
		agg.widen(p.Start, p.End)
		toSession.Errors += p.Errors
		toSession.Cost += p.Cost
		toSession.Start, toSession.End = minPtr(toSession.Start, p.Start), maxPtr(toSession.End, p.End)
		shrink = shrink || p.Shrink
		if agg.session == "" {
			agg.session = p.Session
		}
		if p.Root != nil {
			root = p.Root
		}
		if agg.name == "" {
			agg.name = p.FirstName
		}
		maps.Copy(tags, p.Tags)
		maps.Copy(sessionTags, p.SessionTags)
		if p.SessionName != "" {
			toSession.SessionName = p.SessionName
		}
		if e := p.Explicit; e != nil {
			x.Name, x.Status, x.Attrs = cmp.Or(e.Name, x.Name), cmp.Or(e.Status, x.Status), cmp.Or(e.Attrs, x.Attrs)
			if e.Cost != nil {
				x.Cost = e.Cost
			}
			xStart, xEnd = p.Start, p.End
		}
		last = p.at()
	}
	if shrink {
		start, end, err := s.spanExtent(ctx, projectID, traceID, cur, xStart, xEnd)
		if err != nil {
			return "", err
		}
		agg.start, agg.end = start, end
	}

	up := agg.set(expression.Set(expression.Name("ua"), expression.Value(last.UnixMicro())), "sc").
		Set(expression.Name("ca"), ifNotExists("ca", first.UnixMicro())).
		Set(expression.Name(infra.AttrGSI2PK), ifNotExists(infra.AttrGSI2PK, timeIndexPK(projectID, trace.IndexTraces, first, shardOf(traceID)))).
		Set(expression.Name(infra.AttrGSI2SK), ifNotExists(infra.AttrGSI2SK, timeIndexSK(first, traceID)))
	if agg.session != "" {
		up = up.Set(expression.Name("ss"), expression.Value(agg.session))
	}
	if root != nil {
		up = up.Set(expression.Name("n"), expression.Value(root.Name)).
			Set(expression.Name("root"), expression.Value(root.SpanID)).
			Set(expression.Name("rst"), expression.Value(root.Status)).
			Set(expression.Name("ri"), expression.Value(root.Input)).
			Set(expression.Name("ro"), expression.Value(root.Output))
	} else if agg.name != "" {
		up = up.Set(expression.Name("n"), expression.Value(agg.name))
	}
	if x.Name != "" {
		up = up.Set(expression.Name("xn"), expression.Value(x.Name))
	}
	if x.Status != "" {
		up = up.Set(expression.Name("xst"), expression.Value(x.Status))
	}
	if x.Cost != nil {
		up = up.Set(expression.Name("ocost"), expression.Value(*x.Cost))
	}
	if x.Attrs != "" {
		up = up.Set(expression.Name("attrs"), expression.Value(x.Attrs))
	}
	if xStart != nil {
		up = up.Set(expression.Name("xsa"), expression.Value(*xStart))
	}
	if xEnd != nil {
		up = up.Set(expression.Name("xea"), expression.Value(*xEnd))
	}
	up = setTags(up, tags)
	update, err := s.updateAction(pk, skTrace, up, agg.guard())
	if err != nil {
		return "", err
	}
	actions := append(make([]types.TransactWriteItem, 0, len(pend)+2), update)
	actions = append(actions, deletes(s.t.name, pend)...)
	if agg.session != "" {
		toSession.Trace = traceID
		toSession.SessionTags = sessionTags
		if was == "" {
			// The trace joins its session now: the session gets the whole trace, spans written
			// before the trace named its session included.
			toSession.Joined = true
			toSession.Errors, toSession.Cost = int(agg.errors), agg.cost
			toSession.Start, toSession.End = agg.start, agg.end
		}
		sp := newPending(sessionPK(projectID, agg.session), last, uuid.Must(uuid.NewV7()).String())
		sp.Trace, sp.Joined, sp.Errors, sp.Cost = toSession.Trace, toSession.Joined, toSession.Errors, costSum(toSession.Cost)
		sp.Start, sp.End, sp.SessionName, sp.SessionTags = toSession.Start, toSession.End, toSession.SessionName, toSession.SessionTags
		item, err := marshal(sp)
		if err != nil {
			return "", err
		}
		actions = append(actions, types.TransactWriteItem{Put: &types.Put{TableName: &s.t.name, Item: item}})
	}
	if _, err := s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}); err != nil {
		if isContention(err) {
			return "", err
		}
		return "", storageErr("apply pending deltas of trace "+traceID, err)
	}
	return agg.session, nil
}

// putSideItems writes what pending trace items add besides the trace's aggregate: the member
// items listing new spans (and their time-index day) and the completions of prompts. Keys are
// derived from the pending item, so writing them again changes nothing.
func (s *TraceStore) putSideItems(ctx context.Context, projectID, traceID string, pend []pendingItem) error {
	for _, p := range pend {
		at, id := p.at(), p.id()
		if len(p.Members) > 0 {
			if err := s.days.note(ctx, projectID, trace.IndexSpans, at); err != nil {
				return err
			}
			item, err := marshal(memberItem{
				PK: tracePK(projectID, traceID), SK: memberSK(at, id),
				GSI2PK: timeIndexPK(projectID, trace.IndexSpans, at, shardOf(traceID)), GSI2SK: timeIndexSK(at, traceID+"#"+id),
				Spans: p.Members,
			})
			if err != nil {
				return err
			}
			if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}); err != nil {
				return storageErr("put trace members", err)
			}
		}
	}
	// One item per batch and prompt, as every write of the batch adds its spans to it: a set
	// union, which repeating changes nothing.
	type slugBatch struct{ slug, batch string }
	added := map[slugBatch][][]byte{}
	at := map[slugBatch]time.Time{}
	for _, p := range pend {
		for _, c := range p.Completions {
			k := slugBatch{c.Slug, p.Batch}
			added[k] = append(added[k], c.Span)
			at[k] = p.at()
		}
	}
	for k, spans := range added {
		_, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &s.t.name, Key: key(completionsPK(projectID, k.slug), timeIndexSK(at[k], k.batch)),
			UpdateExpression:          aws.String("ADD s :spans"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":spans": &types.AttributeValueMemberBS{Value: spans}},
		})
		if err != nil {
			return storageErr("add completions", err)
		}
	}
	return nil
}

// spanExtent computes a trace's start and end from its spans' summaries and the times given
// through POST /traces: what a heal uses when a span moved its start later or its end earlier.
func (s *TraceStore) spanExtent(ctx context.Context, projectID, traceID string, cur map[string]types.AttributeValue, xStart, xEnd *int64) (start, end *int64, err error) {
	if xStart == nil {
		if v, ok := intAttr(cur, "xsa"); ok {
			xStart = &v
		}
	}
	if xEnd == nil {
		if v, ok := intAttr(cur, "xea"); ok {
			xEnd = &v
		}
	}
	start, end = xStart, xEnd
	ids, err := s.TraceSpanIDs(ctx, projectID, traceID)
	if err != nil {
		return nil, nil, err
	}
	sums, err := s.Summaries(ctx, projectID, ids)
	if err != nil {
		return nil, nil, err
	}
	for _, sum := range sums {
		start = minPtr(start, micros(sum.StartedAt))
		end = maxPtr(end, optMicros(summaryEnd(sum)))
	}
	return start, end, nil
}

// summaryEnd is a span's end: ended_at, else started_at plus duration_ms, else nil.
func summaryEnd(sum trace.Summary) *time.Time {
	if sum.EndedAt != nil {
		return sum.EndedAt
	}
	if sum.DurationMS != nil {
		t := sum.StartedAt.Add(time.Duration(*sum.DurationMS * float64(time.Millisecond)))
		return &t
	}
	return nil
}

// HealSession implements trace.Index.
func (s *TraceStore) HealSession(ctx context.Context, projectID, sessionID string) error {
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
				return errs.Unavailable("session %s is being written by many requests at once; retry", sessionID)
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
	pk := sessionPK(projectID, sessionID)
	first := pend[0].at()
	if cur == nil {
		if err := s.days.note(ctx, projectID, trace.IndexSessions, first); err != nil {
			return err
		}
	}
	agg := aggregateOf(cur, "tc")
	name := ""
	tags := map[string]string{}
	var joined []string
	last := first
	for _, p := range pend {
		if p.Joined {
			agg.count++
			joined = append(joined, p.Trace)
		}
		agg.errors += int64(p.Errors)
		agg.cost += p.Cost
		agg.widen(p.Start, p.End)
		name = cmp.Or(p.SessionName, name)
		maps.Copy(tags, p.SessionTags)
		last = p.at()
	}
	up := agg.set(expression.Set(expression.Name("ua"), expression.Value(last.UnixMicro())), "tc").
		Set(expression.Name("ca"), ifNotExists("ca", first.UnixMicro())).
		Set(expression.Name(infra.AttrGSI2PK), ifNotExists(infra.AttrGSI2PK, timeIndexPK(projectID, trace.IndexSessions, first, shardOf(sessionID)))).
		Set(expression.Name(infra.AttrGSI2SK), ifNotExists(infra.AttrGSI2SK, timeIndexSK(first, sessionID)))
	if name != "" {
		up = up.Set(expression.Name("n"), expression.Value(name))
	}
	up = setTags(up, tags)
	update, err := s.updateAction(pk, skSession, up, agg.guard())
	if err != nil {
		return err
	}
	actions := append(make([]types.TransactWriteItem, 0, len(pend)+len(joined)+1), update)
	actions = append(actions, deletes(s.t.name, pend)...)
	for _, traceID := range joined {
		item, err := marshal(map[string]any{infra.AttrPK: pk, infra.AttrSK: prefixSessTrace + traceID, "ca": first.UnixMicro()})
		if err != nil {
			return err
		}
		actions = append(actions, types.TransactWriteItem{Put: &types.Put{TableName: &s.t.name, Item: item}})
	}
	if _, err := s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}); err != nil {
		if isContention(err) {
			return err
		}
		return storageErr("apply pending deltas of session "+sessionID, err)
	}
	return nil
}

// updateAction is a transaction's conditional UpdateItem.
func (s *TraceStore) updateAction(pk, sk string, up expression.UpdateBuilder, cond expression.ConditionBuilder) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithUpdate(up).WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build update of %s: %w", sk, err)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: &s.t.name, Key: key(pk, sk), UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// deletes are the deletions of applied pending items; each must still exist, so a delta that
// another heal applied first cancels the transaction instead of being added twice.
func deletes(table string, pend []pendingItem) []types.TransactWriteItem {
	out := make([]types.TransactWriteItem, len(pend))
	for i, p := range pend {
		out[i] = types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(table), Key: key(p.PK, p.SK), ConditionExpression: aws.String("attribute_exists(PK)"),
		}}
	}
	return out
}

func micros(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.UnixMicro()
	return &v
}

func optMicros(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	return micros(*t)
}

func minPtr(a, b *int64) *int64 {
	if a == nil || (b != nil && *b < *a) {
		return b
	}
	return a
}

func maxPtr(a, b *int64) *int64 {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}
