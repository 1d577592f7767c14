package ddb

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/infra"
)

// The feedback index. Every feedback and evaluation item carries GSI3 keys: under its session
// (sessionFeedbackGSI3PK, by trace then span) when its trace is in one, under its trace
// (traceFeedbackGSI3PK) when not, and in the project's orphan partition when its span is not
// stored yet. So a session's unified feedback is one Query (paged by DynamoDB's 1 MB), and a
// trace's one Query of its own key plus, when it has a session, one of the session's key by the
// trace's prefix.
//
// Writers index an item by what is stored when they write it: the trace's session as its
// TRACE item has it (read strongly). What they cannot know is kept by the consumer of the
// table's change stream (Apply, run by RollupFunction with the rollups and the list index):
//
//   - a trace that joins a session after items about it were written (its TRACE item's change
//     gains `ss`): the items under the trace's key move under the session's;
//   - an item written under a trace's key while the trace was joining a session (its change
//     seen, the trace read with a session): it moves;
//   - feedback written before its span (an orphan) moves under its trace (or session) when the
//     span is stored: found from the orphan's own change when the span was already there by
//     then, else from the span summary's first change, which looks in the span's partition
//     only in a project whose orphan flag (orphanFlagPK, set before any orphan is written) is
//     still up, so projects without orphans pay one read per stream batch, not one per span.
//
// Each move is one UpdateItem conditional on the item's key being still the one it moves from,
// so moves are idempotent: a batch applied twice, or retried after a crash at any step, moves
// each item once and leaves every item where its trace and session say.

// feedbackGSI3 is where an item (sk) about span spanID of trace traceID is indexed: under the
// trace's session when it has one, else under the trace.
func feedbackGSI3(projectID, traceID, sessionID, spanID, sk string) (pk, sortKey string) {
	if sessionID != "" {
		return sessionFeedbackGSI3PK(projectID, sessionID), sessionFeedbackGSI3SK(traceID, spanID, sk)
	}
	return traceFeedbackGSI3PK(projectID, traceID), spanFeedbackGSI3SK(spanID, sk)
}

// traceSessions reads the session of each of traceIDs from its TRACE item, strongly
// consistent (one BatchGetItem per 100 traces): "" for a trace with none, or not stored yet.
func (t *Table) traceSessions(ctx context.Context, projectID string, traceIDs []string) (map[string]string, error) {
	out := make(map[string]string, len(traceIDs))
	var keys []map[string]types.AttributeValue
	for _, id := range traceIDs {
		if _, ok := out[id]; !ok && id != "" {
			out[id] = ""
			keys = append(keys, key(tracePK(projectID, id), skTrace))
		}
	}
	if len(keys) == 0 {
		return out, nil
	}
	found, err := t.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, it := range found {
		out[strings.TrimPrefix(strAttr(it, infra.AttrPK), tracePK(projectID, ""))] = strAttr(it, "ss")
	}
	return out, nil
}

// traceSession reads one trace's session, and whether the trace is stored.
func (t *Table) traceSession(ctx context.Context, projectID, traceID string) (session string, known bool, err error) {
	res, err := t.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &t.name, Key: key(tracePK(projectID, traceID), skTrace), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("PK, ss"),
	})
	if err != nil {
		return "", false, storageErr("get trace session", err)
	}
	return strAttr(res.Item, "ss"), res.Item != nil, nil
}

// raiseOrphanFlag says that project may have orphans until OrphanTTL after now: one
// UpdateItem, before the orphan is written (so that a span stored after the orphan finds the
// flag up). The flag expires with the orphans it covers.
func (t *Table) raiseOrphanFlag(ctx context.Context, projectID string, now time.Time) error {
	until := now.Add(OrphanTTL).Unix()
	_, err := t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &t.name, Key: key(orphanFlagPK(projectID), skOrphanFlag),
		UpdateExpression:          aws.String("SET u = :u, #ttl = :u"),
		ConditionExpression:       aws.String("attribute_not_exists(u) OR u < :u"),
		ExpressionAttributeNames:  map[string]string{"#ttl": infra.AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{":u": num(until)},
	})
	if err != nil && !isConditionFailed(err) { // a later flag is up already
		return storageErr("raise orphan flag", err)
	}
	return nil
}

