package ddb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/judge"
)

// FeedbackStore keeps human feedback (P#<project>#S#<span> / FB#<user>[#J#<judge>], beside the
// span's summary and its evaluations) and reads unified feedback. Every feedback and evaluation
// item of a known span carries GSI3 keys under its trace's session, or its trace when it has
// none (feedback_index.go), so a session's feedback is one Query (paginated) however many
// traces and spans it has, and a trace's one or two. Feedback on a span not ingested yet goes
// to the project's orphan partition of GSI3, and expires after OrphanTTL; the consumer of the
// table's change stream (Apply) moves it under its trace when the span arrives, as it moves
// the items of a trace that joins a session. Without a stream (Indexed false: some tests), the
// reads do that work: a session read queries each of its traces, and trace and session reads
// adopt the orphans whose span has arrived. Calibration feedback (with a judge) is also
// indexed by judge and submission time in GSI2, for Calibrations.
type FeedbackStore struct {
	t *Table
	// indexed: the stream consumer keeps the feedback index (Apply), so reads trust it.
	indexed bool
}

var (
	_ feedback.Store  = (*FeedbackStore)(nil)
	_ feedback.Reader = (*FeedbackStore)(nil)
)

// NewFeedbackStore returns the feedback store in t, for a table without a stream consumer: its
// reads adopt orphans and read a session trace by trace.
func NewFeedbackStore(t *Table) *FeedbackStore { return &FeedbackStore{t: t} }

// Indexed returns the store for a table whose stream consumer applies every change to it
// (Apply): a session's or trace's read is then a Query of its own index partition, and reads
// adopt no orphans.
func (s *FeedbackStore) Indexed() *FeedbackStore { return &FeedbackStore{t: s.t, indexed: true} }

// OrphanTTL is how long feedback on a span that has not been ingested (an orphan) waits for
// it: the item carries the table's TTL attribute (infra.AttrTTL) set to its last write plus
// OrphanTTL, so DynamoDB deletes feedback whose span never arrives (a wrong completion id, a
// span that was never exported) instead of keeping it, and reading it on every trace and
// session read of the project, forever. A read that finds the span adopts the orphan under its
// trace and removes the TTL: trace and session reads (adoptOrphans), a read of the span's own
// feedback (spanFeedback), and a new submission once the span is known (PutFeedback). Thirty
// days is far longer than any exporter holds spans (seconds to minutes), and the window trace
// reads have always looked back.
//
// What it costs: feedback on a span that did arrive, but whose feedback nobody reads (through
// the span, its trace or its session) nor submits again within OrphanTTL, is deleted too; no
// write path adopts it, because ingestion does not look for orphans.
const OrphanTTL = 30 * 24 * time.Hour

// OrphanWindow is how far back trace and session reads look for orphans to adopt: OrphanTTL,
// since an older orphan has expired (DynamoDB deletes expired items within days, not at once).
const OrphanWindow = OrphanTTL

// readConcurrency bounds the parallel per-trace queries of a session read.
const readConcurrency = 8

type feedbackItem struct {
	PK        string                             `dynamodbav:"PK"`
	SK        string                             `dynamodbav:"SK"`
	ID        string                             `dynamodbav:"id"`
	Span      string                             `dynamodbav:"sp"`
	Trace     string                             `dynamodbav:"t,omitempty"`
	PromptID  string                             `dynamodbav:"pid,omitempty"`
	Slug      string                             `dynamodbav:"ps"`
	Version   string                             `dynamodbav:"pv,omitempty"`
	ThumbsUp  bool                               `dynamodbav:"up"`
	Reason    *string                            `dynamodbav:"rs,omitempty"`
	Expected  *string                            `dynamodbav:"eo,omitempty"`
	Metadata  string                             `dynamodbav:"md,omitempty"` // JSON text
	Judge     string                             `dynamodbav:"j,omitempty"`
	ExpScore  *float64                           `dynamodbav:"es,omitempty"`
	Direction string                             `dynamodbav:"dir,omitempty"`
	Criteria  map[string]judge.CriterionFeedback `dynamodbav:"cf,omitempty"`
	UserID    string                             `dynamodbav:"u"`
	UserEmail string                             `dynamodbav:"ue,omitempty"`
	UserName  string                             `dynamodbav:"un,omitempty"`
	Link      string                             `dynamodbav:"lk,omitempty"`
	Created   int64                              `dynamodbav:"ca"`
	Updated   int64                              `dynamodbav:"ua"`
}

