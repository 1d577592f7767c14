package ddb

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/internal/faultproxy"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/judge"
)

// judgeFixture is a judge of a fresh project in t's table, with spans to evaluate.
type judgeFixture struct {
	store *JudgeStore
	raw   *dynamodb.Client
	table string
	judge judge.Judge
}

func newJudgeFixture(t *testing.T, client *dynamodb.Client, table string) judgeFixture {
	t.Helper()
	now := time.Now().UTC()
	j := judge.Judge{ID: uuid.NewString(), ProjectID: uuid.NewString(), Name: "Brevity", Template: "Is it brief?",
		EvaluationType: judge.TypeBinary, SampleRate: 1, Criteria: []judge.Criterion{}, CreatedAt: now, UpdatedAt: now, TemplateVersion: 1}
	s := NewJudgeStore(NewTable(client, table))
	require.NoError(t, s.CreateJudge(context.Background(), j))
	return judgeFixture{store: s, raw: client, table: table, judge: j}
}

// spans stores n span summaries (as far as evaluations read them) and returns their ids.
func (f judgeFixture) spans(t *testing.T, n int) []string {
	t.Helper()
	ids := make([]string, n)
	var puts []types.WriteRequest
	flush := func() {
		_, err := f.raw.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{f.table: puts}})
		require.NoError(t, err)
		puts = nil
	}
	for i := range ids {
		ids[i] = uuid.NewString()
		puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			infra.AttrPK: &types.AttributeValueMemberS{Value: spanPK(f.judge.ProjectID, ids[i])},
			infra.AttrSK: &types.AttributeValueMemberS{Value: skSpan},
			"t":          &types.AttributeValueMemberS{Value: uuid.NewString()},
		}}})
		if len(puts) == 25 {
			flush()
		}
	}
	if len(puts) > 0 {
		flush()
	}
	return ids
}

func (f judgeFixture) evaluation(span string, at time.Time, pass bool) judge.Evaluation {
	return judge.Evaluation{SpanID: span, JudgeID: f.judge.ID, JudgeName: f.judge.Name, EvaluationType: judge.TypeBinary,
		Result: pass, CreatedAt: at, UpdatedAt: time.Now().UTC()}
}

// recount counts the judge's stored evaluations by hour, reading every one, and sums its hour
// counters and its judge item's counters: what the counters must equal.
func (f judgeFixture) recount(t *testing.T) (items, counters map[string][2]int64, judgeCounts [2]int64) {
	t.Helper()
	ctx := context.Background()
	items, counters = map[string][2]int64{}, map[string][2]int64{}
	tbl := NewTable(f.raw, f.table)
	err := tbl.query(ctx, expression.Key(infra.AttrGSI1PK).Equal(expression.Value(judgeEvaluationsGSI1PK(f.judge.ProjectID, f.judge.ID))),
		queryOpts{index: infra.IndexGSI1}, func(it map[string]types.AttributeValue) error {
			h := judgeHourSK(timeAttr(it, "ca"))
			c := items[h]
			c[0]++
			if r, _ := it["r"].(*types.AttributeValueMemberBOOL); r != nil && r.Value {
				c[1]++
			}
			items[h] = c
			return nil
		})
	require.NoError(t, err)
	err = tbl.query(ctx, expression.Key(infra.AttrPK).Equal(expression.Value(judgePK(f.judge.ProjectID, f.judge.ID))).
		And(expression.Key(infra.AttrSK).BeginsWith(prefixJudgeHour)), queryOpts{}, func(it map[string]types.AttributeValue) error {
		if n, p := intOr(it, "n"), intOr(it, "p"); n != 0 || p != 0 {
			counters[strAttr(it, infra.AttrSK)] = [2]int64{n, p}
		}
		return nil
	})
	require.NoError(t, err)
	j, err := f.store.Judge(ctx, f.judge.ProjectID, f.judge.ID)
	require.NoError(t, err)
	return items, counters, [2]int64{j.EvaluationCount, j.PassCount}
}

// assertExact checks the hour counters and the judge's counters against a recount, and that
// want evaluations are stored (any number when want < 0).
func (f judgeFixture) assertExact(t *testing.T, want int) {
	t.Helper()
	items, counters, judgeCounts := f.recount(t)
	assert.Equal(t, items, counters, "hour counters = recount by hour")
	var total [2]int64
	for _, c := range items {
		total[0], total[1] = total[0]+c[0], total[1]+c[1]
	}
	if want >= 0 {
		assert.Equal(t, int64(want), total[0])
	}
	assert.Equal(t, total, judgeCounts, "judge counters = recount")
}

