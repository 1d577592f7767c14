package ddb

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/rollup"
	"github.com/plumehq/plume/shared/trace"
)

// Rollups: a project's metrics per time bucket, kept by the consumer of the table's change
// stream (see package rollup for what they count and why off the request path).
//
// An item per (project, dimension, grain, bucket): partition P#<project>#RU#<filter>#<value>
// (all spans: P#<project>#RU#), sort key <grain>#<bucket start> (H#2026120213, M#202612021304),
// so that a window is one Query. Its counters are top-level numbers, added to (ADD) by each
// batch of stream records that changes them.
//
// Exactly once: records come in shards, each delivered in order to one consumer at a time, but
// a batch can be delivered again (a retry after a failure, maybe split in two or with more
// records after it). Each item keeps, per shard, the sequence number of the last record whose
// change it has added (hw#<shard hash>); a write adds its sum to an item only if the item's
// mark is before the write's first record, and moves the mark to its last, in one conditional
// update. An item whose mark falls inside the write (a retry that overlaps what was added) is
// read, and only what is after its mark is added. So every record counts once in every item,
// whatever is retried, without a transaction. The sums are kept in RollupFunction's tumbling
// window and written once per window (rollup_window.go); Apply writes a batch's at once.
//
// What counts: the span summaries, trace items, judge evaluations (EVAL#) and people's
// feedback (FB#<user>; calibration feedback, FB#<user>#J#<judge>, is about a judge and is not
// counted) as stored: a change counts its new image minus its old. Deletions do not count:
// nothing the API serves deletes these items; DynamoDB's TTL expires them (retention.go), and,
// like the trace aggregates, the rollups keep counting what was stored; deleting a project
// deletes its rollups too.
const (
	prefixRollup = "RU#"
	rollupMark   = "hw#"
	// rollupSeqDigits is the width sequence numbers are padded to (DynamoDB Streams' are 21 to
	// 40 digits), so that string order is numeric order.
	rollupSeqDigits = 40
	// rollupConcurrency bounds the updates of a batch in flight.
	rollupConcurrency = 16
	// rollupRetries bounds the overlapping retries an item is read again for.
	rollupRetries = 5
)

func rollupPK(projectID string, d rollup.Dim) string {
	if d.Filter == rollup.All {
		return "P#" + projectID + "#" + prefixRollup
	}
	return "P#" + projectID + "#" + prefixRollup + string(d.Filter) + "#" + d.Value
}

func rollupSK(g rollup.Grain, start time.Time) string {
	return string(g) + "#" + start.UTC().Format(rollupLayout(g))
}

// rollupLayout is the time layout of g's sort keys.
func rollupLayout(g rollup.Grain) string {
	if g == rollup.Minute {
		return "200601021504"
	}
	return "2006010215"
}

// StreamRecord is one change of the table, as DynamoDB Streams reports it: INSERT (New only),
// MODIFY (Old and New) or REMOVE (Old only). Sequence orders the records of a shard.
type StreamRecord struct {
	EventName string
	Sequence  string
	Old, New  map[string]types.AttributeValue
	// At is when the change was made (the record's ApproximateCreationDateTime); zero when the
	// stream did not say.
	At time.Time
}

// RollupStore keeps and reads the rollups.
type RollupStore struct {
	t         *Table
	retention time.Duration
	stateMax  int // a window's state beyond it is written at once
}

// NewRollupStore is the rollups of t; retention (0: none) expires an item that long after its
// bucket, as the spans it counts expire (retention.go).
func NewRollupStore(t *Table, retention time.Duration) *RollupStore {
	return &RollupStore{t: t, retention: retention, stateMax: rollupStateMax}
}

// WithStateLimit is s with windows whose state is written at once beyond bytes (256 KB
// otherwise).
func (s *RollupStore) WithStateLimit(bytes int) *RollupStore {
	out := *s
	out.stateMax = bytes
	return &out
}

// Apply adds the changes of records, a batch of the stream shard named shard in sequence order,
// to the rollups: each item it changes is updated once (about one write unit per item of up to
// 1 KB), and records it has already added are skipped. It is ApplyWindow of a window of one
// batch.
func (s *RollupStore) Apply(ctx context.Context, shard string, records []StreamRecord) error {
	_, err := s.ApplyWindow(ctx, shard, records, StreamWindow{Final: true})
	return err
}