func (it feedbackItem) toFeedback(projectID string) feedback.Feedback {
	f := feedback.Feedback{
		ID: it.ID, ProjectID: projectID, SpanID: it.Span, TraceID: it.Trace, PromptID: it.PromptID,
		PromptSlug: it.Slug, PromptVersionID: it.Version, ThumbsUp: it.ThumbsUp, Reason: it.Reason,
		ExpectedOutput: it.Expected, CreatedBy: auth.User{ID: it.UserID, Email: it.UserEmail, Name: it.UserName},
		LinkID: it.Link, CreatedAt: time.UnixMicro(it.Created).UTC(), UpdatedAt: time.UnixMicro(it.Updated).UTC(),
	}
	if it.Metadata != "" {
		f.Metadata = json.RawMessage(it.Metadata)
	}
	if it.Judge != "" {
		f.Calibration = &judge.Calibration{JudgeID: it.Judge, ExpectedScore: it.ExpScore, ScoreDirection: it.Direction, CriteriaFeedback: it.Criteria}
	}
	return f
}

// Target implements feedback.Store with one BatchGetItem (prompt, span, judge), plus one GetItem
// when the span names its prompt version only by content hash.
func (s *FeedbackStore) Target(ctx context.Context, projectID, slug, spanID, judgeID string) (feedback.Target, error) {
	promptKey, spanKey := key(promptPK(projectID, slug), skPrompt), key(spanPK(projectID, spanID), skSpan)
	keys := []map[string]types.AttributeValue{promptKey, spanKey}
	judgeKey := key(judgePK(projectID, judgeID), skJudge)
	if judgeID != "" {
		keys = append(keys, judgeKey)
	}
	found, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return feedback.Target{}, err
	}
	var t feedback.Target
	raw, ok := found[keyString(promptKey)]
	if !ok {
		return feedback.Target{}, promptNotFound(slug)
	}
	var head promptHead
	if err := attributevalue.UnmarshalMap(raw, &head); err != nil {
		return feedback.Target{}, fmt.Errorf("decode prompt: %w", err)
	}
	t.PromptID = head.ID
	if raw, ok := found[keyString(spanKey)]; ok {
		var it summaryItem
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return feedback.Target{}, fmt.Errorf("decode span summary: %w", err)
		}
		sum := it.toSummary(projectID)
		t.Span = &feedback.SpanRef{TraceID: sum.TraceID, PromptSlug: sum.PromptSlug, PromptVersionID: sum.PromptVersionID}
		if sum.PromptVersionID == "" && sum.PromptHash != "" {
			var guard hashItem
			if _, err := s.t.get(ctx, promptPK(projectID, slug), hashSK(sum.PromptHash), &guard); err != nil {
				return feedback.Target{}, err
			}
			t.Span.PromptVersionID = guard.VersionID
		}
	}
	if judgeID != "" {
		raw, ok := found[keyString(judgeKey)]
		if !ok {
			return feedback.Target{}, judgeNotFound(judgeID)
		}
		var it judgeItem
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return feedback.Target{}, fmt.Errorf("decode judge: %w", err)
		}
		j := it.toJudge(projectID)
		t.Judge = &j
	}
	return t, nil
}

