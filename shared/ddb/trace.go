package ddb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
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
	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/trace"
)

// TraceStore keeps span summaries, trace and session aggregates and their time indexes (see
// keys.go for the layout). Per batch it writes one summary item per changed span (under 1 KB:
// one write unit), one member item per trace with new spans (plus its keys-only index entry),
// and one update per trace and per session, with a second only when the batch moves a trace's
// or session's start earlier or its end later than stored.
type TraceStore struct {
	t    *Table
	days *dayRegistry
}

var (
	_ trace.Index  = (*TraceStore)(nil)
	_ trace.Reader = (*TraceStore)(nil)
)

// NewTraceStore returns the tracing store in t.
func NewTraceStore(t *Table) *TraceStore { return &TraceStore{t: t, days: &dayRegistry{t: t}} }

// putConcurrency bounds the parallel conditional puts of one batch's summaries.
const putConcurrency = 16

// tagPrefix prefixes the top-level attributes that hold a trace's or session's tags: setting
// one tag is then a plain SET, commutative with every other writer.
const tagPrefix = "g:"

// summaryItem is a span summary. Attribute names are short on purpose: they count towards the
// item size, which is kept under the 1 KB of one write unit.
type summaryItem struct {
	PK       string            `dynamodbav:"PK"`
	SK       string            `dynamodbav:"SK"`
	Trace    string            `dynamodbav:"t"`
	Parent   string            `dynamodbav:"p,omitempty"`
	Name     string            `dynamodbav:"n"`
	NameCut  bool              `dynamodbav:"nc,omitempty"`
	Kind     string            `dynamodbav:"k"`
	Status   string            `dynamodbav:"st,omitempty"`
	Start    int64             `dynamodbav:"sa"`
	End      *int64            `dynamodbav:"ea,omitempty"`
	Duration *float64          `dynamodbav:"d,omitempty"`
	Cost     *float64          `dynamodbav:"c,omitempty"`
	Session  string            `dynamodbav:"ss,omitempty"`
	ErrCode  string            `dynamodbav:"ec,omitempty"`
	ErrCut   bool              `dynamodbav:"ecc,omitempty"`
	HasError bool              `dynamodbav:"er,omitempty"`
	Tags     map[string]string `dynamodbav:"tg,omitempty"`
	TagsCut  bool              `dynamodbav:"tgc,omitempty"`
	Prompt   string            `dynamodbav:"pv,omitempty"`
	Slug     string            `dynamodbav:"ps,omitempty"`
	Hash     string            `dynamodbav:"ph,omitempty"`
	Created  int64             `dynamodbav:"ca"`
	Updated  int64             `dynamodbav:"ua"`
	Object   string            `dynamodbav:"o"` // the batch key without trace.BatchPrefix
	Offset   int64             `dynamodbav:"of"`
	Length   int64             `dynamodbav:"ln"`
}

func toSummaryItem(projectID string, s trace.Summary) summaryItem {
	it := summaryItem{
		PK: spanPK(projectID, s.SpanID), SK: skSpan, Trace: s.TraceID, Parent: s.ParentSpanID,
		Name: s.Name, NameCut: s.NameCut, Kind: s.Kind, Status: s.Status, Start: s.StartedAt.UnixMicro(),
		Duration: s.DurationMS, Cost: s.Cost, Session: s.SessionID, ErrCode: s.ErrorCode, ErrCut: s.ErrorCodeCut,
		HasError: s.HasError, Tags: s.Tags, TagsCut: s.TagsCut, Prompt: s.PromptVersionID, Slug: s.PromptSlug, Hash: s.PromptHash,
		Created: s.CreatedAt.UnixMicro(), Updated: s.UpdatedAt.UnixMicro(),
		Object: strings.TrimPrefix(s.Location.Key, trace.BatchPrefix(projectID)), Offset: s.Location.Offset, Length: s.Location.Length,
	}
	if s.EndedAt != nil {
		e := s.EndedAt.UnixMicro()
		it.End = &e
	}
	return it
}

func (it summaryItem) toSummary(projectID string) trace.Summary {
	s := trace.Summary{
		SpanID: strings.TrimPrefix(it.PK, spanPK(projectID, "")), TraceID: it.Trace, ParentSpanID: it.Parent,
		Name: it.Name, NameCut: it.NameCut, Kind: it.Kind, Status: it.Status, StartedAt: time.UnixMicro(it.Start).UTC(),
		DurationMS: it.Duration, Cost: it.Cost, SessionID: it.Session, ErrorCode: it.ErrCode, ErrorCodeCut: it.ErrCut,
		HasError: it.HasError, Tags: it.Tags, TagsCut: it.TagsCut, PromptVersionID: it.Prompt, PromptSlug: it.Slug, PromptHash: it.Hash,
		CreatedAt: time.UnixMicro(it.Created).UTC(), UpdatedAt: time.UnixMicro(it.Updated).UTC(),
		Location: trace.Location{Key: trace.BatchPrefix(projectID) + it.Object, Offset: it.Offset, Length: it.Length},
	}
	if it.End != nil {
		e := time.UnixMicro(*it.End).UTC()
		s.EndedAt = &e
	}
	return s
}

