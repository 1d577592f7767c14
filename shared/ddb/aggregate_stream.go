package ddb

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/trace"
)

// Aggregates from the change stream: the trace and session aggregates kept by the consumer of
// the table's stream rather than on the request path, which then puts one summary per span
// and nothing else.
//
// A batch of one shard's records is applied per trace: the trace item is read once, the
// changes of its span summaries' records (a new summary counts its span; a changed one its
// difference from the old image) are added in Go, and the item is written once, under its
// version v. Sessions follow from the trace items' own records the same way (a trace that
// names its session for the first time adds its whole aggregate; later records their
// difference), so a crash between a trace's update and its session's can neither lose nor
// double the trace's share: the session's update waits for the trace's record.
//
// Exactly once: records of one item come in order on one shard, but a trace's spans (and a
// session's traces) are items of several shards, and a batch can be delivered again, whole,
// split, or with more after it. Each aggregate keeps, per shard, the sequence number of the
// last record it has applied (mk, beside its time), written with the aggregate in the same
// conditional update: a record at or before its shard's mark is skipped. A mark is dropped
// once it is more than markLife older than the records applied, when no record of its shard
// can be delivered again (a stream keeps its records 24 hours).
//
// The effects beside the aggregate (member items listing new spans, a prompt's completions,
// a session's listing of a trace, the days of the time indexes) are puts and set additions of
// keys derived from the records, written before the aggregate's update: repeating them
// changes nothing, and skipping them is impossible. A redelivered batch split otherwise may
// list a span in a second member item; readers of members take each span once.
//
// Minima and maxima cannot be undone by a difference: a span that moves its start later or its
// end earlier makes its trace's extent recomputed from the trace's summaries, and a trace that
// narrows makes its session's recomputed from the session's traces.
// A mark lives markLife, as the list index's do.
const (
	// aggregateRetries bounds the conditional updates of one aggregate lost to other writers
	// of it (another shard's batch) in one Apply; the batch is delivered again after that.
	aggregateRetries = 8
	// aggregateConcurrency bounds the aggregates of a batch updated at once.
	aggregateConcurrency = 16
	attrMarks            = "mk"
)

// AggregateStore applies the table's change stream to the trace and session aggregates.
type AggregateStore struct {
	s *TraceStore
	// now is the clock marks are aged by when a record has no creation time.
	now func() time.Time
}

// NewAggregateStore keeps the aggregates of the traces and sessions of s.
func NewAggregateStore(s *TraceStore) *AggregateStore {
	return &AggregateStore{s: s, now: time.Now}
}

// markAttr is one shard's mark: the last record applied and when it was made (Unix seconds).
type markAttr struct {
	Seq string `dynamodbav:"s"`
	At  int64  `dynamodbav:"t"`
}

// aggregateRecord is a record of the stream that changes an aggregate, with the shard order
// it is applied in.
type aggregateRecord struct {
	seq      string // padded (padSeq)
	at       time.Time
	old, new map[string]types.AttributeValue
}

