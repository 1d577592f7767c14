package ddb

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/judge"
)

// fbCrashTable is lxCrashTable with its Queries counted and crashed too.
type fbCrashTable struct{ lxCrashTable }

func (a *fbCrashTable) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (out *dynamodb.QueryOutput, err error) {
	return out, a.c.step("Query", func() error { out, err = a.API.Query(context.WithoutCancel(ctx), in, o...); return err })
}

// fbFixture is a project whose stream batch holds every case the feedback index moves an item
// for, and where each item must end up.
type fbFixture struct {
	project string
	batch   []StreamRecord
	want    map[string][]string // GSI3 partition -> the items' SKs@PK, sorted
}

// newFBFixture stores, in a project of its own: span A with orphan feedback and the orphan
// flag up (the batch has A's summary first stored); span B with orphan feedback written after
// B was stored (the batch has the orphan's change), both of trace T1 in session S1; trace T2
// that joins session S2 (the batch has its change) with an evaluation of its span C under T2;
// feedback on span D of trace T3, already in session S3, written under T3 while it joined (the
// batch has the feedback's change); an evaluation of span E of trace T4, in no session.
func newFBFixture(t *testing.T, client *dynamodb.Client, name string) fbFixture {
	t.Helper()
	p := uuid.NewString()
	id := func() string { return uuid.NewString() }
	A, B, C, D, E := id(), id(), id(), id(), id()
	T1, T2, T3, T4 := id(), id(), id(), id()
	S1, S2, S3 := id(), id(), id()
	now := time.Now()
	put := func(item map[string]any) map[string]types.AttributeValue {
		av, err := attributevalue.MarshalMap(item)
		require.NoError(t, err)
		_, err = client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &name, Item: av})
		require.NoError(t, err)
		return av
	}
	summary := func(span, trace string) map[string]types.AttributeValue {
		return put(map[string]any{infra.AttrPK: spanPK(p, span), infra.AttrSK: skSpan, "t": trace, "pv": "v1"})
	}
	traceItem := func(trace, session string) map[string]types.AttributeValue {
		it := map[string]any{infra.AttrPK: tracePK(p, trace), infra.AttrSK: skTrace}
		if session != "" {
			it["ss"] = session
		}
		return put(it)
	}
	orphan := func(span string) map[string]types.AttributeValue {
		sk := feedbackSK("u1", "")
		return put(map[string]any{infra.AttrPK: spanPK(p, span), infra.AttrSK: sk, "id": id(), "sp": span, "up": true, "u": "u1",
			infra.AttrGSI3PK: orphanFeedbackGSI3PK(p), infra.AttrGSI3SK: orphanGSI3SK(now, span, sk), infra.AttrTTL: now.Add(OrphanTTL).Unix()})
	}
	underTrace := func(span, trace, sk string) map[string]types.AttributeValue {
		g3pk, g3sk := feedbackGSI3(p, trace, "", span, sk)
		it := map[string]any{infra.AttrPK: spanPK(p, span), infra.AttrSK: sk, "id": id(), "sp": span, "t": trace,
			infra.AttrGSI3PK: g3pk, infra.AttrGSI3SK: g3sk}
		if sk == evaluationSK("j1") {
			it["r"] = true
		}
		return put(it)
	}
	ctx := context.Background()
	require.NoError(t, NewTable(client, name).raiseOrphanFlag(ctx, p, now))
	traceItem(T1, S1)
	orphan(A)
	summaryA := summary(A, T1)
	summary(B, T1)
	orphanB := orphan(B)
	oldT2 := traceItem(T2, "")
	summary(C, T2)
	evalC := underTrace(C, T2, evaluationSK("j1"))
	newT2 := traceItem(T2, S2)
	traceItem(T3, S3)
	summary(D, T3)
	fbD := underTrace(D, T3, feedbackSK("u1", ""))
	traceItem(T4, "")
	summary(E, T4)
	evalE := underTrace(E, T4, evaluationSK("j1"))
	batch := []StreamRecord{
		{EventName: "INSERT", New: summaryA},
		{EventName: "INSERT", New: orphanB},
		{EventName: "INSERT", New: evalC},
		{EventName: "MODIFY", Old: oldT2, New: newT2},
		{EventName: "INSERT", New: fbD},
		{EventName: "INSERT", New: evalE},
	}
	for i := range batch {
		batch[i].Sequence = fmt.Sprintf("%021d", i+1)
	}
	fb, ev := feedbackSK("u1", ""), evaluationSK("j1")
	at := func(span, sk string) string { return sk + "@" + spanPK(p, span) }
	return fbFixture{project: p, batch: batch, want: map[string][]string{
		sessionFeedbackGSI3PK(p, S1): {at(A, fb), at(B, fb)},
		sessionFeedbackGSI3PK(p, S2): {at(C, ev)},
		sessionFeedbackGSI3PK(p, S3): {at(D, fb)},
		traceFeedbackGSI3PK(p, T1):   nil,
		traceFeedbackGSI3PK(p, T2):   nil,
		traceFeedbackGSI3PK(p, T3):   nil,
		traceFeedbackGSI3PK(p, T4):   {at(E, ev)},
		orphanFeedbackGSI3PK(p):      nil,
	}}
}