// Summaries implements trace.Index.
func (s *TraceStore) Summaries(ctx context.Context, projectID string, spanIDs []string) (map[string]trace.Summary, error) {
	keys := make([]map[string]types.AttributeValue, 0, len(spanIDs))
	for _, id := range spanIDs {
		keys = append(keys, key(spanPK(projectID, id), skSpan))
	}
	items, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]trace.Summary, len(items))
	for _, raw := range items {
		var it summaryItem
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return nil, fmt.Errorf("decode span summary: %w", err)
		}
		sum := it.toSummary(projectID)
		out[sum.SpanID] = sum
	}
	return out, nil
}

// PutSummaries implements trace.Index with one conditional PutItem per summary, in parallel.
func (s *TraceStore) PutSummaries(ctx context.Context, projectID string, puts []trace.SummaryPut) ([]string, error) {
	conflicts := make([]bool, len(puts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(putConcurrency)
	for i, p := range puts {
		g.Go(func() error {
			item, err := marshal(toSummaryItem(projectID, p.Summary))
			if err != nil {
				return err
			}
			in := &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}
			if p.Prev == nil {
				in.ConditionExpression = aws.String("attribute_not_exists(PK)")
			} else {
				in.ConditionExpression = aws.String("ua = :prev")
				in.ExpressionAttributeValues = map[string]types.AttributeValue{":prev": num(p.Prev.UnixMicro())}
			}
			_, err = s.t.api.PutItem(gctx, in)
			var failed *types.ConditionalCheckFailedException
			switch {
			case errors.As(err, &failed):
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
	var stored []trace.Summary
	for i, c := range conflicts {
		if c {
			out = append(out, puts[i].Summary.SpanID)
		} else {
			stored = append(stored, puts[i].Summary)
		}
	}
	if err := s.addCompletions(ctx, projectID, stored); err != nil {
		return nil, err
	}
	return out, nil
}

// completionItem lists llm spans (16-byte binary UUIDs) that one write of summaries linked to a
// prompt: the completions index a feedback link reads, one item per batch and prompt rather
// than an index entry per span.
type completionItem struct {
	PK    string   `dynamodbav:"PK"`
	SK    string   `dynamodbav:"SK"`
	Spans [][]byte `dynamodbav:"s,binaryset"`
}

// addCompletions indexes the llm spans of sums that are linked to a prompt: one PutItem per
// prompt. A span written again may be listed again; readers drop repeats.
func (s *TraceStore) addCompletions(ctx context.Context, projectID string, sums []trace.Summary) error {
	bySlug := map[string][]trace.Summary{}
	for _, sum := range sums {
		if sum.Kind == trace.KindLLM && sum.PromptSlug != "" {
			bySlug[sum.PromptSlug] = append(bySlug[sum.PromptSlug], sum)
		}
	}
	for _, slug := range slices.Sorted(maps.Keys(bySlug)) {
		group := bySlug[slug]
		it := completionItem{PK: completionsPK(projectID, slug), SK: timeIndexSK(group[0].UpdatedAt, group[0].SpanID)}
		for _, sum := range group {
			u, err := uuid.Parse(sum.SpanID)
			if err != nil {
				continue // only UUID span ids are indexed (the SDKs' and OTLP's all are)
			}
			it.Spans = append(it.Spans, u[:])
		}
		if len(it.Spans) == 0 {
			continue
		}
		item, err := marshal(it)
		if err != nil {
			return err
		}
		if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}); err != nil {
			return storageErr("put completions", err)
		}
	}
	return nil
}

// memberItem lists span ids (16-byte binary UUIDs, to stay small) that one batch added to a
// trace; its keys-only GSI2 entry is the time index of spans.
type memberItem struct {
	PK     string   `dynamodbav:"PK"`
	SK     string   `dynamodbav:"SK"`
	GSI2PK string   `dynamodbav:"GSI2PK"`
	GSI2SK string   `dynamodbav:"GSI2SK"`
	Spans  [][]byte `dynamodbav:"s,binaryset"`
}

// AddMembers implements trace.Index.
func (s *TraceStore) AddMembers(ctx context.Context, projectID, traceID, batchID string, at time.Time, spanIDs []string) error {
	ids := make([][]byte, 0, len(spanIDs))
	for _, id := range spanIDs {
		u, err := uuid.Parse(id)
		if err != nil {
			return fmt.Errorf("span id %q: %w", id, err)
		}
		ids = append(ids, u[:])
	}
	item, err := marshal(memberItem{
		PK: tracePK(projectID, traceID), SK: memberSK(at, batchID),
		GSI2PK: timeIndexPK(projectID, trace.IndexSpans, at, shardOf(traceID)), GSI2SK: timeIndexSK(at, traceID+"#"+batchID),
		Spans: ids,
	})
	if err != nil {
		return err
	}
	if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}); err != nil {
		return storageErr("put trace members", err)
	}
	return s.days.note(ctx, projectID, trace.IndexSpans, at)
}

// ApplyTrace implements trace.Index: one UpdateItem adds the counts and cost and sets what is
// not set yet; its old image tells whether the trace is new and whether the batch moved the
// trace's start or end, which a conditional second update then fixes.
func (s *TraceStore) ApplyTrace(ctx context.Context, projectID string, d trace.TraceDelta) (bool, string, error) {
	pk := tracePK(projectID, d.TraceID)
	up := expression.Add(expression.Name("sc"), expression.Value(d.Spans)).
		Add(expression.Name("ec"), expression.Value(d.Errors)).
		Add(expression.Name("cost"), expression.Value(costSum(d.Cost))).
		Set(expression.Name("ua"), expression.Value(d.At.UnixMicro())).
		Set(expression.Name("ca"), ifNotExists("ca", d.At.UnixMicro())).
		Set(expression.Name(infra.AttrGSI2PK), ifNotExists(infra.AttrGSI2PK, timeIndexPK(projectID, trace.IndexTraces, d.At, shardOf(d.TraceID)))).
		Set(expression.Name(infra.AttrGSI2SK), ifNotExists(infra.AttrGSI2SK, timeIndexSK(d.At, d.TraceID)))
	up = setSpan(up, d.MinStart, d.MaxEnd)
	if d.SessionID != "" {
		up = up.Set(expression.Name("ss"), ifNotExists("ss", d.SessionID))
	}
	if d.Root != nil {
		up = up.Set(expression.Name("n"), expression.Value(d.Root.Name)).
			Set(expression.Name("root"), expression.Value(d.Root.SpanID)).
			Set(expression.Name("rst"), expression.Value(d.Root.Status)).
			Set(expression.Name("ri"), expression.Value(d.Root.Input)).
			Set(expression.Name("ro"), expression.Value(d.Root.Output))
	} else {
		up = up.Set(expression.Name("n"), ifNotExists("n", d.FirstName))
	}
	if x := d.Explicit; x != nil {
		if x.Name != "" {
			up = up.Set(expression.Name("xn"), expression.Value(x.Name))
		}
		if x.Status != "" {
			up = up.Set(expression.Name("xst"), expression.Value(x.Status))
		}
		if x.Cost != nil {
			up = up.Set(expression.Name("ocost"), expression.Value(*x.Cost))
		}
		if x.Attributes != "" {
			up = up.Set(expression.Name("attrs"), expression.Value(x.Attributes))
		}
	}
	up = setTags(up, d.Tags)
	old, err := s.update(ctx, pk, skTrace, up, nil, types.ReturnValueAllOld)
	if err != nil {
		return false, "", fmt.Errorf("update trace %s: %w", d.TraceID, err)
	}
	created := old["ca"] == nil
	if created {
		if err := s.days.note(ctx, projectID, trace.IndexTraces, d.At); err != nil {
			return false, "", err
		}
	}
	sessionID := d.SessionID
	if v, ok := old["ss"].(*types.AttributeValueMemberS); ok {
		sessionID = v.Value
	}
	if err := s.widen(ctx, pk, skTrace, old, d.MinStart, d.MaxEnd); err != nil {
		return false, "", fmt.Errorf("widen trace %s: %w", d.TraceID, err)
	}
	joined := sessionID != "" && old["ss"] == nil
	if joined {
		// The trace joins its session now: list it there, once.
		item, err := marshal(map[string]any{"PK": sessionPK(projectID, sessionID), "SK": prefixSessTrace + d.TraceID, "ca": d.At.UnixMicro()})
		if err != nil {
			return false, "", err
		}
		if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}); err != nil {
			return false, "", storageErr("put session trace", err)
		}
	}
	return joined, sessionID, nil
}