// PutFeedback implements feedback.Store with one UpdateItem: every field is set (or removed when
// absent), id, creation time and the prompt index key are kept from an earlier record. Feedback
// on a known span is indexed under its trace's session (one GetItem of the trace before) and
// does not expire; feedback on a span not ingested yet is an orphan, expires OrphanTTL after
// this write, and raises the project's orphan flag first (one UpdateItem). Calibration feedback is indexed under its judge in GSI2 at this
// write's time, so that a submission again moves it to the newest of the judge's calibrations
// (Calibrations).
func (s *FeedbackStore) PutFeedback(ctx context.Context, f feedback.Feedback) (feedback.Feedback, error) {
	judgeID := ""
	if f.Calibration != nil {
		judgeID = f.Calibration.JudgeID
	}
	sk := feedbackSK(f.CreatedBy.ID, judgeID)
	gsi3PK, gsi3SK := orphanFeedbackGSI3PK(f.ProjectID), orphanGSI3SK(f.CreatedAt, f.SpanID, sk)
	session := ""
	if f.TraceID != "" {
		var err error
		if session, _, err = s.t.traceSession(ctx, f.ProjectID, f.TraceID); err != nil {
			return feedback.Feedback{}, err
		}
		gsi3PK, gsi3SK = feedbackGSI3(f.ProjectID, f.TraceID, session, f.SpanID, sk)
	} else if err := s.t.raiseOrphanFlag(ctx, f.ProjectID, f.UpdatedAt); err != nil {
		return feedback.Feedback{}, err
	}
	up := expression.Set(expression.Name("id"), ifNotExists("id", uuid.NewString())).
		Set(expression.Name("ca"), ifNotExists("ca", f.CreatedAt.UnixMicro())).
		Set(expression.Name(infra.AttrGSI1PK), expression.Value(promptFeedbackGSI1PK(f.ProjectID, f.PromptSlug))).
		Set(expression.Name(infra.AttrGSI1SK), ifNotExists(infra.AttrGSI1SK, timeIndexSK(f.CreatedAt, f.SpanID+"#"+sk))).
		Set(expression.Name(infra.AttrGSI3PK), expression.Value(gsi3PK)).
		Set(expression.Name(infra.AttrGSI3SK), expression.Value(gsi3SK)).
		Set(expression.Name("sp"), expression.Value(f.SpanID)).
		Set(expression.Name("ps"), expression.Value(f.PromptSlug)).
		Set(expression.Name("up"), expression.Value(f.ThumbsUp)).
		Set(expression.Name("u"), expression.Value(f.CreatedBy.ID)).
		Set(expression.Name("ua"), expression.Value(f.UpdatedAt.UnixMicro()))
	optional := []optionalAttr{
		{"t", f.TraceID, f.TraceID != ""},
		{"ss", session, session != ""},
		{infra.AttrTTL, f.UpdatedAt.Add(OrphanTTL).Unix(), f.TraceID == ""}, // an orphan expires
		{"pid", f.PromptID, f.PromptID != ""},
		{"pv", f.PromptVersionID, f.PromptVersionID != ""},
		{"rs", f.Reason, f.Reason != nil},
		{"eo", f.ExpectedOutput, f.ExpectedOutput != nil},
		{"md", string(f.Metadata), len(f.Metadata) > 0},
		{"ue", f.CreatedBy.Email, f.CreatedBy.Email != ""},
		{"un", f.CreatedBy.Name, f.CreatedBy.Name != ""},
		{"lk", f.LinkID, f.LinkID != ""},
		{"j", judgeID, judgeID != ""},
		{infra.AttrGSI2PK, judgeCalibrationsGSI2PK(f.ProjectID, judgeID), judgeID != ""},
		{infra.AttrGSI2SK, calibrationGSI2SK(f.UpdatedAt, f.SpanID, sk), judgeID != ""},
	}
	if c := f.Calibration; c != nil {
		optional = append(optional,
			optionalAttr{"es", c.ExpectedScore, c.ExpectedScore != nil},
			optionalAttr{"dir", c.ScoreDirection, c.ScoreDirection != ""},
			optionalAttr{"cf", c.CriteriaFeedback, len(c.CriteriaFeedback) > 0})
	}
	for _, o := range optional {
		if o.set {
			up = up.Set(expression.Name(o.name), expression.Value(o.v))
		} else {
			up = up.Remove(expression.Name(o.name))
		}
	}
	expr, err := expression.NewBuilder().WithUpdate(up).Build()
	if err != nil {
		return feedback.Feedback{}, fmt.Errorf("build feedback update: %w", err)
	}
	res, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(spanPK(f.ProjectID, f.SpanID), sk),
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return feedback.Feedback{}, storageErr("put feedback", err)
	}
	var it feedbackItem
	if err := attributevalue.UnmarshalMap(res.Attributes, &it); err != nil {
		return feedback.Feedback{}, fmt.Errorf("decode feedback: %w", err)
	}
	return it.toFeedback(f.ProjectID), nil
}

// optionalAttr is an attribute an update sets when it has a value and removes otherwise.
type optionalAttr struct {
	name string
	v    any
	set  bool
}

// orphanGSI3SK orders orphans by time, so that reads can skip those older than OrphanWindow.
func orphanGSI3SK(at time.Time, spanID, sk string) string {
	return timeIndexSK(at, spanFeedbackGSI3SK(spanID, sk))
}

// FlagEvaluation implements feedback.Store. When the evaluation is not written yet, the flag
// waits in a stub item that the evaluation write keeps.
func (s *FeedbackStore) FlagEvaluation(ctx context.Context, projectID, spanID, judgeID string) error {
	_, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(spanPK(projectID, spanID), evaluationSK(judgeID)),
		UpdateExpression:          aws.String("SET fb = :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}},
	})
	if err != nil {
		return storageErr("flag evaluation", err)
	}
	return nil
}

