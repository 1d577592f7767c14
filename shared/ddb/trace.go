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

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/trace"
)

// TraceStore keeps span summaries, trace and session aggregates and their time indexes (see
// keys.go for the layout). Per batch of spans it writes one summary item per changed span
// (under 1 KB: one write unit) and nothing else; the change stream's consumer (AggregateStore,
// over the same store) writes, per stream batch, one member item per trace with new spans
// (plus its keys-only index entry) and one update per trace and per session.
type TraceStore struct {
	t         *Table
	days      *dayRegistry
	timeIndex *timeIndexUse
	retention time.Duration // 0: items never expire (retention.go)
	// eventual: Summaries, Traces and Sessions read eventually consistent (Candidates).
	eventual bool
}

// Candidates returns the store for reading the records a list found in an index (GSI2 or the
// list index, both eventually consistent, the list index a stream batch behind the table):
// its Summaries, Traces and Sessions read eventually consistent, at half the read units, then
// strongly for any record not found, so that none the index found is left out. Reads by id
// (GET /spans/{id}, /traces/{id} and its tree, ?id=, ?trace_id=, ?session_id=) keep the
// strongly consistent store: a record is readable by its id as soon as its write answered.
// Ingestion never uses it.
func (s *TraceStore) Candidates() *TraceStore {
	c := *s
	c.eventual = true
	return &c
}

// read reads keys as the store reads records: strongly, or as Candidates says.
func (s *TraceStore) read(ctx context.Context, keys []map[string]types.AttributeValue) (map[string]map[string]types.AttributeValue, error) {
	if s.eventual {
		return s.t.batchGetEventual(ctx, keys)
	}
	return s.t.batchGet(ctx, keys)
}

var (
	_ trace.Index  = (*TraceStore)(nil)
	_ trace.Reader = (*TraceStore)(nil)
)