// mark is the sequence number of the last record of shard mark that item k has added.
func (s *RollupStore) mark(ctx context.Context, k rollup.Key, mark string) (string, error) {
	res, err := s.t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name,
		Key: key(rollupPK(k.ProjectID, k.Dim), rollupSK(k.Grain, k.Start)), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("#m"), ExpressionAttributeNames: map[string]string{"#m": mark}})
	if err != nil {
		return "", fmt.Errorf("read rollup mark: %w", err)
	}
	return strAttr(res.Item, mark), nil
}

// update adds c to item k and sets its mark to last, under cond.
func (s *RollupStore) update(ctx context.Context, k rollup.Key, c *rollup.Counters, mark, last string, cond expression.ConditionBuilder) error {
	up := expression.Set(expression.Name(mark), expression.Value(last))
	if s.retention > 0 {
		up = up.Set(expression.Name(infra.AttrTTL), expression.Value(k.Start.Add(k.Grain.Step()+s.retention).Unix()))
	}
	for name, v := range counterAttrs(c) {
		// Names hold models and prompts, which may have dots: never a path.
		up = up.Add(expression.NameNoDotSplit(name), expression.Value(v))
	}
	expr, err := expression.NewBuilder().WithUpdate(up).WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("build rollup update: %w", err)
	}
	_, err = s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(rollupPK(k.ProjectID, k.Dim), rollupSK(k.Grain, k.Start)),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("update rollup: %w", err)
	}
	return err
}

// Rollups implements rollup.Reader: one Query of the window (eventually consistent: the
// rollups follow the stream, a second or so behind the writes, anyway).
func (s *RollupStore) Rollups(ctx context.Context, projectID string, d rollup.Dim, g rollup.Grain, from, to time.Time) (map[time.Time]*rollup.Counters, error) {
	if !from.Before(to) {
		return map[time.Time]*rollup.Counters{}, nil
	}
	cond := expression.Key(infra.AttrPK).Equal(expression.Value(rollupPK(projectID, d))).
		And(expression.Key(infra.AttrSK).Between(expression.Value(rollupSK(g, from)), expression.Value(rollupSK(g, to.Add(-g.Step())))))
	out := map[time.Time]*rollup.Counters{}
	err := s.t.query(ctx, cond, queryOpts{eventual: true}, func(it map[string]types.AttributeValue) error {
		start, err := rollupStart(g, strAttr(it, infra.AttrSK))
		if err != nil {
			return err
		}
		out[start] = countersOf(it)
		return nil
	})
	return out, err
}

func rollupStart(g rollup.Grain, sk string) (time.Time, error) {
	t, err := time.Parse(rollupLayout(g), strings.TrimPrefix(sk, string(g)+"#"))
	if err != nil {
		return time.Time{}, fmt.Errorf("rollup sort key %q: %w", sk, err)
	}
	return t, nil
}

// countRecords adds up what records change, by rollup item.
func countRecords(records []StreamRecord) *rollup.Batch {
	b := rollup.NewBatch()
	for _, r := range records {
		countRecord(b, r)
	}
	return b
}

// countRecord adds to b what r changes.
func countRecord(b *rollup.Batch, r StreamRecord) {
	if r.EventName == "REMOVE" {
		return
	}
	if r.Old != nil {
		count(b, r.Old, -1)
	}
	count(b, r.New, 1)
}

