package ddb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// Pending deltas: how trace and session aggregates stay exact whatever fails.
//
// A write of spans (WriteTrace) first puts a pending item in the trace's partition: the change
// each span makes to the trace's counts (new or not, errors, cost, the write it replaces), and
// what the write adds otherwise (start and end, root, tags, session). Then it puts the spans'
// summaries, each recording the write's id. Applying pending items (a heal) is one
// transaction: the trace item, set to its read state plus the deltas under a condition on its
// version attribute v, the deletion of the applied pending items (each must still exist), and
// what the trace adds to its session: the session item itself, likewise set under its version
// condition, or, when another trace's heal changed the session first (or the session has
// pending items waiting), a pending item for the session, which HealSession applies the same
// way. The deletion and the addition commit together, so a delta is added once or not at all.
//
// A span change counts only if its summary was stored (resolve.go states the rules precisely):
// the span's summary was written by that write, or by a later write whose own change replaced
// it (a chain through the pending items' "replaces" links). A change whose summary is not
// stored is dropped when its put can never take effect (it was conditioned on a version that
// is gone: the span now exists, or its write id moved on, as after a re-send stored it), or
// when its write is settled, that is its request no longer puts summaries: the healer's own
// writes, or writes older than trace.PendingGrace. Until then the item waits, and so does any
// item whose counted change replaced one of a waiting item. So a crash, a throttle or a
// timeout between or inside any of these requests leaves either pending items that a later
// heal decides, or nothing, and no order of failures counts a change twice or counts a span that
// was not stored. Only the pending item is written before the summaries, so the summaries
// cost one write unit each, as before pending deltas; what exactness costs is the pending
// item and the heal's transaction, per trace and batch.
//
// The effects outside the transactions (member and completion items, a session's listings of
// the traces that join it, the days of the time indexes) are puts of deterministic keys or set
// additions, done before the transaction that deletes the pending item, so repeating them is
// harmless and skipping them is impossible.
//
// Who heals: the writing request, right after its writes; any later write of the trace (a
// re-send of the same spans writes nothing but still heals); and the sweeper, which finds
// pending items through the write notes a failed span request leaves (notes.go), or, for the
// rest (POST /traces, a session's), their entry in the PENDING partitions of GSI2. Concurrent writers of
// one trace (a hot trace) contend for its heal: each lost transaction is tried again after a
// jittered backoff, a writer whose own items the winner applied stops there, and one that
// still loses after maxHealRetries leaves its items to the next healer and succeeds (its spans
// are stored; the items are what makes their counts safe to leave for later).
//
// A trace that joins a session adds its whole aggregate to the session at that moment (its
// later writes add their deltas), so spans written before the trace named its session are
// counted there too.
//
// Beside this file: resolve.go decides which changes a heal counts, session_heal.go applies a
// session's pending items, aggregate.go is what both heals read, change and write back.
const (
	prefixPending = "PEND#"
	// pendingShards spreads the sweeper's index over this many GSI2 partitions.
	pendingShards = 8
	// tracePendingPerHeal is how many pending items one heal of a trace applies: with the trace,
	// the session and its listing of the trace, one transaction of 100 items.
	tracePendingPerHeal = 97
	// sessionPendingPerHeal leaves room for one trace link per pending item (with retention on,
	// the refresh of a listing is in the transaction).
	sessionPendingPerHeal = 49
	// maxHealRetries bounds the heals lost to concurrent healers of the same trace or session
	// by one call, with backoff between them (well under a second in all).
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
	GSI2PK string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK string `dynamodbav:"GSI2SK,omitempty"`
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
	// Entries are the span changes of a trace write, each counted only if its summary was
	// stored (resolve); Members and Completions are what the counted ones list.
	Entries     []entryAttr      `dynamodbav:"es,omitempty"`
	Members     [][]byte         `dynamodbav:"-"`
	Completions []completionAttr `dynamodbav:"-"`
	// void marks an item resolve found to add nothing.
	void bool
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

// entryAttr is a trace.SpanChange.
type entryAttr struct {
	Span   []byte  `dynamodbav:"i"`
	Prev   []byte  `dynamodbav:"p,omitempty"`
	New    bool    `dynamodbav:"n,omitempty"`
	Errors int     `dynamodbav:"e,omitempty"`
	Cost   float64 `dynamodbav:"c,omitempty"`
	Slug   string  `dynamodbav:"g,omitempty"`
}

// completionAttr is an llm span linked to a prompt: the completion a feedback link lists.
type completionAttr struct {
	Slug string
	Span []byte
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

// tracePending is the pending item of a trace write; a noted write's (trace.WriteNote) has no
// entry in the PENDING partitions: the sweeper finds it through the note.
func tracePending(projectID, id string, d trace.TraceDelta, noted bool) (pendingItem, error) {
	p := newPending(tracePK(projectID, d.TraceID), d.At, id)
	if noted {
		p.GSI2PK, p.GSI2SK = "", ""
	}
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
	for _, c := range d.Changes {
		e := entryAttr{New: c.New, Errors: c.Errors, Cost: costSum(c.Cost), Slug: c.Completion}
		var err error
		if e.Span, err = binaryID(c.SpanID); err != nil {
			return p, err
		}
		if c.Prev != "" {
			if e.Prev, err = binaryID(c.Prev); err != nil {
				return p, err
			}
		}
		p.Entries = append(p.Entries, e)
	}
	return p, nil
}

func binaryID(id string) ([]byte, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("id %q: %w", id, err)
	}
	return u[:], nil
}

func idOf(b []byte) string {
	u, err := uuid.FromBytes(b)
	if err != nil {
		return ""
	}
	return u.String()
}

// WriteTrace implements trace.Index: one PutItem of the pending item, then one conditional
// PutItem per summary, in parallel, each recording the write's id. Nothing is transactional:
// a heal counts a span change only when it sees its summary (resolve).
func (s *TraceStore) WriteTrace(ctx context.Context, projectID string, w trace.TraceWrite) ([]string, error) {
	if len(w.Puts) > trace.MaxSpansPerWrite {
		return nil, fmt.Errorf("write %s of trace %s: %d spans, at most %d", w.ID, w.Delta.TraceID, len(w.Puts), trace.MaxSpansPerWrite)
	}
	if _, err := uuid.Parse(w.ID); err != nil {
		return nil, fmt.Errorf("write id %q: %w", w.ID, err)
	}
	pending, err := tracePending(projectID, w.ID, w.Delta, w.Noted)
	if err != nil {
		return nil, err
	}
	item, err := marshal(pending)
	if err != nil {
		return nil, err
	}
	if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}); err != nil {
		return nil, storageErr("put pending delta of trace "+w.Delta.TraceID, err)
	}
	conflicts := make([]bool, len(w.Puts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(putConcurrency)
	for i, p := range w.Puts {
		g.Go(func() error {
			sum := p.Summary
			sum.WriteID = w.ID
			it := toSummaryItem(projectID, sum)
			it.TTL = s.expiry(w.Delta.At)
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
			out = append(out, w.Puts[i].Summary.SpanID)
		}
	}
	return out, nil
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

// HealTrace implements trace.Index. A heal that keeps losing to concurrent healers of the
// trace (a hot trace: many requests writing it at once) stops after maxHealRetries, logs a
// warning and succeeds: it leaves the pending deltas, its own writes' included, to the next
// healer (a later write of the trace, or the sweeper), which adds each once. The caller's spans
// are stored; only their counts in the aggregates are late.
func (s *TraceStore) HealTrace(ctx context.Context, projectID, traceID string, own ...trace.Written) (trace.Healed, error) {
	grace := time.Now().Add(-trace.PendingGrace)
	isOwn := func(p pendingItem) bool {
		return slices.ContainsFunc(own, func(w trace.Written) bool { return w.WriteID == p.id() })
	}
	h, err := s.healTrace(ctx, projectID, traceID, own, func(p pendingItem) bool { return isOwn(p) || p.at().Before(grace) }, isOwn)
	if lost := (*lostHeals)(nil); errors.As(err, &lost) {
		slog.WarnContext(ctx, "trace heal left to the next healer: it kept losing to concurrent heals",
			"project_id", projectID, "trace_id", traceID, "attempts", lost.attempts, "cause", lost.last)
		return trace.Healed{Session: lost.session, Left: len(own) > 0}, nil
	}
	return h, err
}

// lostHeals is the error of a heal whose transaction lost maxHealRetries+1 times to concurrent
// healers of the same aggregate. The lost transactions took no effect: the pending deltas they
// tried to apply are still there for the next heal.
type lostHeals struct {
	aggregate string // "trace <id>", "session <id>"
	attempts  int
	last      error // the last transaction's cancellation
	session   string
}

func (e *lostHeals) Error() string {
	return fmt.Sprintf("heal of %s lost %d times to concurrent heals, the last: %v", e.aggregate, e.attempts, e.last)
}

// Unwrap gives the error its client code (503) for the caller that reports it rather than
// leaving the deltas to the next heal (the sweeper's heal of a trace), and keeps the cause.
func (e *lostHeals) Unwrap() []error {
	return []error{errs.Unavailable("%s is being written by many requests at once; retry", e.aggregate), e.last}
}

// healTrace applies the trace's pending items that resolve decides; settled tells whether a
// pending item's writer is done putting summaries. After maxHealRetries lost transactions it
// returns a *lostHeals; own's caller stops sooner, as soon as a concurrent heal has applied all
// of own (the rest is not its to wait for). Healed.Left tells whether items of watched remain.
func (s *TraceStore) healTrace(ctx context.Context, projectID, traceID string, own []trace.Written, settled, watched func(pendingItem) bool) (trace.Healed, error) {
	pk := tracePK(projectID, traceID)
	direct := true // update the session in the trace's transaction, until that contends
	toHeal := ""   // the session, once a heal gave it a pending delta
	isOwn := func(p pendingItem) bool {
		return slices.ContainsFunc(own, func(w trace.Written) bool { return w.WriteID == p.id() })
	}
	for lost := 0; ; {
		cur, pend, err := s.readPending(ctx, pk, skTrace)
		if err != nil {
			return trace.Healed{}, err
		}
		if len(pend) == 0 {
			return trace.Healed{Session: strAttr(cur, "ss")}, nil // a failed request may have left the session a delta
		}
		if lost > 0 && len(own) > 0 && !slices.ContainsFunc(pend, isOwn) {
			// The heal that won applied the caller's writes: the rest is other writers' to heal
			// (or the sweeper's), and one fewer healer contends for the trace.
			return trace.Healed{Session: cmp.Or(toHeal, strAttr(cur, "ss"))}, nil
		}
		all := pend
		// left tells whether a watched item stays pending once applied are.
		left := func(applied []pendingItem) bool {
			return slices.ContainsFunc(all, func(p pendingItem) bool {
				return watched(p) && !slices.ContainsFunc(applied, func(a pendingItem) bool { return a.SK == p.SK })
			})
		}
		more := len(pend) > tracePendingPerHeal
		pend = pend[:min(len(pend), tracePendingPerHeal)]
		stored := storedBy(own)
		writes, err := s.summaryWrites(ctx, projectID, pend, stored)
		if err != nil {
			return trace.Healed{}, err
		}
		apply := resolve(pend, writes, stored, settled)
		if len(apply) == 0 {
			// Nothing decidable yet: the writers or the sweeper will.
			return trace.Healed{Session: strAttr(cur, "ss"), Left: left(nil)}, nil
		}
		sessionID, err := s.applyTrace(ctx, projectID, traceID, cur, apply, direct)
		switch {
		case errors.Is(err, errSessionContended):
			direct = false
		case isContention(err):
			if lost++; lost > maxHealRetries {
				return trace.Healed{}, &lostHeals{aggregate: "trace " + traceID, attempts: lost, last: err, session: cmp.Or(toHeal, strAttr(cur, "ss"))}
			}
			if err := sleep(ctx, backoff(lost)); err != nil {
				return trace.Healed{}, err
			}
		case err != nil:
			return trace.Healed{}, err
		default:
			toHeal = cmp.Or(toHeal, sessionID)
			if !more || len(apply) < len(pend) {
				// The rest, if any, waits for its writers or the sweeper.
				return trace.Healed{Session: toHeal, Left: left(apply)}, nil
			}
		}
	}
}

// storedBy lists the changes whose summary put their own writer saw succeed.
func storedBy(own []trace.Written) map[change]bool {
	out := map[change]bool{}
	for _, w := range own {
		for _, span := range w.Stored {
			out[change{w.WriteID, span}] = true
		}
	}
	return out
}

// summaryWrites reads the write id each span of the pending items' changes was last stored by
// ("" for a span without summary, or one stored before summaries recorded their write), except
// spans whose change is known stored: a request that heals only its own writes, all of whose
// puts succeeded, reads nothing.
func (s *TraceStore) summaryWrites(ctx context.Context, projectID string, pend []pendingItem, stored map[change]bool) (map[string]string, error) {
	seen := map[string]bool{}
	var ids []string
	for _, p := range pend {
		for _, e := range p.Entries {
			if id := idOf(e.Span); !seen[id] && !stored[change{p.id(), id}] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	sums, err := s.Summaries(ctx, projectID, ids)
	if err != nil {
		return nil, err
	}
	for id, sum := range sums {
		out[id] = sum.WriteID
	}
	return out, nil
}

// applyTrace applies pend to the trace read as cur: the idempotent effects first, then one
// transaction. It returns the trace's session when it gave it a pending delta (for HealSession).
func (s *TraceStore) applyTrace(ctx context.Context, projectID, traceID string, cur map[string]types.AttributeValue, pend []pendingItem, direct bool) (string, error) {
	if voidOnly(pend) {
		// Only writes none of whose spans was stored (as a re-send's first round, whose spans
		// all existed): there is nothing to add, and no trace to make. The trace's session is
		// returned to be healed, as a heal without pending items does. A void item is void for
		// every healer (its changes are dead or settled uncounted: resolve), so plain deletes
		// suffice: deleting it twice, or after a concurrent heal did, changes nothing.
		for _, p := range pend {
			_, err := s.t.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.t.name, Key: key(p.PK, p.SK)})
			if err != nil {
				return "", storageErr("delete void pending delta of trace "+traceID, err)
			}
		}
		return strAttr(cur, "ss"), nil
	}
	plan, err := s.planTrace(ctx, projectID, traceID, cur, pend)
	if err != nil {
		return "", err
	}
	actions := plan.actions
	sessionAt := -1 // the index of the session's update or pending delta in actions
	toHeal := ""    // the session, when it got a pending delta
	if plan.session != "" {
		more, viaPending, err := s.toSession(ctx, projectID, plan.session, plan.toSession, direct)
		if err != nil {
			return "", err
		}
		sessionAt = len(actions)
		actions = append(actions, more...)
		if viaPending {
			toHeal = plan.session
		}
	}
	if _, err := s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}); err != nil {
		if codes := cancellationCodes(err); sessionAt >= 0 && sessionAt < len(codes) && direct &&
			(codes[sessionAt] == "ConditionalCheckFailed" || codes[sessionAt] == "TransactionConflict") {
			return "", errSessionContended
		}
		if isContention(err) {
			return "", err
		}
		return "", storageErr("apply pending deltas of trace "+traceID, err)
	}
	return toHeal, nil
}

// voidOnly reports whether no item of pend adds anything.
func voidOnly(pend []pendingItem) bool {
	return !slices.ContainsFunc(pend, func(p pendingItem) bool { return !p.void })
}

// tracePlan is what applying pending items to a trace writes in the heal's transaction: the
// trace's update under its version condition, first, and the deletions of the items; and what
// they add to the trace's session (a pending item of the session, not written yet), when it
// has one.
type tracePlan struct {
	actions   []types.TransactWriteItem
	session   string
	toSession pendingItem
}

// planTrace writes the idempotent effects of pend on the trace read as cur (days, member and
// completion items) and returns the rest, for a transaction (tracePlan).
func (s *TraceStore) planTrace(ctx context.Context, projectID, traceID string, cur map[string]types.AttributeValue, pend []pendingItem) (tracePlan, error) {
	pk := tracePK(projectID, traceID)
	first := pend[0].at()
	if cur == nil {
		if err := s.days.note(ctx, projectID, trace.IndexTraces, first); err != nil {
			return tracePlan{}, err
		}
	}
	if err := s.putSideItems(ctx, projectID, traceID, pend); err != nil {
		return tracePlan{}, err
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
			return tracePlan{}, err
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
	if ttl := s.laterExpiry(cur, last); ttl != 0 {
		up = up.Set(expression.Name(infra.AttrTTL), expression.Value(ttl))
	}
	update, err := s.updateAction(pk, skTrace, up, agg.guard())
	if err != nil {
		return tracePlan{}, err
	}
	plan := tracePlan{actions: append(append(make([]types.TransactWriteItem, 0, len(pend)+3), update), deletes(s.t.name, pend)...)}
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
		if shrink {
			// The trace may have narrowed: its session recomputes its own extent, from this
			// trace's whole one (sessionExtent).
			sp.Shrink, sp.Start, sp.End = true, agg.start, agg.end
		}
		plan.session, plan.toSession = agg.session, sp
	}
	return plan, nil
}

// errSessionContended is a heal's transaction cancelled by its direct update of the session,
// which another trace of the session changed first: the heal is tried again with a pending
// delta for the session instead.
var errSessionContended = errors.New("session updated concurrently")

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
				Spans: p.Members, TTL: s.expiry(at),
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
		in := &dynamodb.UpdateItemInput{
			TableName: &s.t.name, Key: key(completionsPK(projectID, k.slug), timeIndexSK(at[k], k.batch)),
			UpdateExpression:          aws.String("ADD s :spans"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":spans": &types.AttributeValueMemberBS{Value: spans}},
		}
		if ttl := s.expiry(at[k]); ttl != 0 {
			in.UpdateExpression = aws.String("ADD s :spans SET #ttl = :ttl")
			in.ExpressionAttributeNames = map[string]string{"#ttl": infra.AttrTTL}
			in.ExpressionAttributeValues[":ttl"] = num(ttl)
		}
		_, err := s.t.api.UpdateItem(ctx, in)
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
		end = maxPtr(end, optMicros(sum.End()))
	}
	return start, end, nil
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