// orphanFlagUp reads whether project may have orphans (strongly consistent).
func (t *Table) orphanFlagUp(ctx context.Context, projectID string, now time.Time) (bool, error) {
	res, err := t.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &t.name, Key: key(orphanFlagPK(projectID), skOrphanFlag), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return false, storageErr("get orphan flag", err)
	}
	n, ok := res.Item["u"].(*types.AttributeValueMemberN)
	if !ok {
		return false, nil
	}
	until, err := strconv.ParseInt(n.Value, 10, 64)
	return err == nil && until >= now.Unix(), nil
}

// feedbackMove is the move of one feedback or evaluation item from GSI3 partition from to
// where its trace and session say.
type feedbackMove struct {
	pk, sk, span, from      string
	trace, session, version string
}

// move applies m: one UpdateItem on the condition that the item is still under m.from. An
// orphan moved loses its expiry and gets its span's prompt version when it has none. It
// returns the item as moved, nil when the condition failed (moved already, or gone).
func (t *Table) move(ctx context.Context, projectID string, m feedbackMove) (map[string]types.AttributeValue, error) {
	gsiPK, gsiSK := feedbackGSI3(projectID, m.trace, m.session, m.span, m.sk)
	up := expression.Set(expression.Name(infra.AttrGSI3PK), expression.Value(gsiPK)).
		Set(expression.Name(infra.AttrGSI3SK), expression.Value(gsiSK)).
		Set(expression.Name("t"), expression.Value(m.trace))
	if m.session != "" {
		up = up.Set(expression.Name("ss"), expression.Value(m.session))
	}
	if m.from == orphanFeedbackGSI3PK(projectID) {
		up = up.Remove(expression.Name(infra.AttrTTL))
		if m.version != "" {
			up = up.Set(expression.Name("pv"), ifNotExists("pv", m.version))
		}
	}
	expr, err := expression.NewBuilder().WithUpdate(up).
		WithCondition(expression.Name(infra.AttrGSI3PK).Equal(expression.Value(m.from))).Build()
	if err != nil {
		return nil, fmt.Errorf("build feedback move: %w", err)
	}
	res, err := t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &t.name, Key: key(m.pk, m.sk), UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ReturnValues: types.ReturnValueAllNew,
	})
	switch {
	case isConditionFailed(err):
		return nil, nil
	case err != nil:
		return nil, storageErr("move feedback", err)
	}
	return res.Attributes, nil
}

// moveConcurrency bounds the parallel requests of one stream batch's moves.
const moveConcurrency = 8

