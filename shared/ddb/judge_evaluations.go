package ddb

import (
	"context"
	"errors"
	"fmt"
	"reflect"
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
	"github.com/plumehq/plume/shared/judge"
)

// evalItem is a judge's evaluation of a span. An item without a result ("r") is a stub that
// only records that calibration feedback exists ("fb") for an evaluation not written yet; it
// has no index keys and reads skip it.
type evalItem struct {
	PK       string                          `dynamodbav:"PK"`
	SK       string                          `dynamodbav:"SK"`
	GSI1PK   string                          `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK   string                          `dynamodbav:"GSI1SK,omitempty"`
	GSI3PK   string                          `dynamodbav:"GSI3PK,omitempty"`
	GSI3SK   string                          `dynamodbav:"GSI3SK,omitempty"`
	ID       string                          `dynamodbav:"id"`
	Span     string                          `dynamodbav:"sp"`
	Trace    string                          `dynamodbav:"t"`
	Session  string                          `dynamodbav:"ss,omitempty"` // the trace's session, as indexed in GSI3
	Judge    string                          `dynamodbav:"j"`
	Name     string                          `dynamodbav:"jn"`
	Type     string                          `dynamodbav:"et"`
	Result   *bool                           `dynamodbav:"r"`
	Reason   string                          `dynamodbav:"rs,omitempty"`
	Conf     *float64                        `dynamodbav:"cf,omitempty"`
	Score    *float64                        `dynamodbav:"sc,omitempty"`
	Min      *float64                        `dynamodbav:"smin,omitempty"`
	Max      *float64                        `dynamodbav:"smax,omitempty"`
	Pass     *float64                        `dynamodbav:"pt,omitempty"`
	Model    string                          `dynamodbav:"m,omitempty"`
	Duration *float64                        `dynamodbav:"dm,omitempty"`
	Cost     *float64                        `dynamodbav:"co,omitempty"`
	Criteria map[string]judge.CriterionScore `dynamodbav:"cs,omitempty"`
	Feedback bool                            `dynamodbav:"fb"`
	Created  int64                           `dynamodbav:"ca"`
	Updated  int64                           `dynamodbav:"ua"`
}

func (it evalItem) stub() bool { return it.Result == nil }

// toEvalItem is the item of evaluation e of a span of a trace in session sessionID (or none):
// indexed in GSI3 under the session, or the trace (feedbackGSI3).
func toEvalItem(projectID string, e judge.Evaluation, sessionID string) evalItem {
	sk := evaluationSK(e.JudgeID)
	r := e.Result
	gsi3PK, gsi3SK := feedbackGSI3(projectID, e.TraceID, sessionID, e.SpanID, sk)
	return evalItem{
		PK: spanPK(projectID, e.SpanID), SK: sk,
		GSI1PK: judgeEvaluationsGSI1PK(projectID, e.JudgeID), GSI1SK: timeIndexSK(e.CreatedAt, e.SpanID),
		GSI3PK: gsi3PK, GSI3SK: gsi3SK, Session: sessionID,
		ID: e.ID, Span: e.SpanID, Trace: e.TraceID, Judge: e.JudgeID, Name: e.JudgeName, Type: e.EvaluationType,
		Result: &r, Reason: e.Reason, Conf: e.Confidence, Score: e.Score, Min: e.ScoreMin, Max: e.ScoreMax,
		Pass: e.PassThreshold, Model: e.Model, Duration: e.DurationMS, Cost: e.Cost, Criteria: e.CriteriaScores,
		Feedback: e.HasFeedback, Created: e.CreatedAt.UnixMicro(), Updated: e.UpdatedAt.UnixMicro(),
	}
}

func (it evalItem) toEvaluation() judge.Evaluation {
	return judge.Evaluation{
		ID: it.ID, SpanID: it.Span, TraceID: it.Trace, JudgeID: it.Judge, JudgeName: it.Name, EvaluationType: it.Type,
		Result: it.Result != nil && *it.Result, Reason: it.Reason, Confidence: it.Conf, Score: it.Score,
		ScoreMin: it.Min, ScoreMax: it.Max, PassThreshold: it.Pass, Model: it.Model, DurationMS: it.Duration,
		Cost: it.Cost, CriteriaScores: it.Criteria, HasFeedback: it.Feedback,
		CreatedAt: time.UnixMicro(it.Created).UTC(), UpdatedAt: time.UnixMicro(it.Updated).UTC(),
	}
}

// Bounds of one evaluation transaction: DynamoDB takes at most 100 actions and 4 MB. Two
// actions are the judge's counters and those of the hour the evaluations were created in
// (judgeHourSK); a chunk whose evaluations span more hours than fit is split (errTooManyActions).
const (
	maxTransactItems   = 98
	maxTransactActions = 100
	maxTransactBytes   = 3 << 20
)

// errTooManyActions is tryPutEvaluations' answer to a chunk whose evaluations and counters
// need more than maxTransactActions actions; putEvaluationChunk splits it.
var errTooManyActions = errors.New("evaluation transaction over its action bound")

// maxEvalAttempts bounds the retries of an evaluation write that lost a race with another
// writer of the same evaluations.
const maxEvalAttempts = 10

// PutEvaluations implements judge.Store: one BatchGetItem per 50 evaluations (spans and earlier
// evaluations) and one of their traces (their sessions: where the evaluations are indexed in
// GSI3, feedback_index.go), then one TransactWriteItems per chunk of up to 99 evaluations (or 3 MB) plus the
// judge's counters. An evaluation written again keeps its id and creation time.
func (s *JudgeStore) PutEvaluations(ctx context.Context, j judge.Judge, evs []judge.Evaluation) ([]judge.Evaluation, error) {
	out := make([]judge.Evaluation, 0, len(evs))
	for _, chunk := range chunkEvaluations(evs) {
		stored, err := s.putEvaluationChunk(ctx, j, chunk)
		if err != nil {
			return nil, err
		}
		out = append(out, stored...)
	}
	return out, nil
}

// chunkEvaluations splits evs into transactions within DynamoDB's bounds.
func chunkEvaluations(evs []judge.Evaluation) [][]judge.Evaluation {
	var chunks [][]judge.Evaluation
	start, size := 0, 0
	for i, e := range evs {
		n := 2048 + len(e.Reason)
		for _, c := range e.CriteriaScores {
			n += 64 + len(c.Reason)
		}
		if i > start && (i-start == maxTransactItems || size+n > maxTransactBytes) {
			chunks = append(chunks, evs[start:i])
			start, size = i, 0
		}
		size += n
	}
	return append(chunks, evs[start:])
}

func (s *JudgeStore) putEvaluationChunk(ctx context.Context, j judge.Judge, evs []judge.Evaluation) ([]judge.Evaluation, error) {
	for attempt := 1; ; attempt++ {
		stored, err := s.tryPutEvaluations(ctx, j, evs)
		if errors.Is(err, errTooManyActions) && len(evs) > 1 {
			return s.putSplit(ctx, j, evs)
		}
		if err == nil || !isContention(err) || attempt == maxEvalAttempts {
			return stored, err
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return nil, err
		}
	}
}

// putSplit writes evs in two halves: evaluations created over many hours (given created_at, or
// written again with their first creation time) need a counter action per hour.
func (s *JudgeStore) putSplit(ctx context.Context, j judge.Judge, evs []judge.Evaluation) ([]judge.Evaluation, error) {
	half := len(evs) / 2
	first, err := s.putEvaluationChunk(ctx, j, evs[:half])
	if err != nil {
		return nil, err
	}
	rest, err := s.putEvaluationChunk(ctx, j, evs[half:])
	if err != nil {
		return nil, err
	}
	return append(first, rest...), nil
}

// evalCounts are the changes of a judge's evaluation and pass counters.
type evalCounts struct{ added, passed int64 }

func (s *JudgeStore) tryPutEvaluations(ctx context.Context, j judge.Judge, evs []judge.Evaluation) ([]judge.Evaluation, error) {
	keys := make([]map[string]types.AttributeValue, 0, 2*len(evs))
	for _, e := range evs {
		keys = append(keys, key(spanPK(j.ProjectID, e.SpanID), skSpan), key(spanPK(j.ProjectID, e.SpanID), evaluationSK(j.ID)))
	}
	found, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	var traceIDs []string
	for _, e := range evs {
		traceIDs = append(traceIDs, strAttr(found[keyString(key(spanPK(j.ProjectID, e.SpanID), skSpan))], "t"))
	}
	sessions, err := s.t.traceSessions(ctx, j.ProjectID, traceIDs)
	if err != nil {
		return nil, err
	}
	var total evalCounts
	hours := map[time.Time]*evalCounts{}
	actions := make([]types.TransactWriteItem, 0, len(evs)+2)
	out := make([]judge.Evaluation, len(evs))
	for i, e := range evs {
		span, ok := found[keyString(key(spanPK(j.ProjectID, e.SpanID), skSpan))]
		if !ok {
			return nil, errs.NotFound("span %s not found: evaluations are of ingested spans", e.SpanID)
		}
		e.TraceID = strAttr(span, "t")
		e.ID = uuid.NewString()
		put := &types.Put{TableName: &s.t.name, ConditionExpression: aws.String("attribute_not_exists(PK)")}
		var old evalItem
		if raw, ok := found[keyString(key(spanPK(j.ProjectID, e.SpanID), evaluationSK(j.ID)))]; ok {
			if err := attributevalue.UnmarshalMap(raw, &old); err != nil {
				return nil, fmt.Errorf("decode evaluation: %w", err)
			}
			e.HasFeedback = old.Feedback
			if old.stub() {
				put.ConditionExpression = aws.String("attribute_not_exists(r)")
			} else {
				e.ID, e.CreatedAt = old.ID, time.UnixMicro(old.Created).UTC()
				put.ConditionExpression = aws.String("ua = :ua AND fb = :fb")
				put.ExpressionAttributeValues = map[string]types.AttributeValue{
					":ua": num(old.Updated), ":fb": &types.AttributeValueMemberBOOL{Value: old.Feedback},
				}
			}
		}
		// A stored evaluation written again keeps its creation time, so its change stays in
		// the hour that counted it.
		var c evalCounts
		if old.stub() {
			c.added++
		} else if *old.Result {
			c.passed--
		}
		if e.Result {
			c.passed++
		}
		total.added, total.passed = total.added+c.added, total.passed+c.passed
		if c != (evalCounts{}) {
			h := e.CreatedAt.UTC().Truncate(time.Hour)
			if hours[h] == nil {
				hours[h] = &evalCounts{}
			}
			hours[h].added, hours[h].passed = hours[h].added+c.added, hours[h].passed+c.passed
		}
		out[i] = e
		item := toEvalItem(j.ProjectID, e, sessions[e.TraceID])
		if !old.stub() && sameEvaluation(item, old) {
			// The same verdict again (a retried evaluator): nothing to write.
			out[i].UpdatedAt = time.UnixMicro(old.Updated).UTC()
			continue
		}
		if put.Item, err = marshal(item); err != nil {
			return nil, err
		}
		actions = append(actions, types.TransactWriteItem{Put: put})
	}
	if len(actions) == 0 {
		return out, nil
	}
	judgeAction := -1
	if total != (evalCounts{}) {
		judgeAction = len(actions)
		actions = append(actions, types.TransactWriteItem{Update: &types.Update{
			TableName: &s.t.name, Key: key(judgePK(j.ProjectID, j.ID), skJudge),
			UpdateExpression:    aws.String("ADD ec :a, pc :p SET hc = if_not_exists(hc, :hc)"),
			ConditionExpression: aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": num(total.added), ":p": num(total.passed),
				":hc": num(countedFrom(time.Now()))},
		}})
	}
	for h, c := range hours {
		if *c != (evalCounts{}) {
			actions = append(actions, s.hourAction(j, h, *c))
		}
	}
	if len(actions) > maxTransactActions {
		return nil, errTooManyActions
	}
	if _, err := s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}); err != nil {
		if codes := cancellationCodes(err); judgeAction >= 0 && len(codes) > judgeAction && codes[judgeAction] == "ConditionalCheckFailed" {
			return nil, judgeNotFound(j.ID)
		}
		return nil, storageErr("put evaluations", err)
	}
	return out, nil
}

// countedFrom is the start of the hour counters of a judge of an earlier release whose first
// evaluation write since is at now: the hour after the next, since an evaluation written
// before (uncounted) may be created up to an hour ahead of its write.
func countedFrom(now time.Time) int64 {
	return now.UTC().Truncate(time.Hour).Add(2 * time.Hour).UnixMicro()
}

// hourAction adds c to the counters of j's evaluations created in hour h (n: evaluations,
// p: passed), in the transaction of the evaluations they count, so that a window's total is
// exact at every moment, whatever failed.
func (s *JudgeStore) hourAction(j judge.Judge, h time.Time, c evalCounts) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName: &s.t.name, Key: key(judgePK(j.ProjectID, j.ID), judgeHourSK(h)),
		UpdateExpression:          aws.String("ADD n :a, p :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":a": num(c.added), ":p": num(c.passed)},
	}}
}

// sameEvaluation reports whether a new evaluation item says exactly what the stored one does.
func sameEvaluation(item, old evalItem) bool {
	item.Updated = old.Updated
	return reflect.DeepEqual(item, old)
}

// Evaluations implements judge.Store: one GSI1 Query of the judge's evaluations in the window,
// newest first, that stops at the page (offset + limit matches), and the total from the judge's
// hour counters (judgeHourSK: one Query of at most 24 small items a day of the window, exact,
// written in the evaluations' transactions) plus a count of the evaluations of the window's
// partial first and last hours. A feedback_state filter, which the counters do not split by,
// is counted by the same walk instead, bounded at judge.MaxScan evaluations past the page
// (Page.Truncated says it stopped early).
func (s *JudgeStore) Evaluations(ctx context.Context, projectID, judgeID string, q judge.Query) (judge.Page, error) {
	if q.FeedbackState != "" {
		return s.walkEvaluations(ctx, projectID, judgeID, q, -1)
	}
	if counted, err := s.counted(ctx, projectID, judgeID); err != nil {
		return judge.Page{}, err
	} else if counted < 0 || max(q.Start.UnixMicro(), 0) < counted {
		// The window reaches back before the counters count everything (a judge of an
		// earlier release): walk it.
		return s.walkEvaluations(ctx, projectID, judgeID, q, -1)
	}
	total, err := s.countEvaluations(ctx, projectID, judgeID, q)
	if err != nil {
		return judge.Page{}, err
	}
	page, err := s.walkEvaluations(ctx, projectID, judgeID, q, total)
	page.Total = total
	return page, err
}

// counted is when the judge's hour counters start to count every evaluation (judgeItem.Counted),
// in µs; -1 when they do not yet.
func (s *JudgeStore) counted(ctx context.Context, projectID, judgeID string) (int64, error) {
	res, err := s.t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name, Key: key(judgePK(projectID, judgeID), skJudge),
		ProjectionExpression: aws.String("hc"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, storageErr("read judge", err)
	}
	if _, ok := res.Item["hc"]; !ok {
		return -1, nil
	}
	return intOr(res.Item, "hc"), nil
}

// walkEvaluations reads q's page, newest first, counting the matches it meets. With a known
// total (>= 0) it stops at the page's last match; without, it reads on to count them all. It
// examines at most offset + limit + judge.MaxScan evaluations either way.
func (s *JudgeStore) walkEvaluations(ctx context.Context, projectID, judgeID string, q judge.Query, total int) (judge.Page, error) {
	var page judge.Page
	want := q.Offset + q.Limit
	if total >= 0 {
		want = min(want, total)
	}
	if want <= 0 && total >= 0 {
		return page, nil
	}
	in, err := s.evaluationQuery(projectID, judgeID, q, q.Start, q.End, false)
	if err != nil {
		return page, err
	}
	budget := q.Offset + q.Limit + s.maxScan
	for {
		// Ask for what the page still needs (a Query's Limit bounds the items it examines,
		// before the filter), and one more to know whether it has ended.
		n := budget - page.Scanned
		if total >= 0 {
			n = min(n, want+1-page.Total)
		}
		in.Limit = aws.Int32(int32(min(n, 1000)))
		out, err := s.t.api.Query(ctx, in)
		if err != nil {
			return page, storageErr("query evaluations", err)
		}
		page.Scanned += int(out.ScannedCount)
		for _, raw := range out.Items {
			page.Total++
			if page.Total <= q.Offset || len(page.Evaluations) >= q.Limit {
				continue
			}
			var it evalItem
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return page, fmt.Errorf("decode evaluation: %w", err)
			}
			page.Evaluations = append(page.Evaluations, it.toEvaluation())
		}
		switch {
		case len(out.LastEvaluatedKey) == 0, total >= 0 && page.Total >= want:
			return page, nil
		case page.Scanned >= budget:
			page.Truncated = true
			return page, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// countEvaluations is how many of the judge's evaluations match q (without a feedback state):
// the hour counters of the window's whole hours, and a count of the evaluations in its partial
// first and last hours.
func (s *JudgeStore) countEvaluations(ctx context.Context, projectID, judgeID string, q judge.Query) (int, error) {
	first := q.Start.UTC().Truncate(time.Hour)
	if first.Before(q.Start) {
		first = first.Add(time.Hour)
	}
	var end time.Time // the end of the window's last whole hour; zero: open
	if !q.End.IsZero() {
		end = q.End.Add(time.Microsecond).UTC().Truncate(time.Hour)
		if !end.After(first) {
			return s.countRange(ctx, projectID, judgeID, q, q.Start, q.End)
		}
	}
	total, err := s.countHours(ctx, projectID, judgeID, q.Result, first, end)
	if err != nil {
		return 0, err
	}
	if first.After(q.Start) {
		n, err := s.countRange(ctx, projectID, judgeID, q, q.Start, first.Add(-time.Microsecond))
		if err != nil {
			return 0, err
		}
		total += n
	}
	if !end.IsZero() && !end.After(q.End) {
		n, err := s.countRange(ctx, projectID, judgeID, q, end, q.End)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// countHours sums the judge's hour counters from the hour first up to end (zero: all after),
// one Query of the judge's partition (strongly consistent: the counters are the items'
// truth, committed with them).
func (s *JudgeStore) countHours(ctx context.Context, projectID, judgeID string, result *bool, first, end time.Time) (int, error) {
	k := expression.Key(infra.AttrPK).Equal(expression.Value(judgePK(projectID, judgeID)))
	if end.IsZero() {
		k = k.And(expression.Key(infra.AttrSK).Between(expression.Value(judgeHourSK(first)), expression.Value(prefixJudgeHour+"~")))
	} else {
		k = k.And(expression.Key(infra.AttrSK).Between(expression.Value(judgeHourSK(first)), expression.Value(judgeHourSK(end.Add(-time.Hour)))))
	}
	var total int64
	err := s.t.query(ctx, k, queryOpts{}, func(it map[string]types.AttributeValue) error {
		n, passed := intOr(it, "n"), intOr(it, "p")
		switch {
		case result == nil:
			total += n
		case *result:
			total += passed
		default:
			total += n - passed
		}
		return nil
	})
	return int(total), err
}

// countRange counts the evaluations matching q created from lo to hi (inclusive) with a COUNT
// Query of GSI1: it reads the evaluations of at most an hour.
func (s *JudgeStore) countRange(ctx context.Context, projectID, judgeID string, q judge.Query, lo, hi time.Time) (int, error) {
	in, err := s.evaluationQuery(projectID, judgeID, q, lo, hi, true)
	if err != nil {
		return 0, err
	}
	n := 0
	p := dynamodb.NewQueryPaginator(s.t.api, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return 0, storageErr("count evaluations", err)
		}
		n += int(out.Count)
	}
	return n, nil
}

// evaluationQuery is the GSI1 Query of the judge's evaluations created from lo to hi
// (inclusive; a zero bound is open), newest first, filtered on q's result and feedback state;
// count asks for their number only.
func (s *JudgeStore) evaluationQuery(projectID, judgeID string, q judge.Query, lo, hi time.Time, count bool) (*dynamodb.QueryInput, error) {
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(judgeEvaluationsGSI1PK(projectID, judgeID)))
	if !lo.IsZero() || !hi.IsZero() {
		// GSI1SK is "<16-digit µs>#<span id>": "<µs>" sorts before and "<µs>~" after every key
		// of that microsecond.
		from, to := "0", "9999999999999999~"
		if !lo.IsZero() {
			from = fmt.Sprintf("%016d", max(lo.UnixMicro(), 0))
		}
		if !hi.IsZero() {
			to = fmt.Sprintf("%016d~", max(hi.UnixMicro(), 0))
		}
		cond = cond.And(expression.Key(infra.AttrGSI1SK).Between(expression.Value(from), expression.Value(to)))
	}
	b := expression.NewBuilder().WithKeyCondition(cond)
	var filters []expression.ConditionBuilder
	if q.Result != nil {
		filters = append(filters, expression.Name("r").Equal(expression.Value(*q.Result)))
	}
	switch q.FeedbackState {
	case judge.WithFeedback:
		filters = append(filters, expression.Name("fb").Equal(expression.Value(true)))
	case judge.WithoutFeedback:
		filters = append(filters, expression.Name("fb").Equal(expression.Value(false)))
	}
	switch len(filters) {
	case 1:
		b = b.WithFilter(filters[0])
	case 2:
		b = b.WithFilter(filters[0].And(filters[1]))
	}
	expr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build evaluation query: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName: &s.t.name, IndexName: aws.String(infra.IndexGSI1), ScanIndexForward: aws.Bool(false),
		KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}
	if count {
		in.Select = types.SelectCount
	}
	return in, nil
}

// SpanEvaluations implements judge.Store with one Query of the span's partition.
func (s *JudgeStore) SpanEvaluations(ctx context.Context, projectID, spanID string) ([]judge.Evaluation, error) {
	var out []judge.Evaluation
	known := false
	err := s.t.query(ctx, partition(spanPK(projectID, spanID)), queryOpts{}, func(raw map[string]types.AttributeValue) error {
		sk := strAttr(raw, infra.AttrSK)
		switch {
		case sk == skSpan:
			known = true
		case strings.HasPrefix(sk, prefixEvaluation):
			var it evalItem
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return fmt.Errorf("decode evaluation: %w", err)
			}
			if !it.stub() {
				out = append(out, it.toEvaluation())
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !known && len(out) == 0 {
		return nil, errs.NotFound("span %s not found", spanID)
	}
	return out, nil
}