// costSum is a sum of costs (a delta of a trace's or session's cost) as DynamoDB adds it:
// rounded to bound.CostGrid, as every cost is. DynamoDB adds numbers exactly, in decimal, and
// fails an ADD whose result needs more than 38 significant digits: float noise in the delta
// (0.3-0.1 is 0.19999999999999998) would put digits down to 1e-17 into a sum that may reach
// 1e15 (shared/bound).
func costSum(c float64) float64 { return bound.Round(c, bound.CostGrid) }

// ApplySession implements trace.Index, as ApplyTrace does for traces.
func (s *TraceStore) ApplySession(ctx context.Context, projectID string, d trace.SessionDelta) error {
	pk := sessionPK(projectID, d.SessionID)
	up := expression.Add(expression.Name("tc"), expression.Value(d.NewTraces)).
		Add(expression.Name("ec"), expression.Value(d.Errors)).
		Add(expression.Name("cost"), expression.Value(costSum(d.Cost))).
		Set(expression.Name("ua"), expression.Value(d.At.UnixMicro())).
		Set(expression.Name("ca"), ifNotExists("ca", d.At.UnixMicro())).
		Set(expression.Name(infra.AttrGSI2PK), ifNotExists(infra.AttrGSI2PK, timeIndexPK(projectID, trace.IndexSessions, d.At, shardOf(d.SessionID)))).
		Set(expression.Name(infra.AttrGSI2SK), ifNotExists(infra.AttrGSI2SK, timeIndexSK(d.At, d.SessionID)))
	up = setSpan(up, d.MinStart, d.MaxEnd)
	if d.Name != "" {
		up = up.Set(expression.Name("n"), expression.Value(d.Name))
	}
	if d.Attributes != "" {
		up = up.Set(expression.Name("attrs"), expression.Value(d.Attributes))
	}
	up = setTags(up, d.Tags)
	old, err := s.update(ctx, pk, skSession, up, nil, types.ReturnValueAllOld)
	if err != nil {
		return fmt.Errorf("update session %s: %w", d.SessionID, err)
	}
	if old["ca"] == nil {
		if err := s.days.note(ctx, projectID, trace.IndexSessions, d.At); err != nil {
			return err
		}
	}
	if err := s.widen(ctx, pk, skSession, old, d.MinStart, d.MaxEnd); err != nil {
		return fmt.Errorf("widen session %s: %w", d.SessionID, err)
	}
	return nil
}

