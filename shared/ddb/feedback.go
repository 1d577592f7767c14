package ddb

import (
	"context"
	"encoding/json"
	"errors"
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
// item of a known span carries GSI3 keys under its trace, so a trace's feedback is one Query
// (paginated) however many spans it has, and a session's is one Query per trace. Feedback on a
// span not ingested yet goes to the project's orphan partition of GSI3, and expires after
// OrphanTTL; a span, trace or session read moves orphans whose span has arrived under their
// trace, for good (once: later reads find them there). Calibration feedback (with a judge) is
// also indexed by judge and submission time in GSI2, for Calibrations.
type FeedbackStore struct{ t *Table }

var (
	_ feedback.Store  = (*FeedbackStore)(nil)
	_ feedback.Reader = (*FeedbackStore)(nil)
)

// NewFeedbackStore returns the feedback store in t.
func NewFeedbackStore(t *Table) *FeedbackStore { return &FeedbackStore{t: t} }

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
// on a span not ingested yet is an orphan and expires OrphanTTL after this write; feedback on
// a known span does not expire. Calibration feedback is indexed under its judge in GSI2 at this
// write's time, so that a submission again moves it to the newest of the judge's calibrations
// (Calibrations).
func (s *FeedbackStore) PutFeedback(ctx context.Context, f feedback.Feedback) (feedback.Feedback, error) {
	judgeID := ""
	if f.Calibration != nil {
		judgeID = f.Calibration.JudgeID
	}
	sk := feedbackSK(f.CreatedBy.ID, judgeID)
	gsi3PK, gsi3SK := orphanFeedbackGSI3PK(f.ProjectID), orphanGSI3SK(f.CreatedAt, f.SpanID, sk)
	if f.TraceID != "" {
		gsi3PK, gsi3SK = traceFeedbackGSI3PK(f.ProjectID, f.TraceID), spanFeedbackGSI3SK(f.SpanID, sk)
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
// UpdateItem per orphan it adopts, once); a trace one Query of GSI3 per 1 MB of feedback; a
// session one Query of its partition plus one GSI3 Query per trace. Trace and session reads add
// one Query of the orphan partition (empty unless feedback arrived before its span) and adopt
// the orphans whose spans have arrived since.
func (s *FeedbackStore) EntityFeedback(ctx context.Context, projectID, entityType, entityID string) ([]feedback.Item, error) {
	if entityType == feedback.EntitySpan {
		return s.spanFeedback(ctx, projectID, entityID)
	}
	traces := []string{entityID}
	if entityType == feedback.EntitySession {
		ids, known, err := s.sessionTraces(ctx, projectID, entityID)
		if err != nil {
			return nil, err
		}
		if !known {
			return nil, errs.NotFound("session %s not found", entityID)
		}
		traces = ids
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
	for _, id := range traces {
		g.Go(func() error {
			cond := expression.Key(infra.AttrGSI3PK).Equal(expression.Value(traceFeedbackGSI3PK(projectID, id)))
			return s.t.query(gctx, cond, queryOpts{index: infra.IndexGSI3}, add)
		})
	}
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
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if len(out) == 0 && entityType == feedback.EntityTrace {
		var it struct{}
		ok, err := s.t.get(ctx, tracePK(projectID, entityID), skTrace, &it)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errs.NotFound("trace %s not found", entityID)
		}
	}
	return out, nil
}

// spanFeedback reads a span's partition: its summary, feedback and evaluations. When the span
// is known, the orphans among its feedback (written before it arrived) are adopted under its
// trace: one UpdateItem each, once.
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
	var out []feedback.Item
	for _, raw := range raws {
		if summary != nil && strAttr(summary, "t") != "" && strAttr(raw, infra.AttrGSI3PK) == orphanPK {
			adopted, ok, err := s.adopt(ctx, projectID, raw, strAttr(summary, "t"), strAttr(summary, "pv"))
			if err != nil {
				return nil, err
			}
			if ok {
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

// sessionTraces lists the traces of a session and reports whether the session exists.
func (s *FeedbackStore) sessionTraces(ctx context.Context, projectID, sessionID string) ([]string, bool, error) {
	var ids []string
	known := false
	err := s.t.query(ctx, partition(sessionPK(projectID, sessionID)), queryOpts{}, func(raw map[string]types.AttributeValue) error {
		switch sk := strAttr(raw, infra.AttrSK); {
		case sk == skSession:
			known = true
		case strings.HasPrefix(sk, prefixSessTrace):
			ids = append(ids, strings.TrimPrefix(sk, prefixSessTrace))
		}
		return nil
	})
	return ids, known, err
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
// under their trace, and returns them by trace id.
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
	adopted := map[string][]map[string]types.AttributeValue{}
	for _, raw := range orphans {
		span, ok := spans[keyString(key(strAttr(raw, infra.AttrPK), skSpan))]
		if !ok {
			continue
		}
		traceID := strAttr(span, "t")
		item, ok, err := s.adopt(ctx, projectID, raw, traceID, strAttr(span, "pv"))
		if err != nil {
			return nil, err
		}
		if ok { // else adopted by a concurrent read; the trace's own query finds it
			adopted[traceID] = append(adopted[traceID], item)
		}
	}
	return adopted, nil
}

// adopt moves the orphan raw under trace traceID of its span (filling in the prompt version
// when it has none) and removes its expiry: one UpdateItem, on the condition that it is still
// an orphan, which returns the item as adopted. ok is false when it is not an orphan any more
// (adopted by a concurrent read) or no longer exists (expired).
func (s *FeedbackStore) adopt(ctx context.Context, projectID string, raw map[string]types.AttributeValue, traceID, version string) (item map[string]types.AttributeValue, ok bool, err error) {
	pk, sk := strAttr(raw, infra.AttrPK), strAttr(raw, infra.AttrSK)
	up := expression.Set(expression.Name(infra.AttrGSI3PK), expression.Value(traceFeedbackGSI3PK(projectID, traceID))).
		Set(expression.Name(infra.AttrGSI3SK), expression.Value(spanFeedbackGSI3SK(strAttr(raw, "sp"), sk))).
		Set(expression.Name("t"), expression.Value(traceID)).
		Remove(expression.Name(infra.AttrTTL))
	if version != "" {
		up = up.Set(expression.Name("pv"), ifNotExists("pv", version))
	}
	expr, err := expression.NewBuilder().WithUpdate(up).
		WithCondition(expression.Name(infra.AttrGSI3PK).Equal(expression.Value(orphanFeedbackGSI3PK(projectID)))).Build()
	if err != nil {
		return nil, false, fmt.Errorf("build orphan adoption: %w", err)
	}
	res, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(pk, sk), UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ReturnValues: types.ReturnValueAllNew,
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		return nil, false, nil
	case err != nil:
		return nil, false, storageErr("adopt orphan feedback", err)
	}
	return res.Attributes, true, nil
}