// Apply keeps the feedback index for a batch of the table's change stream (one shard's
// records, in order; any batch again, whole or in part): see the comment at the top of this
// file. Requests: none for a batch without feedback, evaluations, new spans or traces joining
// a session; else one GetItem of the orphan flag per project with new spans, one Query per new
// span while the project's flag is up, one BatchGetItem per 100 spans of orphans and per 100
// traces of items written under their trace key, one GSI3 Query per trace joining a session,
// and one UpdateItem per item moved.
func (s *FeedbackStore) Apply(ctx context.Context, _ string, records []StreamRecord) error {
	type spanRef struct{ project, span string }
	type itemRef struct{ project, pk, sk, span, trace, from string }
	type join struct{ project, trace, session string }
	var (
		newSpans = map[string][]map[string]types.AttributeValue{} // by project: summaries first stored
		orphans  []itemRef
		under    []itemRef // items under their trace's key
		joins    []join
	)
	for _, r := range records {
		if r.New == nil {
			continue
		}
		pk, sk := strAttr(r.New, infra.AttrPK), strAttr(r.New, infra.AttrSK)
		project, rest, ok := strings.Cut(strings.TrimPrefix(pk, "P#"), "#")
		if !ok || !strings.HasPrefix(pk, "P#") {
			continue
		}
		switch {
		case sk == skSpan && r.Old == nil && strings.HasPrefix(rest, "S#"):
			newSpans[project] = append(newSpans[project], r.New)
		case sk == skTrace:
			if ss := strAttr(r.New, "ss"); ss != "" && ss != strAttr(r.Old, "ss") {
				joins = append(joins, join{project, strings.TrimPrefix(rest, "T#"), ss})
			}
		case strings.HasPrefix(sk, prefixFeedback) || strings.HasPrefix(sk, prefixEvaluation):
			ref := itemRef{project: project, pk: pk, sk: sk, span: strAttr(r.New, "sp"), trace: strAttr(r.New, "t"), from: strAttr(r.New, infra.AttrGSI3PK)}
			switch ref.from {
			case "":
			case orphanFeedbackGSI3PK(project):
				orphans = append(orphans, ref)
			case traceFeedbackGSI3PK(project, ref.trace):
				under = append(under, ref)
			}
		}
	}
	now := time.Now()
	var (
		mu    sync.Mutex
		moves []feedbackMove
	)
	addMove := func(m feedbackMove) {
		mu.Lock()
		defer mu.Unlock()
		moves = append(moves, m)
	}

	// Orphans of new spans, in projects whose flag is up: the span's partition, read now.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(moveConcurrency)
	for project, spans := range newSpans {
		g.Go(func() error {
			up, err := s.t.orphanFlagUp(gctx, project, now)
			if err != nil || !up {
				return err
			}
			for _, span := range spans {
				err := s.t.query(gctx, partition(strAttr(span, infra.AttrPK)).And(expression.Key(infra.AttrSK).BeginsWith(prefixFeedback)), queryOpts{}, func(raw map[string]types.AttributeValue) error {
					if strAttr(raw, infra.AttrGSI3PK) == orphanFeedbackGSI3PK(project) {
						addMove(feedbackMove{pk: strAttr(raw, infra.AttrPK), sk: strAttr(raw, infra.AttrSK), span: strAttr(raw, "sp"),
							from: orphanFeedbackGSI3PK(project), trace: strAttr(span, "t"), version: strAttr(span, "pv")})
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	// Orphans written when their span may have been stored already: read the spans.
	g.Go(func() error {
		var keys []map[string]types.AttributeValue
		seen := map[string]bool{}
		for _, o := range orphans {
			if !seen[o.pk] {
				seen[o.pk] = true
				keys = append(keys, key(o.pk, skSpan))
			}
		}
		if len(keys) == 0 {
			return nil
		}
		spans, err := s.t.batchGet(gctx, keys)
		if err != nil {
			return err
		}
		for _, o := range orphans {
			if span, ok := spans[keyString(key(o.pk, skSpan))]; ok {
				addMove(feedbackMove{pk: o.pk, sk: o.sk, span: o.span, from: o.from, trace: strAttr(span, "t"), version: strAttr(span, "pv")})
			}
		}
		return nil
	})
	// Items written under their trace's key: those of traces in a session move.
	for _, o := range under {
		addMove(feedbackMove{pk: o.pk, sk: o.sk, span: o.span, from: o.from, trace: o.trace})
	}
	// Traces that joined a session: every item under the trace's key moves.
	for _, j := range joins {
		g.Go(func() error {
			cond := expression.Key(infra.AttrGSI3PK).Equal(expression.Value(traceFeedbackGSI3PK(j.project, j.trace)))
			return s.t.query(gctx, cond, queryOpts{index: infra.IndexGSI3}, func(raw map[string]types.AttributeValue) error {
				addMove(feedbackMove{pk: strAttr(raw, infra.AttrPK), sk: strAttr(raw, infra.AttrSK), span: strAttr(raw, "sp"),
					from: traceFeedbackGSI3PK(j.project, j.trace), trace: j.trace, session: j.session})
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return s.applyMoves(ctx, moves)
}

// applyMoves reads the sessions of the moves' traces that it does not know (strongly
// consistent: a session read after the trace joined it) and moves every item whose place
// changes.
func (s *FeedbackStore) applyMoves(ctx context.Context, moves []feedbackMove) error {
	byProject := map[string][]string{}
	for _, m := range moves {
		if m.session == "" && m.trace != "" {
			p := projectOfPK(m.pk)
			byProject[p] = append(byProject[p], m.trace)
		}
	}
	sessions := map[string]map[string]string{}
	for p, traces := range byProject {
		ss, err := s.t.traceSessions(ctx, p, traces)
		if err != nil {
			return err
		}
		sessions[p] = ss
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(moveConcurrency)
	for _, m := range moves {
		p := projectOfPK(m.pk)
		if m.session == "" {
			m.session = sessions[p][m.trace]
		}
		if m.trace == "" || (m.from == traceFeedbackGSI3PK(p, m.trace) && m.session == "") {
			continue // stays where it is
		}
		g.Go(func() error {
			_, err := s.t.move(gctx, p, m)
			return err
		})
	}
	return g.Wait()
}

// projectOfPK is the project of a key P#<project>#...
func projectOfPK(pk string) string {
	p, _, _ := strings.Cut(strings.TrimPrefix(pk, "P#"), "#")
	return p
}