// count adds what item counts (sign 1) or takes it back (-1).
func count(b *rollup.Batch, item map[string]types.AttributeValue, sign int64) {
	pk, sk := strAttr(item, infra.AttrPK), strAttr(item, infra.AttrSK)
	projectID, rest, ok := strings.Cut(strings.TrimPrefix(pk, "P#"), "#")
	if !ok || !strings.HasPrefix(pk, "P#") {
		return
	}
	switch {
	case sk == skSpan && strings.HasPrefix(rest, "S#"):
		var it summaryItem
		if attributevalue.UnmarshalMap(item, &it) != nil {
			return
		}
		sum := it.toSummary(projectID)
		b.AddSpan(projectID, rollup.Span{Start: sum.StartedAt, Kind: sum.Kind, Name: sum.Name, Model: sum.Model,
			Prompt: sum.PromptSlug, Tags: sum.Tags, DurationMS: sum.DurationMS, Cost: sum.Cost,
			InputTokens: sum.InputTokens, OutputTokens: sum.OutputTokens, Error: sum.HasError}, sign)
	case sk == skTrace && strings.HasPrefix(rest, "T#"):
		t := toTrace(projectID, strings.TrimPrefix(rest, "T#"), item)
		start := t.CreatedAt
		if t.StartedAt != nil {
			start = *t.StartedAt
		}
		b.AddTrace(projectID, rollup.Trace{Start: start, Error: t.Status == trace.StatusError, DurationMS: t.DurationMS}, sign)
	case strings.HasPrefix(sk, prefixEvaluation) && strings.HasPrefix(rest, "S#"):
		r, _ := item["r"].(*types.AttributeValueMemberBOOL)
		b.AddEvaluation(projectID, rollup.Evaluation{At: timeAttr(item, "ca"), Judge: strAttr(item, "j"),
			Passed: r != nil && r.Value}, sign)
	case strings.HasPrefix(sk, prefixFeedback) && !strings.Contains(sk, "#J#") && strings.HasPrefix(rest, "S#"):
		up, _ := item["up"].(*types.AttributeValueMemberBOOL)
		b.AddFeedback(projectID, rollup.Feedback{At: timeAttr(item, "ca"), Up: up != nil && up.Value, Prompt: strAttr(item, "ps")}, sign)
	}
}

// Attribute names of a rollup item's counters.
const (
	attrTraces       = "tr"
	attrErrorTraces  = "te"
	attrSpans        = "sp"
	attrErrorSpans   = "se"
	attrCost         = "c"
	attrInputTokens  = "ti"
	attrOutputTokens = "to"
	attrLLMCalls     = "lc"
	attrFeedbackUp   = "fu"
	attrFeedbackDown = "fd"
	// Sketch bins: <prefix><bin>, <prefix>z for rollup.ZeroBin.
	attrTraceLatency = "tl"
	attrSpanLatency  = "sl"
	// Per model and per judge: <prefix><model or judge id>.
	attrModelCalls   = "mc#"
	attrModelCost    = "m$#"
	attrModelInput   = "mi#"
	attrModelOutput  = "mo#"
	attrPromptSpans  = "ps#"
	attrPromptErrors = "pe#"
	attrPromptCost   = "p$#"
	attrPromptUp     = "pu#"
	attrPromptDown   = "pd#"
	attrJudgeEvals   = "jn#"
	attrJudgePassed  = "jp#"
	attrZeroBinLabel = "z"
)

// counterAttrs are the non-zero counters of c by attribute name.
func counterAttrs(c *rollup.Counters) map[string]any {
	out := map[string]any{}
	ints := func(name string, v int64) {
		if v != 0 {
			out[name] = v
		}
	}
	costs := func(name string, v float64) {
		if v := bound.Round(v, bound.CostGrid); v != 0 {
			out[name] = v
		}
	}
	ints(attrTraces, c.Traces)
	ints(attrErrorTraces, c.ErrorTraces)
	ints(attrSpans, c.Spans)
	ints(attrErrorSpans, c.ErrorSpans)
	costs(attrCost, c.Cost)
	ints(attrInputTokens, c.InputTokens)
	ints(attrOutputTokens, c.OutputTokens)
	ints(attrLLMCalls, c.LLMCalls)
	ints(attrFeedbackUp, c.FeedbackUp)
	ints(attrFeedbackDown, c.FeedbackDown)
	for bin, n := range c.TraceLatency {
		ints(binAttr(attrTraceLatency, bin), n)
	}
	for bin, n := range c.SpanLatency {
		ints(binAttr(attrSpanLatency, bin), n)
	}
	for m, mc := range c.Models {
		ints(attrModelCalls+m, mc.Calls)
		costs(attrModelCost+m, mc.Cost)
		ints(attrModelInput+m, mc.InputTokens)
		ints(attrModelOutput+m, mc.OutputTokens)
	}
	for p, pc := range c.Prompts {
		ints(attrPromptSpans+p, pc.Spans)
		ints(attrPromptErrors+p, pc.ErrorSpans)
		costs(attrPromptCost+p, pc.Cost)
		ints(attrPromptUp+p, pc.FeedbackUp)
		ints(attrPromptDown+p, pc.FeedbackDown)
	}
	for j, jc := range c.Judges {
		ints(attrJudgeEvals+j, jc.Evaluations)
		ints(attrJudgePassed+j, jc.Passed)
	}
	return out
}