// state reads every GSI3 partition of f.want, and fails when a moved orphan kept its expiry.
func (f fbFixture) state(ctx context.Context, tbl *Table) (map[string][]string, error) {
	got := map[string][]string{}
	for pk := range f.want {
		var items []string
		err := tbl.query(ctx, expression.Key(infra.AttrGSI3PK).Equal(expression.Value(pk)), queryOpts{index: infra.IndexGSI3}, func(raw map[string]types.AttributeValue) error {
			if _, ok := raw[infra.AttrTTL]; ok && pk != orphanFeedbackGSI3PK(f.project) {
				return fmt.Errorf("%s@%s: moved but still expires", strAttr(raw, infra.AttrSK), strAttr(raw, infra.AttrPK))
			}
			items = append(items, strAttr(raw, infra.AttrSK)+"@"+strAttr(raw, infra.AttrPK))
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(items)
		got[pk] = items
	}
	return got, nil
}

func (f fbFixture) check(ctx context.Context, tbl *Table) error {
	got, err := f.state(ctx, tbl)
	if err != nil {
		return err
	}
	for pk, want := range f.want {
		slices.Sort(want)
		if !slices.Equal(want, got[pk]) {
			return fmt.Errorf("%s: got %v, want %v", pk, got[pk], want)
		}
	}
	return nil
}

// TestFeedbackIndexCrashAtEveryStep stops the consumer at every request of a batch in turn
// (the orphan flag, a new span's partition, the spans of orphans, a joining trace's items, the
// traces' sessions, each move), before and after it takes effect; then Lambda retries the
// batch and delivers it again: every item ends where its trace and session say, once.
func TestFeedbackIndexCrashAtEveryStep(t *testing.T) {
	client, _, name := ddbtest.NewTable(t)
	ctx := context.Background()
	crash := func(at int64, after bool) (*lxCrash, error) {
		f := newFBFixture(t, client, name)
		c := &lxCrash{at: at, after: after}
		crashing := NewFeedbackStore(NewTable(&fbCrashTable{lxCrashTable{API: client, c: c}}, name)).Indexed()
		err := crashing.Apply(ctx, "shard-1", f.batch)
		if c.n.Load() < at {
			if err != nil {
				return c, err
			}
			return c, f.check(ctx, NewTable(client, name))
		}
		retry := NewFeedbackStore(NewTable(client, name)).Indexed()
		for _, step := range []string{"retried", "delivered again"} {
			if err := retry.Apply(ctx, "shard-1", f.batch); err != nil {
				return c, fmt.Errorf("%s: %w", step, err)
			}
			if err := f.check(ctx, NewTable(client, name)); err != nil {
				return c, fmt.Errorf("%s: %w", step, err)
			}
		}
		return c, nil
	}
	c, err := crash(math.MaxInt64, false)
	require.NoError(t, err, "without a crash")
	steps := c.n.Load()
	t.Logf("the batch's %d requests: %v", steps, c.ops)
	require.GreaterOrEqual(t, steps, int64(8), "flag, span partition, orphans' spans, joining trace's items, sessions, 4 moves")
	for at := int64(1); at <= steps; at++ {
		for _, after := range []bool{false, true} {
			_, err := crash(at, after)
			require.NoError(t, err, "crash at request %d (after it took effect: %v)", at, after)
		}
	}
}

// TestFeedbackIndexWriteUnits prices, by AWS's rules (a write unit per KB of the item, twice in
// a transaction; each index projecting all attributes writes the item again; an update that
// moves an item's GSI3 key is a delete and a put there), what a typical evaluation and
// feedback cost to write and to move, as docs/feedback.md says.
func TestFeedbackIndexWriteUnits(t *testing.T) {
	p, span, trace, session := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	score := 4.0
	eval := toEvalItem(p, judgeEvaluation(span, trace, "The answer names the right city and cites its source.", &score), session)
	evalAV, err := attributevalue.MarshalMap(eval)
	require.NoError(t, err)
	reason := "Too long; the user asked for one line."
	fb := feedbackItem{PK: spanPK(p, span), SK: feedbackSK(uuid.NewString(), ""), ID: uuid.NewString(), Span: span, Trace: trace,
		PromptID: uuid.NewString(), Slug: "support-bot", Version: uuid.NewString(), Reason: &reason, UserID: uuid.NewString(),
		UserEmail: "reviewer@example.com", UserName: "A Reviewer", Created: time.Now().UnixMicro(), Updated: time.Now().UnixMicro()}
	fbAV, err := attributevalue.MarshalMap(fb)
	require.NoError(t, err)
	g3pk, g3sk := feedbackGSI3(p, trace, session, span, fb.SK)
	for k, v := range map[string]string{infra.AttrGSI3PK: g3pk, infra.AttrGSI3SK: g3sk, infra.AttrGSI1PK: promptFeedbackGSI1PK(p, "support-bot"),
		infra.AttrGSI1SK: timeIndexSK(time.Now(), span+"#"+fb.SK), "ss": session} {
		fbAV[k] = &types.AttributeValueMemberS{Value: v}
	}
	kb := func(av map[string]types.AttributeValue) int { return (ddbtest.ItemSize(av) + 1023) / 1024 }
	evalSize, fbSize := ddbtest.ItemSize(evalAV), ddbtest.ItemSize(fbAV)
	t.Logf("an evaluation is %d bytes, a feedback %d", evalSize, fbSize)
	// An evaluation: its transactional put (2 per KB), GSI1 (the judge's list) and GSI3.
	require.Equal(t, 4, 2*kb(evalAV)+kb(evalAV)+kb(evalAV))
	// A feedback: its update, GSI1 (the prompt's feedback) and GSI3.
	require.Equal(t, 3, kb(fbAV)+kb(fbAV)+kb(fbAV))
	// A move (an orphan adopted, or an item of a trace that joins its session): the update,
	// GSI1's copy, and GSI3's delete and put.
	require.Equal(t, 4, kb(fbAV)+kb(fbAV)+2*kb(fbAV))
}

// judgeEvaluation is a typical scored evaluation of span by a judge of two criteria.
func judgeEvaluation(span, trace, reason string, score *float64) judge.Evaluation {
	lo, hi, pass, conf, dur, cost := 1.0, 5.0, 3.8, 0.9, 812.0, 0.0004
	return judge.Evaluation{ID: uuid.NewString(), SpanID: span, TraceID: trace, JudgeID: uuid.NewString(), JudgeName: "Accuracy",
		EvaluationType: "scored", Result: true, Reason: reason, Confidence: &conf, Score: score, ScoreMin: &lo, ScoreMax: &hi,
		PassThreshold: &pass, Model: "gpt-4o-mini", DurationMS: &dur, Cost: &cost,
		CriteriaScores: map[string]judge.CriterionScore{"accuracy": {Score: score, Reason: "right city"}, "sources": {Score: score, Reason: "cited"}},
		CreatedAt:      time.Now(), UpdatedAt: time.Now()}
}