// Apply applies a batch of records of the stream shard named shard, in sequence order: every
// trace that span summaries of the batch change, then every session that trace records of the
// batch change, each read and written once.
func (a *AggregateStore) Apply(ctx context.Context, shard string, records []StreamRecord) error {
	if shard == "" {
		return errNoShard
	}
	traces, sessions := map[aggregateKey][]aggregateRecord{}, map[aggregateKey][]aggregateRecord{}
	var traceOrder, sessionOrder []aggregateKey
	for _, r := range records {
		if r.EventName == "REMOVE" || r.New == nil {
			continue // expiry and project deletion: the aggregates keep what was stored
		}
		rec := aggregateRecord{seq: padSeq(r.Sequence), at: r.At, old: r.Old, new: r.New}
		pk, sk := strAttr(r.New, infra.AttrPK), strAttr(r.New, infra.AttrSK)
		projectID, rest, ok := strings.Cut(strings.TrimPrefix(pk, "P#"), "#")
		if !ok || !strings.HasPrefix(pk, "P#") {
			continue
		}
		var k aggregateKey
		var into map[aggregateKey][]aggregateRecord
		var order *[]aggregateKey
		switch {
		case sk == skSpan && strings.HasPrefix(rest, "S#"):
			k, into, order = aggregateKey{projectID, strAttr(r.New, "t")}, traces, &traceOrder
		case sk == skTrace && strings.HasPrefix(rest, "T#") && strAttr(r.New, "ss") != "":
			k, into, order = aggregateKey{projectID, strAttr(r.New, "ss")}, sessions, &sessionOrder
		default:
			continue
		}
		if k.id == "" {
			continue
		}
		if _, seen := into[k]; !seen {
			*order = append(*order, k)
		}
		into[k] = append(into[k], rec)
	}
	if err := a.applyCompletions(ctx, records); err != nil {
		return err
	}
	mark := shardHash(shard)
	for _, step := range []struct {
		order []aggregateKey
		recs  map[aggregateKey][]aggregateRecord
		apply func(context.Context, aggregateKey, string, []aggregateRecord) error
	}{
		{traceOrder, traces, a.applyTrace},
		{sessionOrder, sessions, a.applySession},
	} {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(aggregateConcurrency)
		for _, k := range step.order {
			g.Go(func() error { return step.apply(gctx, k, mark, step.recs[k]) })
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// aggregateKey names a trace or a session of a project.
type aggregateKey struct{ projectID, id string }

// pending reads the aggregate item pk/sk and returns it with its marks and the records of recs
// after its mark of this shard. The update is conditioned on the version read, so a stale read
// (eventually consistent, half a read unit) only loses that condition, and the next attempt
// reads strongly consistent.
func (a *AggregateStore) pending(ctx context.Context, pk, sk, mark string, recs []aggregateRecord, consistent bool) (map[string]types.AttributeValue, map[string]markAttr, []aggregateRecord, error) {
	res, err := a.s.t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &a.s.t.name, Key: key(pk, sk), ConsistentRead: aws.Bool(consistent)})
	if err != nil {
		return nil, nil, nil, storageErr("read "+pk, err)
	}
	marks := map[string]markAttr{}
	if m, ok := res.Item[attrMarks]; ok {
		if err := attributevalue.Unmarshal(m, &marks); err != nil {
			return nil, nil, nil, fmt.Errorf("decode marks of %s: %w", pk, err)
		}
	}
	done := marks[mark].Seq
	rest := slices.DeleteFunc(slices.Clone(recs), func(r aggregateRecord) bool { return r.seq <= done })
	return res.Item, marks, rest, nil
}

// setMarks moves the shard's mark to the last of rest and drops the marks too old to matter.
func (a *AggregateStore) setMarks(up expression.UpdateBuilder, marks map[string]markAttr, mark string, rest []aggregateRecord) expression.UpdateBuilder {
	last := rest[len(rest)-1]
	at := last.at
	if at.IsZero() {
		at = a.now()
	}
	marks[mark] = markAttr{Seq: last.seq, At: at.Unix()}
	for k, m := range marks {
		if time.Unix(m.At, 0).Before(at.Add(-markLife)) {
			delete(marks, k)
		}
	}
	return up.Set(expression.Name(attrMarks), expression.Value(marks))
}

// updateUnder writes an aggregate's update under cond (its version as read); lost reports a
// condition that failed (another writer changed the aggregate since it was read).
func (s *TraceStore) updateUnder(ctx context.Context, pk, sk string, up expression.UpdateBuilder, cond expression.ConditionBuilder) (lost bool, err error) {
	expr, err := expression.NewBuilder().WithUpdate(up).WithCondition(cond).Build()
	if err != nil {
		return false, fmt.Errorf("build update of %s: %w", pk, err)
	}
	_, err = s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(pk, sk), UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	switch {
	case isConditionFailed(err):
		return true, nil
	case err != nil:
		return false, storageErr("update "+pk, err)
	}
	return false, nil
}

// untilWon runs one read-and-write attempt of an aggregate until it is not lost to another writer,
// at most aggregateRetries times, with backoff between attempts.
func untilWon(ctx context.Context, what string, attempt func() (lost bool, err error)) error {
	for n := 1; ; n++ {
		lost, err := attempt()
		if err != nil || !lost {
			return err
		}
		if n > aggregateRetries {
			return fmt.Errorf("%s: lost %d updates to concurrent writers", what, n)
		}
		if err := sleep(ctx, backoff(n)); err != nil {
			return err
		}
	}
}

// applyTrace applies records of span summaries to their trace.
func (a *AggregateStore) applyTrace(ctx context.Context, k aggregateKey, mark string, recs []aggregateRecord) error {
	pk := tracePK(k.projectID, k.id)
	// A trace's writers (this consumer, PutTrace, a recount) all move its version, so the first
	// read may be eventually consistent: a trace's last write is mostly a stream batch or more
	// ago, seconds before, and a stale read costs a lost condition and a strong read.
	consistent := false
	return untilWon(ctx, "trace "+k.id, func() (bool, error) {
		cur, marks, rest, err := a.pending(ctx, pk, skTrace, mark, recs, consistent)
		consistent = true
		if err != nil || len(rest) == 0 {
			return false, err
		}
		up, err := a.traceUpdate(ctx, k, cur, mark, rest)
		if err != nil {
			return false, err
		}
		return a.s.updateUnder(ctx, pk, skTrace, a.setMarks(up, marks, mark, rest), aggregateOf(cur, "sc").guard())
	})
}

// traceUpdate writes the effects of rest beside the trace (members, days) and
// returns the trace's update: cur plus rest.
func (a *AggregateStore) traceUpdate(ctx context.Context, k aggregateKey, cur map[string]types.AttributeValue, mark string, rest []aggregateRecord) (expression.UpdateBuilder, error) {
	agg := aggregateOf(cur, "sc")
	var (
		members     [][]byte
		membersAt   time.Time
		firstAt     time.Time
		lastAt      = timeAttr(cur, "ua")
		ttl         = intOr(cur, infra.AttrTTL)
		membersTTL  int64
		shrink      bool
		root        *trace.Summary
		tags        = map[string]string{}
		sessionName = strAttr(cur, "sn")
		sessionTags = stringsAttr(cur, "stg")
	)
	for _, r := range rest {
		sum, sumTTL, err := summaryOf(k.projectID, r.new)
		if err != nil {
			return expression.UpdateBuilder{}, err
		}
		id, err := binaryID(sum.SpanID)
		if err != nil {
			return expression.UpdateBuilder{}, err
		}
		errs, cost := int64(boolInt(sum.HasError)), derefCost(sum.Cost)
		if r.old == nil {
			agg.count++
			members = append(members, id)
			if membersAt.IsZero() {
				membersAt = sum.UpdatedAt
			}
			membersTTL = max(membersTTL, sumTTL)
		} else {
			old, _, err := summaryOf(k.projectID, r.old)
			if err != nil {
				return expression.UpdateBuilder{}, err
			}
			errs -= int64(boolInt(old.HasError))
			cost -= derefCost(old.Cost)
			oldEnd, end := old.End(), sum.End()
			shrink = shrink || sum.StartedAt.After(old.StartedAt) || (oldEnd != nil && (end == nil || end.Before(*oldEnd)))
		}
		agg.errors += errs
		agg.cost += cost
		agg.widen(micros(sum.StartedAt), optMicros(sum.End()))
		if firstAt.IsZero() {
			firstAt = sum.UpdatedAt
		}
		if sum.UpdatedAt.After(lastAt) {
			lastAt = sum.UpdatedAt
		}
		ttl = max(ttl, sumTTL)
		if agg.session == "" {
			agg.session = sum.SessionID
		}
		if sum.ParentSpanID == "" {
			root = &sum
		}
		if agg.name == "" {
			agg.name = sum.Name
		}
		maps.Copy(tags, sum.TraceTags)
		sessionName = cmp.Or(sum.SessionName, sessionName)
		maps.Copy(sessionTags, sum.SessionTags)
	}

	// The effects beside the aggregate, before it (see the top of this file).
	timed, err := a.s.timeIndexed(ctx, k.projectID, trace.IndexTraces)
	if err != nil {
		return expression.UpdateBuilder{}, err
	}
	if timed && cur == nil {
		if err := a.s.days.note(ctx, k.projectID, trace.IndexTraces, firstAt); err != nil {
			return expression.UpdateBuilder{}, err
		}
	}
	inline, wroteMembers, err := a.addMembers(ctx, k, cur, mark+"-"+rest[0].seq, membersAt, members, membersTTL)
	if err != nil {
		return expression.UpdateBuilder{}, err
	}
	if shrink {
		adding := make([]string, len(members)) // listed by this update, if in the trace item
		for i, id := range members {
			adding[i] = idOf(id)
		}
		start, end, err := a.s.spanExtent(ctx, k.projectID, k.id, cur, adding)
		if err != nil {
			return expression.UpdateBuilder{}, err
		}
		// The extent of what is stored now: the records after rest cannot narrow it without
		// their own recount, and only widen it otherwise.
		agg.start, agg.end = start, end
	}

	up := agg.set(expression.Set(expression.Name("ua"), expression.Value(lastAt.UnixMicro())), "sc").
		Set(expression.Name("ca"), ifNotExists("ca", firstAt.UnixMicro()))
	if timed {
		up = setTimeIndex(up, k.projectID, trace.IndexTraces, firstAt, k.id)
	}
	up = setListed(up, attrInlineSpans, inline, wroteMembers)
	if agg.session != "" {
		up = up.Set(expression.Name("ss"), expression.Value(agg.session))
	}
	if root != nil {
		up = up.Set(expression.Name("n"), expression.Value(root.Name)).
			Set(expression.Name("root"), expression.Value(root.SpanID)).
			Set(expression.Name("rst"), expression.Value(root.Status)).
			Set(expression.Name("ri"), expression.Value(root.RootInput)).
			Set(expression.Name("ro"), expression.Value(root.RootOutput))
	} else if agg.name != "" {
		up = up.Set(expression.Name("n"), expression.Value(agg.name))
	}
	if sessionName != "" {
		up = up.Set(expression.Name("sn"), expression.Value(sessionName))
	}
	if len(sessionTags) > 0 {
		up = up.Set(expression.Name("stg"), expression.Value(sessionTags))
	}
	if ttl != 0 {
		up = up.Set(expression.Name(infra.AttrTTL), expression.Value(ttl))
	}
	return setTags(up, tags), nil
}

// A small trace lists its spans in its own item (attrInlineSpans: 16-byte ids one after
// another, in the order the trace received them), which the trace's update writes anyway,
// rather than in a member item per stream batch (a write unit each): until it would hold more
// than inlineIDsMax, and only in a project without a time index of spans (timeindex.go),
// whose walk reads member items. A trace that outgrows it keeps the ids it holds and lists
// its later spans in member items, as a large trace does from the start (attrHasMembers then
// says it has them, so that no later span goes back to the item). The ids are written by the
// trace's update, under its version and marks, so each record adds its span once; a member
// item written by an attempt that crashed before its update may list a span the item lists
// too, and readers take each span once.
//
// A small session lists its traces the same way (attrInlineTraces), rather than in an item
// per trace (T#<trace>, putTraceLink), while its traces' ids are UUIDs. A listing item
// expires with its trace; a trace the session item lists stays listed until the session
// expires, and readers take the traces they find.
const (
	attrInlineSpans  = "si"
	attrInlineTraces = "ti"
	attrHasMembers   = "hm"
	inlineIDsMax     = 32
)

// setListed adds to up the ids the item lists from now on (inline, in attr; nil: unchanged)
// and, when items beside it list some (items), that it has them.
func setListed(up expression.UpdateBuilder, attr string, inline []byte, items bool) expression.UpdateBuilder {
	if inline != nil {
		up = up.Set(expression.Name(attr), expression.Value(inline))
	}
	if items {
		up = up.Set(expression.Name(attrHasMembers), expression.Value(true))
	}
	return up
}

// joiningIDs is the session item's new list of its traces (attrInlineTraces: held, then the
// traces joining it), or nil when the joining traces get listing items: the session has them
// already, the list would be too long, or an id is not a UUID.
func joiningIDs(cur map[string]types.AttributeValue, held []byte, traces []string, joins map[string]bool) []byte {
	if cur[attrHasMembers] != nil {
		return nil
	}
	list := slices.Clone(held)
	for _, traceID := range traces {
		if !joins[traceID] {
			continue
		}
		id, err := binaryID(traceID)
		if err != nil {
			return nil
		}
		if !listsID(list, id) {
			list = append(list, id...)
		}
	}
	if len(list) == len(held) || len(list)/16 > inlineIDsMax {
		return nil
	}
	return list
}

// addMembers lists spans new to the trace (ids of 16 bytes): in the trace item when it lists
// its spans itself and they fit (inline, the attribute's new value, for the trace's update),
// else in a member item (wrote true).
func (a *AggregateStore) addMembers(ctx context.Context, k aggregateKey, cur map[string]types.AttributeValue, id string, at time.Time, spans [][]byte, ttl int64) (inline []byte, wrote bool, err error) {
	if len(spans) == 0 {
		return nil, false, nil
	}
	timed, err := a.s.timeIndexed(ctx, k.projectID, trace.IndexSpans)
	if err != nil {
		return nil, false, err
	}
	held := binaryAttr(cur, attrInlineSpans)
	if !timed && cur[attrHasMembers] == nil && len(held)/16+len(spans) <= inlineIDsMax {
		inline = slices.Clone(held)
		slices.SortFunc(spans, bytes.Compare)
		for _, s := range spans {
			if !listsID(inline, s) {
				inline = append(inline, s...)
			}
		}
		return inline, false, nil
	}
	return nil, true, a.putMembers(ctx, k, id, at, spans, ttl, timed)
}

// putMembers writes the member item listing spans new to the trace, under a key of the shard
// and the first record that adds them (id), so that applying the records again writes the
// same item; with its time-index entry when the project's spans have one (timed).
func (a *AggregateStore) putMembers(ctx context.Context, k aggregateKey, id string, at time.Time, spans [][]byte, ttl int64, timed bool) error {
	if timed {
		if err := a.s.days.note(ctx, k.projectID, trace.IndexSpans, at); err != nil {
			return err
		}
	}
	m := memberItem{PK: tracePK(k.projectID, k.id), SK: memberSK(at, id), Spans: spans, TTL: ttl}
	if timed {
		m.GSI2PK, m.GSI2SK = timeIndexPK(k.projectID, trace.IndexSpans, at, shardOf(k.id)), timeIndexSK(at, k.id+"#"+id)
	}
	item, err := marshal(m)
	if err != nil {
		return err
	}
	if _, err := a.s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &a.s.t.name, Item: item}); err != nil {
		return storageErr("put trace members", err)
	}
	return nil
}