func isZero(c *rollup.Counters) bool { return len(counterAttrs(c)) == 0 }

func binAttr(prefix string, bin int32) string {
	if bin == rollup.ZeroBin {
		return prefix + attrZeroBinLabel
	}
	return prefix + strconv.Itoa(int(bin))
}

// countersOf reads a rollup item's counters.
func countersOf(it map[string]types.AttributeValue) *rollup.Counters {
	out := rollup.NewCounters()
	model := func(m string) *rollup.ModelCounters {
		if out.Models[m] == nil {
			out.Models[m] = &rollup.ModelCounters{}
		}
		return out.Models[m]
	}
	judge := func(j string) *rollup.JudgeCounters {
		if out.Judges[j] == nil {
			out.Judges[j] = &rollup.JudgeCounters{}
		}
		return out.Judges[j]
	}
	for name := range it {
		n := intOr(it, name)
		switch {
		case name == attrTraces:
			out.Traces = n
		case name == attrErrorTraces:
			out.ErrorTraces = n
		case name == attrSpans:
			out.Spans = n
		case name == attrErrorSpans:
			out.ErrorSpans = n
		case name == attrCost:
			out.Cost = floatAttr(it, name)
		case name == attrInputTokens:
			out.InputTokens = n
		case name == attrOutputTokens:
			out.OutputTokens = n
		case name == attrLLMCalls:
			out.LLMCalls = n
		case name == attrFeedbackUp:
			out.FeedbackUp = n
		case name == attrFeedbackDown:
			out.FeedbackDown = n
		case strings.HasPrefix(name, attrModelCalls):
			model(name[len(attrModelCalls):]).Calls = n
		case strings.HasPrefix(name, attrModelCost):
			model(name[len(attrModelCost):]).Cost = floatAttr(it, name)
		case strings.HasPrefix(name, attrModelInput):
			model(name[len(attrModelInput):]).InputTokens = n
		case strings.HasPrefix(name, attrModelOutput):
			model(name[len(attrModelOutput):]).OutputTokens = n
		case strings.HasPrefix(name, attrPromptSpans):
			out.Prompt(name[len(attrPromptSpans):]).Spans = n
		case strings.HasPrefix(name, attrPromptErrors):
			out.Prompt(name[len(attrPromptErrors):]).ErrorSpans = n
		case strings.HasPrefix(name, attrPromptCost):
			out.Prompt(name[len(attrPromptCost):]).Cost = floatAttr(it, name)
		case strings.HasPrefix(name, attrPromptUp):
			out.Prompt(name[len(attrPromptUp):]).FeedbackUp = n
		case strings.HasPrefix(name, attrPromptDown):
			out.Prompt(name[len(attrPromptDown):]).FeedbackDown = n
		case strings.HasPrefix(name, attrJudgeEvals):
			judge(name[len(attrJudgeEvals):]).Evaluations = n
		case strings.HasPrefix(name, attrJudgePassed):
			judge(name[len(attrJudgePassed):]).Passed = n
		case strings.HasPrefix(name, attrTraceLatency):
			if bin, ok := binOf(name[len(attrTraceLatency):]); ok {
				out.TraceLatency.Add(bin, n)
			}
		case strings.HasPrefix(name, attrSpanLatency):
			if bin, ok := binOf(name[len(attrSpanLatency):]); ok {
				out.SpanLatency.Add(bin, n)
			}
		}
	}
	return out
}

func binOf(label string) (int32, bool) {
	if label == attrZeroBinLabel {
		return rollup.ZeroBin, true
	}
	n, err := strconv.ParseInt(label, 10, 32)
	return int32(n), err == nil
}

// shardHash names a shard in an attribute name: its id is long and never read back.
func shardHash(shard string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(shard))
	return strconv.FormatUint(h.Sum64(), 36)
}

func padSeq(seq string) string {
	if len(seq) >= rollupSeqDigits {
		return seq
	}
	return strings.Repeat("0", rollupSeqDigits-len(seq)) + seq
}

// errNoShard is Apply's error for records of no shard.
var errNoShard = errors.New("rollup: stream records without a shard")