// EntityFeedback implements feedback.Reader. A span costs one Query of its partition (and one
// UpdateItem per orphan it adopts, once). Indexed, a session is one GSI3 Query per 1 MB of its
// items (plus one GetItem when it has none, to tell an unknown session); a trace is one GetItem
// of its session and one GSI3 Query per 1 MB of its items under its own key, plus as many under
// its session's when it has one. Without the index, a session adds one Query of its partition
// and the reads of each of its traces, and trace and session reads one Query of the orphan
// partition (adopting the orphans whose spans have arrived since).
func (s *FeedbackStore) EntityFeedback(ctx context.Context, projectID, entityType, entityID string) ([]feedback.Item, error) {
	if entityType == feedback.EntitySpan {
		return s.spanFeedback(ctx, projectID, entityID)
	}
	var (
		mu  sync.Mutex
		out []feedback.Item
	)
	seen := map[string]bool{}
	add := func(raw map[string]types.AttributeValue) error {
		it, ok, err := decodeFeedbackItem(projectID, raw)
		mu.Lock()
		defer mu.Unlock()
		if k := keyString(raw); err == nil && ok && !seen[k] {
			seen[k] = true
			out = append(out, it)
		}
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readConcurrency)
	known := true
	traces := []string{entityID}
	switch {
	case entityType == feedback.EntitySession && s.indexed:
		g.Go(func() error { return s.querySession(gctx, projectID, entityID, "", add) })
		traces = nil
	case entityType == feedback.EntitySession:
		ids, ok, err := sessionTraces(ctx, s.t, projectID, entityID)
		if err != nil {
			return nil, err
		}
		known, traces = ok, ids
		g.Go(func() error { return s.querySession(gctx, projectID, entityID, "", add) })
		for _, id := range traces {
			g.Go(func() error { return s.queryTrace(gctx, projectID, id, add) })
		}
	default:
		g.Go(func() error {
			session, ok, err := s.t.traceSession(gctx, projectID, entityID)
			if err != nil || session == "" {
				known = ok
				return err
			}
			return s.querySession(gctx, projectID, session, entityID, add)
		})
		g.Go(func() error { return s.queryTrace(gctx, projectID, entityID, add) })
	}
	if !s.indexed && len(traces) > 0 {
		g.Go(func() error {
			adopted, err := s.adoptOrphans(gctx, projectID)
			if err != nil {
				return err
			}
			for _, id := range traces {
				for _, raw := range adopted[id] {
					if err := add(raw); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if len(out) == 0 && entityType == feedback.EntitySession && s.indexed {
		var it struct{}
		ok, err := s.t.get(ctx, sessionPK(projectID, entityID), skSession, &it)
		if err != nil {
			return nil, err
		}
		known = ok
	}
	if len(out) == 0 && !known {
		return nil, errs.NotFound("%s %s not found", entityType, entityID)
	}
	return out, nil
}

// querySession reads the items indexed under a session: all of them, or those of one trace.
func (s *FeedbackStore) querySession(ctx context.Context, projectID, sessionID, traceID string, add func(map[string]types.AttributeValue) error) error {
	cond := expression.Key(infra.AttrGSI3PK).Equal(expression.Value(sessionFeedbackGSI3PK(projectID, sessionID)))
	if traceID != "" {
		cond = cond.And(expression.Key(infra.AttrGSI3SK).BeginsWith(traceID + "#"))
	}
	return s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI3}, add)
}

// queryTrace reads the items indexed under a trace's own key.
func (s *FeedbackStore) queryTrace(ctx context.Context, projectID, traceID string, add func(map[string]types.AttributeValue) error) error {
	cond := expression.Key(infra.AttrGSI3PK).Equal(expression.Value(traceFeedbackGSI3PK(projectID, traceID)))
	return s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI3}, add)
}

// spanFeedback reads a span's partition: its summary, feedback and evaluations. When the span
// is known, the orphans among its feedback (written before it arrived) are adopted under its
// trace (or its trace's session): one UpdateItem each, once, after one GetItem of the trace's
// session.
func (s *FeedbackStore) spanFeedback(ctx context.Context, projectID, spanID string) ([]feedback.Item, error) {
	var (
		raws    []map[string]types.AttributeValue
		summary map[string]types.AttributeValue
	)
	err := s.t.query(ctx, partition(spanPK(projectID, spanID)), queryOpts{}, func(raw map[string]types.AttributeValue) error {
		if strAttr(raw, infra.AttrSK) == skSpan {
			summary = raw
		} else {
			raws = append(raws, raw)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	orphanPK := orphanFeedbackGSI3PK(projectID)
	session, sessionRead := "", false
	var out []feedback.Item
	for _, raw := range raws {
		if traceID := strAttr(summary, "t"); traceID != "" && strAttr(raw, infra.AttrGSI3PK) == orphanPK {
			if !sessionRead {
				if session, _, err = s.t.traceSession(ctx, projectID, traceID); err != nil {
					return nil, err
				}
				sessionRead = true
			}
			adopted, err := s.t.move(ctx, projectID, feedbackMove{pk: strAttr(raw, infra.AttrPK), sk: strAttr(raw, infra.AttrSK),
				span: spanID, from: orphanPK, trace: traceID, session: session, version: strAttr(summary, "pv")})
			if err != nil {
				return nil, err
			}
			if adopted != nil {
				raw = adopted
			}
		}
		it, ok, err := decodeFeedbackItem(projectID, raw)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, it)
		}
	}
	if summary == nil && len(out) == 0 {
		return nil, errs.NotFound("span %s not found", spanID)
	}
	return out, nil
}

// decodeFeedbackItem decodes a feedback or evaluation item; ok is false for anything else,
// evaluation stubs included.
func decodeFeedbackItem(projectID string, raw map[string]types.AttributeValue) (feedback.Item, bool, error) {
	switch sk := strAttr(raw, infra.AttrSK); {
	case strings.HasPrefix(sk, prefixFeedback):
		var it feedbackItem
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return feedback.Item{}, false, fmt.Errorf("decode feedback: %w", err)
		}
		f := it.toFeedback(projectID)
		return feedback.Item{Feedback: &f}, true, nil
	case strings.HasPrefix(sk, prefixEvaluation):
		var it evalItem
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return feedback.Item{}, false, fmt.Errorf("decode evaluation: %w", err)
		}
		if it.stub() {
			return feedback.Item{}, false, nil
		}
		e := it.toEvaluation()
		return feedback.Item{Evaluation: &e}, true, nil
	}
	return feedback.Item{}, false, nil
}