// TestEvaluationCountersExactAfterFaults fails the evaluations' transactions at every step of
// a write of two transactions (new evaluations and changed verdicts, over several hours):
// before they take effect (ServerError, every attempt: the write fails) and after
// (DropAfterForward: the SDK's retry meets the first attempt's effect, its client token makes
// it a no-op). The write is then run again, as the evaluator's retry does: the judge's and the
// hour counters equal a recount of what is stored.
func TestEvaluationCountersExactAfterFaults(t *testing.T) {
	client, _, table := ddbtest.NewTable(t)
	p := faultproxy.New(t, ddbtest.Endpoint(t))
	viaProxy := dynamodb.New(client.Options(), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(p.URL()) })
	ctx := context.Background()
	base := time.Now().UTC().Truncate(time.Hour).Add(-48 * time.Hour)
	for _, fault := range []faultproxy.Fault{faultproxy.ServerError, faultproxy.DropAfterForward} {
		for nth := 1; nth <= 3; nth++ {
			t.Run(fmt.Sprintf("%s/transaction %d", fault, nth), func(t *testing.T) {
				f := newJudgeFixture(t, client, table)
				spans := f.spans(t, 150)
				var first, second []judge.Evaluation
				for i, s := range spans[:100] {
					first = append(first, f.evaluation(s, base.Add(time.Duration(i)*7*time.Minute), i%2 == 0))
				}
				_, err := f.store.PutEvaluations(ctx, f.judge, first)
				require.NoError(t, err)
				// Flip every third verdict (the first creation time stays), add 50 new.
				for i, s := range spans {
					switch {
					case i >= 100:
						second = append(second, f.evaluation(s, base.Add(time.Duration(i)*11*time.Minute), i%3 == 0))
					case i%3 == 0:
						second = append(second, f.evaluation(s, time.Now().UTC(), i%2 != 0))
					}
				}
				faulty := NewJudgeStore(NewTable(viaProxy, table))
				p.Reset()
				p.Fail(faultproxy.Rule{Op: "TransactWriteItems", Nth: nth, Following: faultproxy.Forever, Fault: fault})
				_, err = faulty.PutEvaluations(ctx, f.judge, second)
				p.Reset()
				if fault == faultproxy.ServerError && nth == 1 {
					require.Error(t, err, "the write fails at its first transaction")
				}
				f.assertExact(t, -1)
				_, err = f.store.PutEvaluations(ctx, f.judge, second)
				require.NoError(t, err)
				f.assertExact(t, 150)
			})
		}
	}
}

// scaled is small by default, large with PLUME_SCALE=1.
func scaled(small, large int) int {
	if os.Getenv("PLUME_SCALE") == "1" {
		return large
	}
	return small
}

// TestEvaluationListingCostFollowsPage lists a judge's evaluations (the default window, a
// result filter, a window inside hours) at two sizes 10x apart: requests stay the same and
// read units grow with the hours of the window, not with the evaluations. Every total is the
// recount's.
func TestEvaluationListingCostFollowsPage(t *testing.T) {
	ctx := context.Background()
	small := scaled(200, 2000)
	now := time.Now().UTC()
	type cost struct {
		requests int
		read     float64
	}
	measure := func(n int) map[string]cost {
		client, counter, table := ddbtest.NewTable(t)
		f := newJudgeFixture(t, client, table)
		spans := f.spans(t, n)
		evs := make([]judge.Evaluation, n)
		passed := 0
		// Spread over the last 10 days, newest first.
		for i, s := range spans {
			evs[i] = f.evaluation(s, now.Add(-time.Duration(i)*10*24*time.Hour/time.Duration(n)), i%4 != 0)
			if i%4 != 0 {
				passed++
			}
		}
		_, err := f.store.PutEvaluations(ctx, f.judge, evs)
		require.NoError(t, err)
		yes := true
		mid := now.Add(-5*24*time.Hour - 17*time.Minute)
		queries := []struct {
			name  string
			q     judge.Query
			total int
		}{
			{"default window", judge.Query{Limit: 50}, n},
			{"passed", judge.Query{Limit: 50, Result: &yes}, passed},
			{"window inside hours", judge.Query{Limit: 50, Start: mid, End: now.Add(-time.Minute)}, -1},
		}
		out := map[string]cost{}
		for _, qq := range queries {
			q := qq.q.Windowed(now)
			counter.Reset()
			page, err := f.store.Evaluations(ctx, f.judge.ProjectID, f.judge.ID, q)
			require.NoError(t, err)
			read, _ := counter.Units()
			out[qq.name] = cost{counter.Total(), read}
			want := qq.total
			if want < 0 {
				want = 0
				for _, e := range evs {
					if q.Matches(e) {
						want++
					}
				}
			}
			assert.Equal(t, want, page.Total, "%s at %d", qq.name, n)
			assert.Len(t, page.Evaluations, min(50, want))
			assert.False(t, page.Truncated)
		}
		return out
	}
	a, b := measure(small), measure(10*small)
	for name, ca := range a {
		cb := b[name]
		t.Logf("%-20s %6d evaluations: %d requests, %.1f read units; %6d: %d requests, %.1f read units (%.2fx)",
			name, small, ca.requests, ca.read, 10*small, cb.requests, cb.read, cb.read/ca.read)
		assert.Equal(t, ca.requests, cb.requests, name)
		assert.LessOrEqual(t, cb.read, 1.5*ca.read, name)
	}
}