// setSpan sets the start and end of a trace or session that has none yet; widen moves them.
func setSpan(up expression.UpdateBuilder, start time.Time, end *time.Time) expression.UpdateBuilder {
	if !start.IsZero() {
		up = up.Set(expression.Name("sa"), ifNotExists("sa", start.UnixMicro()))
	}
	if end != nil {
		up = up.Set(expression.Name("ea"), ifNotExists("ea", end.UnixMicro()))
	}
	return up
}

// widen moves a stored start earlier or end later when the batch reaches beyond them. Each
// update is conditioned on still being needed, so concurrent writers converge on the minimum
// start and maximum end whatever their order.
func (s *TraceStore) widen(ctx context.Context, pk, sk string, old map[string]types.AttributeValue, start time.Time, end *time.Time) error {
	if oldStart, ok := intAttr(old, "sa"); ok && !start.IsZero() && start.UnixMicro() < oldStart {
		cond := expression.Name("sa").GreaterThan(expression.Value(start.UnixMicro()))
		if _, err := s.update(ctx, pk, sk, expression.Set(expression.Name("sa"), expression.Value(start.UnixMicro())), &cond, types.ReturnValueNone); err != nil && !isConditionFailed(err) {
			return err
		}
	}
	if oldEnd, ok := intAttr(old, "ea"); ok && end != nil && end.UnixMicro() > oldEnd {
		cond := expression.Name("ea").LessThan(expression.Value(end.UnixMicro()))
		if _, err := s.update(ctx, pk, sk, expression.Set(expression.Name("ea"), expression.Value(end.UnixMicro())), &cond, types.ReturnValueNone); err != nil && !isConditionFailed(err) {
			return err
		}
	}
	return nil
}

// update runs one UpdateItem and returns the attributes asked for by rv.
func (s *TraceStore) update(ctx context.Context, pk, sk string, up expression.UpdateBuilder, cond *expression.ConditionBuilder, rv types.ReturnValue) (map[string]types.AttributeValue, error) {
	b := expression.NewBuilder().WithUpdate(up)
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	expr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build update: %w", err)
	}
	res, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(pk, sk), UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ReturnValues: rv,
	})
	if err != nil {
		if isConditionFailed(err) {
			return nil, err
		}
		return nil, storageErr("update "+sk, err)
	}
	return res.Attributes, nil
}

func isConditionFailed(err error) bool {
	var failed *types.ConditionalCheckFailedException
	return errors.As(err, &failed)
}

func ifNotExists(name string, v any) expression.SetValueBuilder {
	return expression.IfNotExists(expression.Name(name), expression.Value(v))
}

func setTags(up expression.UpdateBuilder, tags map[string]string) expression.UpdateBuilder {
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		up = up.Set(expression.NameNoDotSplit(tagPrefix+k), expression.Value(tags[k]))
	}
	return up
}

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func intAttr(item map[string]types.AttributeValue, name string) (int64, bool) {
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	return n, err == nil
}