// adoptOrphans moves the orphans of the last OrphanWindow whose span has been ingested since
// under their trace (or its session), and returns them by trace id. Only without the index:
// with it, the stream consumer moves them when their span arrives.
func (s *FeedbackStore) adoptOrphans(ctx context.Context, projectID string) (map[string][]map[string]types.AttributeValue, error) {
	orphanPK := orphanFeedbackGSI3PK(projectID)
	cutoff := fmt.Sprintf("%016d", time.Now().Add(-OrphanWindow).UnixMicro())
	cond := expression.Key(infra.AttrGSI3PK).Equal(expression.Value(orphanPK)).
		And(expression.Key(infra.AttrGSI3SK).GreaterThanEqual(expression.Value(cutoff)))
	var orphans []map[string]types.AttributeValue
	if err := s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI3}, func(raw map[string]types.AttributeValue) error {
		orphans = append(orphans, raw)
		return nil
	}); err != nil || len(orphans) == 0 {
		return nil, err
	}
	var keys []map[string]types.AttributeValue
	seen := map[string]bool{}
	for _, raw := range orphans {
		if pk := strAttr(raw, infra.AttrPK); !seen[pk] {
			seen[pk] = true
			keys = append(keys, key(pk, skSpan))
		}
	}
	spans, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	var traceIDs []string
	for _, span := range spans {
		traceIDs = append(traceIDs, strAttr(span, "t"))
	}
	sessions, err := s.t.traceSessions(ctx, projectID, traceIDs)
	if err != nil {
		return nil, err
	}
	adopted := map[string][]map[string]types.AttributeValue{}
	for _, raw := range orphans {
		span, ok := spans[keyString(key(strAttr(raw, infra.AttrPK), skSpan))]
		if !ok {
			continue
		}
		traceID := strAttr(span, "t")
		item, err := s.t.move(ctx, projectID, feedbackMove{pk: strAttr(raw, infra.AttrPK), sk: strAttr(raw, infra.AttrSK), span: strAttr(raw, "sp"),
			from: orphanPK, trace: traceID, session: sessions[traceID], version: strAttr(span, "pv")})
		if err != nil {
			return nil, err
		}
		if item != nil { // else adopted by a concurrent read; the trace's own query finds it
			adopted[traceID] = append(adopted[traceID], item)
		}
	}
	return adopted, nil
}