// NewTraceStore returns the tracing store in t.
func NewTraceStore(t *Table, opts ...TraceOption) *TraceStore {
	s := &TraceStore{t: t, days: &dayRegistry{t: t}, timeIndex: &timeIndexUse{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

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
	TokIn    int64             `dynamodbav:"ti,omitempty"` // absent (0) in summaries of earlier releases
	TokOut   int64             `dynamodbav:"to,omitempty"`
	Session  string            `dynamodbav:"ss,omitempty"`
	ErrCode  string            `dynamodbav:"ec,omitempty"`
	ErrCut   bool              `dynamodbav:"ecc,omitempty"`
	HasError bool              `dynamodbav:"er,omitempty"`
	Tags     map[string]string `dynamodbav:"tg,omitempty"`
	TagsCut  bool              `dynamodbav:"tgc,omitempty"`
	Prompt   string            `dynamodbav:"pv,omitempty"`
	Slug     string            `dynamodbav:"ps,omitempty"`
	Hash     string            `dynamodbav:"ph,omitempty"`
	Model    string            `dynamodbav:"md,omitempty"`
	// AB are the span's A/B choices (trace.Summary.ABChoices), read from the stream by
	// SignalJoin.
	AB          []spanChoiceAttr  `dynamodbav:"ab,omitempty"`
	TraceTags   map[string]string `dynamodbav:"ttg,omitempty"`
	SessionName string            `dynamodbav:"sn,omitempty"`
	SessionTags map[string]string `dynamodbav:"stg,omitempty"`
	RootInput   string            `dynamodbav:"ri,omitempty"`
	RootOutput  string            `dynamodbav:"ro,omitempty"`
	Created     int64             `dynamodbav:"ca"`
	Updated     int64             `dynamodbav:"ua"`
	Object      string            `dynamodbav:"o"` // the batch key without trace.BatchPrefix
	Offset      int64             `dynamodbav:"of"`
	Length      int64             `dynamodbav:"ln"`
	// Write is the id of the write that stored this version (16 bytes): a later write is
	// conditioned on it.
	Write []byte `dynamodbav:"w,omitempty"`
	TTL   int64  `dynamodbav:"ttl,omitempty"` // infra.AttrTTL: see retention.go
}

// spanChoiceAttr is one A/B choice of a span summary: its test and variant.
type spanChoiceAttr struct {
	Test    string `dynamodbav:"n"`
	Variant string `dynamodbav:"k"`
}

func toSummaryItem(projectID string, s trace.Summary) summaryItem {
	it := summaryItem{
		PK: spanPK(projectID, s.SpanID), SK: skSpan, Trace: s.TraceID, Parent: s.ParentSpanID,
		Name: s.Name, NameCut: s.NameCut, Kind: s.Kind, Status: s.Status, Start: s.StartedAt.UnixMicro(),
		Duration: s.DurationMS, Cost: s.Cost, TokIn: s.InputTokens, TokOut: s.OutputTokens,
		Session: s.SessionID, ErrCode: s.ErrorCode, ErrCut: s.ErrorCodeCut,
		HasError: s.HasError, Tags: s.Tags, TagsCut: s.TagsCut, Prompt: s.PromptVersionID, Slug: s.PromptSlug, Hash: s.PromptHash, Model: s.Model,
		TraceTags: s.TraceTags, SessionName: s.SessionName, SessionTags: s.SessionTags, RootInput: s.RootInput, RootOutput: s.RootOutput,
		Created: s.CreatedAt.UnixMicro(), Updated: s.UpdatedAt.UnixMicro(),
		Object: strings.TrimPrefix(s.Location.Key, trace.BatchPrefix(projectID)), Offset: s.Location.Offset, Length: s.Location.Length,
	}
	if s.EndedAt != nil {
		e := s.EndedAt.UnixMicro()
		it.End = &e
	}
	for _, c := range s.ABChoices {
		it.AB = append(it.AB, spanChoiceAttr{Test: c.Name, Variant: c.Variant})
	}
	if w, err := uuid.Parse(s.WriteID); err == nil {
		it.Write = w[:]
	}
	return it
}

func (it summaryItem) toSummary(projectID string) trace.Summary {
	s := trace.Summary{
		SpanID: strings.TrimPrefix(it.PK, spanPK(projectID, "")), TraceID: it.Trace, ParentSpanID: it.Parent,
		Name: it.Name, NameCut: it.NameCut, Kind: it.Kind, Status: it.Status, StartedAt: time.UnixMicro(it.Start).UTC(),
		DurationMS: it.Duration, Cost: it.Cost, InputTokens: it.TokIn, OutputTokens: it.TokOut,
		SessionID: it.Session, ErrorCode: it.ErrCode, ErrorCodeCut: it.ErrCut,
		HasError: it.HasError, Tags: it.Tags, TagsCut: it.TagsCut, PromptVersionID: it.Prompt, PromptSlug: it.Slug, PromptHash: it.Hash, Model: it.Model,
		TraceTags: it.TraceTags, SessionName: it.SessionName, SessionTags: it.SessionTags, RootInput: it.RootInput, RootOutput: it.RootOutput,
		CreatedAt: time.UnixMicro(it.Created).UTC(), UpdatedAt: time.UnixMicro(it.Updated).UTC(),
		Location: trace.Location{Key: trace.BatchPrefix(projectID) + it.Object, Offset: it.Offset, Length: it.Length},
	}
	if len(it.Write) > 0 {
		s.WriteID = idOf(it.Write)
	}
	for _, c := range it.AB {
		s.ABChoices = append(s.ABChoices, trace.ABChoice{Name: c.Test, Variant: c.Variant})
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
	items, err := s.read(ctx, keys)
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

// completionItem lists llm spans (16-byte binary UUIDs) that one batch linked to a prompt: the
// completions index a feedback link reads, one item per batch and prompt rather than an index
// entry per span.
type completionItem struct {
	PK    string   `dynamodbav:"PK"`
	SK    string   `dynamodbav:"SK"`
	Spans [][]byte `dynamodbav:"s,binaryset"`
}

// memberItem lists span ids (16-byte binary UUIDs, to stay small) that one batch added to a
// trace; its keys-only GSI2 entry, when the project has a time index (timeindex.go), is the
// time index of spans.
type memberItem struct {
	PK     string   `dynamodbav:"PK"`
	SK     string   `dynamodbav:"SK"`
	GSI2PK string   `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK string   `dynamodbav:"GSI2SK,omitempty"`
	Spans  [][]byte `dynamodbav:"s,binaryset"`
	TTL    int64    `dynamodbav:"ttl,omitempty"` // infra.AttrTTL: see retention.go
}

// costSum is a sum of costs (a delta of a trace's or session's cost) as DynamoDB adds it:
// rounded to bound.CostGrid, as every cost is. DynamoDB adds numbers exactly, in decimal, and
// fails an ADD whose result needs more than 38 significant digits: float noise in the delta
// (0.3-0.1 is 0.19999999999999998) would put digits down to 1e-17 into a sum that may reach
// 1e15 (shared/bound).
func costSum(c float64) float64 { return bound.Round(c, bound.CostGrid) }

// ApplySession implements trace.Index: one UpdateItem of the fields POST /sessions sets, which
// the change stream's consumer never computes, so it needs no version.
func (s *TraceStore) ApplySession(ctx context.Context, projectID string, d trace.SessionDelta) error {
	timed, err := s.timeIndexed(ctx, projectID, trace.IndexSessions)
	if err != nil {
		return err
	}
	if timed {
		if err := s.days.note(ctx, projectID, trace.IndexSessions, d.At); err != nil {
			return err
		}
	}
	up := expression.Set(expression.Name("ua"), expression.Value(d.At.UnixMicro())).
		Set(expression.Name("ca"), ifNotExists("ca", d.At.UnixMicro()))
	if timed {
		up = setTimeIndex(up, projectID, trace.IndexSessions, d.At, d.SessionID)
	}
	if d.Name != "" {
		up = up.Set(expression.Name("n"), expression.Value(d.Name))
	}
	if d.Attributes != "" {
		up = up.Set(expression.Name("attrs"), expression.Value(d.Attributes))
	}
	up = setTags(up, d.Tags)
	if ttl := s.expiry(d.At); ttl != 0 {
		up = up.Set(expression.Name(infra.AttrTTL), expression.Value(ttl))
	}
	expr, err := expression.NewBuilder().WithUpdate(up).Build()
	if err != nil {
		return fmt.Errorf("build update: %w", err)
	}
	_, err = s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(sessionPK(projectID, d.SessionID), skSession), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if err != nil {
		return storageErr("update session "+d.SessionID, err)
	}
	return nil
}

func isConditionFailed(err error) bool {
	var failed *types.ConditionalCheckFailedException
	return errors.As(err, &failed)
}

// setTimeIndex adds to up the GSI2 keys of a trace or session (id) in the time index of kind,
// unless the item has them: its entry is by its first write.
func setTimeIndex(up expression.UpdateBuilder, projectID, kind string, at time.Time, id string) expression.UpdateBuilder {
	return up.Set(expression.Name(infra.AttrGSI2PK), ifNotExists(infra.AttrGSI2PK, timeIndexPK(projectID, kind, at, shardOf(id)))).
		Set(expression.Name(infra.AttrGSI2SK), ifNotExists(infra.AttrGSI2SK, timeIndexSK(at, id)))
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