// completionsKey names a prompt's listing of the llm spans one ingest batch linked to it.
type completionsKey struct{ projectID, slug, batch string }

// completionsAdd is what a stream batch adds to one listing: span ids, the time of the listing's
// key and its expiry.
type completionsAdd struct {
	spans [][]byte
	at    time.Time
	ttl   int64
}

// applyCompletions adds the llm spans linked to a prompt that records of the batch write to
// their prompt's listing of their ingest batch: one set union per listing and stream batch,
// whatever the traces its spans belong to. It runs before the aggregates' updates, so a
// span a trace's update counts is listed (a span marked applied by one is listed again by a
// redelivery, which changes nothing: a set union).
func (a *AggregateStore) applyCompletions(ctx context.Context, records []StreamRecord) error {
	adds := map[completionsKey]*completionsAdd{}
	var order []completionsKey
	for _, r := range records {
		if r.EventName == "REMOVE" || r.New == nil || strAttr(r.New, infra.AttrSK) != skSpan {
			continue
		}
		projectID, _, ok := strings.Cut(strings.TrimPrefix(strAttr(r.New, infra.AttrPK), "P#"), "#")
		if !ok {
			continue
		}
		sum, ttl, err := summaryOf(projectID, r.New)
		if err != nil {
			return err
		}
		if sum.Kind != trace.KindLLM || sum.PromptSlug == "" {
			continue
		}
		id, err := binaryID(sum.SpanID)
		if err != nil {
			return err
		}
		k := completionsKey{projectID, sum.PromptSlug, batchOf(sum.Location.Key)}
		add, ok := adds[k]
		if !ok {
			add = &completionsAdd{}
			adds[k] = add
			order = append(order, k)
		}
		add.spans = append(add.spans, id)
		add.at, add.ttl = sum.UpdatedAt, max(add.ttl, ttl)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(aggregateConcurrency)
	for _, k := range order {
		g.Go(func() error { return a.addCompletions(gctx, k, adds[k]) })
	}
	return g.Wait()
}

// addCompletions adds llm spans linked to a prompt to the prompt's listing of their batch (a
// set union, which repeating changes nothing).
func (a *AggregateStore) addCompletions(ctx context.Context, k completionsKey, add *completionsAdd) error {
	spans, ttl := add.spans, add.ttl
	in := &dynamodb.UpdateItemInput{
		TableName: &a.s.t.name, Key: key(completionsPK(k.projectID, k.slug), timeIndexSK(add.at, k.batch)),
		UpdateExpression:          aws.String("ADD s :spans"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":spans": &types.AttributeValueMemberBS{Value: spans}},
	}
	if ttl != 0 {
		in.UpdateExpression = aws.String("ADD s :spans SET #ttl = :ttl")
		in.ExpressionAttributeNames = map[string]string{"#ttl": infra.AttrTTL}
		in.ExpressionAttributeValues[":ttl"] = num(ttl)
	}
	if _, err := a.s.t.api.UpdateItem(ctx, in); err != nil {
		return storageErr("add completions", err)
	}
	return nil
}

// applySession applies records of trace items to their session.
func (a *AggregateStore) applySession(ctx context.Context, k aggregateKey, mark string, recs []aggregateRecord) error {
	pk := sessionPK(k.projectID, k.id)
	return untilWon(ctx, "session "+k.id, func() (bool, error) {
		// Strongly consistent: a session's upsert (POST /sessions) changes it without its version.
		cur, marks, rest, err := a.pending(ctx, pk, skSession, mark, recs, true)
		if err != nil || len(rest) == 0 {
			return false, err
		}
		up, err := a.sessionUpdate(ctx, k, cur, rest)
		if err != nil {
			return false, err
		}
		return a.s.updateUnder(ctx, pk, skSession, a.setMarks(up, marks, mark, rest), aggregateOf(cur, "tc").guard())
	})
}

// sessionUpdate writes the session's listings of the traces of rest and returns the session's
// update: cur plus rest.
func (a *AggregateStore) sessionUpdate(ctx context.Context, k aggregateKey, cur map[string]types.AttributeValue, rest []aggregateRecord) (expression.UpdateBuilder, error) {
	agg := aggregateOf(cur, "tc")
	var (
		firstAt, lastAt = time.Time{}, timeAttr(cur, "ua")
		ttl             = intOr(cur, infra.AttrTTL)
		shrink          bool
		name            string
		tags            = map[string]string{}
		traces          []string
		traceTTL        = map[string]int64{}
		joins           = map[string]bool{} // the traces that join the session
		relist          = map[string]bool{} // the traces whose listing must be written
	)
	for _, r := range rest {
		t := aggregateOf(r.new, "sc")
		traceID := strings.TrimPrefix(strAttr(r.new, infra.AttrPK), tracePK(k.projectID, ""))
		old := aggregateOf(r.old, "sc")
		if old.session == "" {
			// The trace joins its session: the session gets the whole trace, spans written
			// before the trace named its session included.
			agg.count++
			agg.errors += t.errors
			agg.cost += t.cost
		} else {
			agg.errors += t.errors - old.errors
			agg.cost += t.cost - old.cost
			shrink = shrink || narrower(old, t)
		}
		agg.widen(t.start, t.end)
		at := timeAttr(r.new, "ua")
		if firstAt.IsZero() {
			firstAt = at
		}
		if at.After(lastAt) {
			lastAt = at
		}
		traceTTL[traceID] = max(traceTTL[traceID], intOr(r.new, infra.AttrTTL))
		ttl = max(ttl, traceTTL[traceID])
		joins[traceID] = joins[traceID] || old.session == ""
		relist[traceID] = relist[traceID] || old.session == "" || linkTTL(intOr(r.new, infra.AttrTTL)) != linkTTL(intOr(r.old, infra.AttrTTL))
		name = cmp.Or(strAttr(r.new, "sn"), name)
		maps.Copy(tags, stringsAttr(r.new, "stg"))
		if !slices.Contains(traces, traceID) {
			traces = append(traces, traceID)
		}
	}
	timed, err := a.s.timeIndexed(ctx, k.projectID, trace.IndexSessions)
	if err != nil {
		return expression.UpdateBuilder{}, err
	}
	if timed && cur == nil {
		if err := a.s.days.note(ctx, k.projectID, trace.IndexSessions, firstAt); err != nil {
			return expression.UpdateBuilder{}, err
		}
	}
	held := binaryAttr(cur, attrInlineTraces)
	inline := joiningIDs(cur, held, traces, joins)
	var listed bool // a joining trace got a listing item
	for _, traceID := range traces {
		// Written when the trace joins, and again when its expiry passes the listing's; never
		// for a trace the session item lists.
		id, _ := binaryID(traceID)
		if !relist[traceID] || (inline != nil && joins[traceID]) || (id != nil && listsID(held, id)) {
			continue
		}
		if err := a.s.putTraceLink(ctx, sessionPK(k.projectID, k.id), traceID, firstAt, linkTTL(traceTTL[traceID])); err != nil {
			return expression.UpdateBuilder{}, err
		}
		listed = listed || joins[traceID]
	}
	if shrink {
		start, end, err := a.sessionExtent(ctx, k, traces)
		if err != nil {
			return expression.UpdateBuilder{}, err
		}
		agg.start, agg.end = start, end
	}
	up := agg.set(expression.Set(expression.Name("ua"), expression.Value(lastAt.UnixMicro())), "tc").
		Set(expression.Name("ca"), ifNotExists("ca", firstAt.UnixMicro()))
	if timed {
		up = setTimeIndex(up, k.projectID, trace.IndexSessions, firstAt, k.id)
	}
	up = setListed(up, attrInlineTraces, inline, listed)
	if name != "" {
		up = up.Set(expression.Name("n"), expression.Value(name))
	}
	if ttl != 0 {
		up = up.Set(expression.Name(infra.AttrTTL), expression.Value(ttl))
	}
	return setTags(up, tags), nil
}

// linkTTL is the expiry of a session's listing of a trace that expires at ttl (Unix seconds; 0:
// never): the end of the trace's last day, so that the listing is written again once a day of
// the trace's life rather than at every record that moves its expiry by seconds. A listing that
// outlives its trace by hours lists nothing: readers take the traces they find.
func linkTTL(ttl int64) int64 {
	if ttl == 0 {
		return 0
	}
	const day = 24 * 60 * 60
	return (ttl/day + 1) * day
}

// narrower reports whether a trace's extent t starts later or ends earlier than old.
func narrower(old, t aggregate) bool {
	return (old.start != nil && (t.start == nil || *t.start > *old.start)) ||
		(old.end != nil && (t.end == nil || *t.end < *old.end))
}

// sessionExtent is a session's start and end recomputed from its traces as stored (and adding,
// the batch's, which the session item may list only once it is written): one Query of its
// partition and one BatchGetItem per 100 traces, only for a batch that narrowed a trace.
func (a *AggregateStore) sessionExtent(ctx context.Context, k aggregateKey, adding []string) (start, end *int64, err error) {
	ids, err := a.s.SessionTraceIDs(ctx, k.projectID, k.id)
	if err != nil {
		return nil, nil, err
	}
	ids = once(append(ids, adding...))
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = key(tracePK(k.projectID, id), skTrace)
	}
	found, err := a.s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	for _, it := range found {
		t := aggregateOf(it, "sc")
		start, end = minPtr(start, t.start), maxPtr(end, t.end)
	}
	return start, end, nil
}

// summaryOf decodes a span summary's image, and its expiry.
func summaryOf(projectID string, image map[string]types.AttributeValue) (trace.Summary, int64, error) {
	var it summaryItem
	if err := attributevalue.UnmarshalMap(image, &it); err != nil {
		return trace.Summary{}, 0, fmt.Errorf("decode span summary: %w", err)
	}
	return it.toSummary(projectID), it.TTL, nil
}

// stringsAttr reads a map of strings (empty when absent).
func stringsAttr(item map[string]types.AttributeValue, name string) map[string]string {
	out := map[string]string{}
	for k, v := range mapAttr(item, name) {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			out[k] = s.Value
		}
	}
	return out
}

func derefCost(c *float64) float64 {
	if c == nil {
		return 0
	}
	return *c
}