// TestEvaluationListingFeedbackFilterIsBounded: a feedback_state filter, which the counters do
// not split by, is counted by a walk of at most offset + limit + judge.MaxScan evaluations
// (here 100); past that the page says it is truncated.
func TestEvaluationListingFeedbackFilterIsBounded(t *testing.T) {
	client, _, table := ddbtest.NewTable(t)
	f := newJudgeFixture(t, client, table)
	f.store.maxScan = 100
	ctx := context.Background()
	n := f.store.maxScan + 60
	spans := f.spans(t, n)
	evs := make([]judge.Evaluation, n)
	now := time.Now().UTC()
	for i, s := range spans {
		evs[i] = f.evaluation(s, now.Add(-time.Duration(i)*time.Second), true)
	}
	_, err := f.store.PutEvaluations(ctx, f.judge, evs)
	require.NoError(t, err)
	q := judge.Query{Limit: 10, FeedbackState: judge.WithoutFeedback}.Windowed(now)
	page, err := f.store.Evaluations(ctx, f.judge.ProjectID, f.judge.ID, q)
	require.NoError(t, err)
	assert.True(t, page.Truncated)
	assert.Equal(t, f.store.maxScan+10, page.Scanned)
	assert.Equal(t, f.store.maxScan+10, page.Total, "the matches among those examined")
	assert.Len(t, page.Evaluations, 10)
	// A window that holds fewer is exact.
	q.Start = now.Add(-30 * time.Second)
	page, err = f.store.Evaluations(ctx, f.judge.ProjectID, f.judge.ID, q)
	require.NoError(t, err)
	assert.False(t, page.Truncated)
	assert.Equal(t, 31, page.Total)
}

// TestEvaluationListingOfEarlierJudge: a judge of an earlier release has evaluations in no hour
// counter (no hc on its item): its listings walk the window and count exactly instead of
// answering short totals; its first evaluation write since sets when the counters start, after
// any evaluation written before could have been created.
func TestEvaluationListingOfEarlierJudge(t *testing.T) {
	client, _, table := ddbtest.NewTable(t)
	f := newJudgeFixture(t, client, table)
	ctx := context.Background()
	spans := f.spans(t, 31)
	now := time.Now().UTC()
	var evs []judge.Evaluation
	for i, s := range spans[:30] {
		evs = append(evs, f.evaluation(s, now.Add(-time.Duration(i)*time.Hour), i%3 == 0))
	}
	_, err := f.store.PutEvaluations(ctx, f.judge, evs)
	require.NoError(t, err)
	// What an earlier release stored: the same evaluations, no hour counters, no hc.
	tbl := NewTable(client, table)
	var hours []string
	require.NoError(t, tbl.query(ctx, expression.Key(infra.AttrPK).Equal(expression.Value(judgePK(f.judge.ProjectID, f.judge.ID))).
		And(expression.Key(infra.AttrSK).BeginsWith(prefixJudgeHour)), queryOpts{}, func(it map[string]types.AttributeValue) error {
		hours = append(hours, strAttr(it, infra.AttrSK))
		return nil
	}))
	require.NotEmpty(t, hours)
	for _, sk := range hours {
		_, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: key(judgePK(f.judge.ProjectID, f.judge.ID), sk)})
		require.NoError(t, err)
	}
	_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &table, Key: key(judgePK(f.judge.ProjectID, f.judge.ID), skJudge),
		UpdateExpression: aws.String("REMOVE hc")})
	require.NoError(t, err)

	yes := true
	list := func() (judge.Page, judge.Page) {
		all, err := f.store.Evaluations(ctx, f.judge.ProjectID, f.judge.ID, judge.Query{Limit: 5}.Windowed(now))
		require.NoError(t, err)
		passed, err := f.store.Evaluations(ctx, f.judge.ProjectID, f.judge.ID, judge.Query{Limit: 5, Result: &yes}.Windowed(now))
		require.NoError(t, err)
		return all, passed
	}
	all, passed := list()
	assert.Equal(t, 30, all.Total)
	assert.Equal(t, 10, passed.Total)
	assert.Equal(t, 30, all.Scanned, "walked")
	assert.Len(t, all.Evaluations, 5)

	// A write since sets hc; windows that reach back before it still walk, exactly.
	before := countedFrom(time.Now())
	_, err = f.store.PutEvaluations(ctx, f.judge, []judge.Evaluation{f.evaluation(spans[30], now, true)})
	require.NoError(t, err)
	counted, err := f.store.counted(ctx, f.judge.ProjectID, f.judge.ID)
	require.NoError(t, err)
	assert.Contains(t, []int64{before, countedFrom(time.Now())}, counted)
	all, passed = list()
	assert.Equal(t, 31, all.Total)
	assert.Equal(t, 11, passed.Total)
}
