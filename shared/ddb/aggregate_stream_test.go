package ddb

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

// aggWorld is a table with a change stream, the spans written to it (their summaries, as the
// request path puts them) and the consumer under test.
type aggWorld struct {
	t       *testing.T
	client  *dynamodb.Client
	table   string
	store   *TraceStore
	api     *crashingAPI
	agg     *AggregateStore
	poller  *StreamPoller
	project string
	spans   map[string]trace.Summary // the latest version of each span written
	caught  []StreamRecord
}

func newAggWorld(t *testing.T) *aggWorld {
	t.Helper()
	client, _, table := ddbtest.NewStreamTable(t)
	w := &aggWorld{t: t, client: client, table: table, project: uuid.NewString(), spans: map[string]trace.Summary{}}
	w.api = &crashingAPI{API: client}
	w.store = NewTraceStore(NewTable(client, table))
	w.agg = NewAggregateStore(NewTraceStore(NewTable(w.api, table)))
	o := client.Options()
	w.poller = &StreamPoller{DB: client, TableName: table,
		Streams: NewStreamsClient(aws.Config{Region: o.Region, Credentials: o.Credentials}, ddbtest.Endpoint(t)),
		Apply: func(_ context.Context, _ string, rs []StreamRecord) error {
			w.caught = append(w.caught, rs...)
			return nil
		}}
	return w
}

// put writes summaries as the request path does, each a new span or a later version of one.
func (w *aggWorld) put(sums ...trace.Summary) {
	w.t.Helper()
	for _, s := range sums {
		item, err := marshal(toSummaryItem(w.project, s))
		require.NoError(w.t, err)
		_, err = w.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &w.table, Item: item})
		require.NoError(w.t, err)
		w.spans[s.SpanID] = s
	}
}

// records returns the stream's records not read yet.
func (w *aggWorld) records() []StreamRecord {
	w.t.Helper()
	for idle := 0; idle < 2; {
		busy, err := w.poller.Poll(context.Background())
		require.NoError(w.t, err)
		if idle++; busy {
			idle = 0
		}
	}
	out := w.caught
	w.caught = nil
	return out
}

// drain applies the stream until the consumer's own writes bring nothing new, each batch
// through deliver.
func (w *aggWorld) drain(deliver func(records []StreamRecord)) {
	w.t.Helper()
	for range 10 {
		rs := AggregateFilter.Pass(w.records())
		if len(rs) == 0 {
			return
		}
		deliver(rs)
	}
	w.t.Fatal("the stream kept bringing records")
}

// AggregateFilter passes what the consumer applies: span summaries and traces.
var AggregateFilter = StreamFilter{Keys: []string{"SPAN", "TRACE"}}

// applyUntilDone applies records under shard, again after each failure, as Lambda retries a
// failed batch.
func (w *aggWorld) applyUntilDone(shard string, rs []StreamRecord) {
	w.t.Helper()
	for range 500 {
		if err := w.agg.Apply(context.Background(), shard, rs); err == nil {
			return
		}
	}
	w.t.Fatal("a batch kept failing")
}

// check compares every trace's and session's stored aggregates with a recount of the spans
// written, each trace's members with its spans, and the prompt's completions with its linked
// llm spans.
func (w *aggWorld) check() {
	w.t.Helper()
	type totals struct {
		count, errors int
		cost          float64
		start, end    *time.Time
	}
	widen := func(t *totals, start time.Time, end *time.Time) {
		if t.start == nil || start.Before(*t.start) {
			t.start = &start
		}
		if end != nil && (t.end == nil || end.After(*t.end)) {
			t.end = end
		}
	}
	traces, sessions := map[string]*totals{}, map[string]*totals{}
	spansOf := map[string][]string{}
	var linked []string
	sessionOf := map[string]string{}
	for _, s := range w.spans {
		tt := traces[s.TraceID]
		if tt == nil {
			tt = &totals{}
			traces[s.TraceID] = tt
		}
		tt.count++
		if s.HasError {
			tt.errors++
		}
		tt.cost += derefCost(s.Cost)
		widen(tt, s.StartedAt, s.End())
		spansOf[s.TraceID] = append(spansOf[s.TraceID], s.SpanID)
		if s.PromptSlug != "" {
			linked = append(linked, s.SpanID)
		}
		if s.SessionID != "" {
			sessionOf[s.TraceID] = s.SessionID
		}
	}
	for traceID, session := range sessionOf {
		st := sessions[session]
		if st == nil {
			st = &totals{}
			sessions[session] = st
		}
		tt := traces[traceID]
		st.count++
		st.errors += tt.errors
		st.cost += tt.cost
		widen(st, *tt.start, tt.end)
	}
	ctx := context.Background()
	for id, want := range traces {
		got, err := w.store.Traces(ctx, w.project, []string{id})
		require.NoError(w.t, err)
		require.Len(w.t, got, 1, "trace %s", id)
		tr := got[0]
		assert.Equal(w.t, want.count, tr.SpanCount, "trace %s spans", id)
		assert.Equal(w.t, want.errors, tr.ErrorCount, "trace %s errors", id)
		assert.InDelta(w.t, bound.Round(want.cost, bound.CostGrid), tr.Cost, 1e-9, "trace %s cost", id)
		assert.Equal(w.t, want.start, tr.StartedAt, "trace %s start", id)
		assert.Equal(w.t, want.end, tr.EndedAt, "trace %s end", id)
		members, err := w.store.TraceSpanIDs(ctx, w.project, id)
		require.NoError(w.t, err)
		assert.ElementsMatch(w.t, spansOf[id], members, "trace %s members", id)
	}
	for id, want := range sessions {
		got, err := w.store.Sessions(ctx, w.project, []string{id})
		require.NoError(w.t, err)
		require.Len(w.t, got, 1, "session %s", id)
		s := got[0]
		assert.Equal(w.t, want.count, s.TraceCount, "session %s traces", id)
		assert.Equal(w.t, want.errors, s.ErrorCount, "session %s errors", id)
		assert.InDelta(w.t, bound.Round(want.cost, bound.CostGrid), s.Cost, 1e-9, "session %s cost", id)
		assert.Equal(w.t, want.start, s.StartedAt, "session %s start", id)
		assert.Equal(w.t, want.end, s.EndedAt, "session %s end", id)
		ids, err := w.store.SessionTraceIDs(ctx, w.project, id)
		require.NoError(w.t, err)
		var wantIDs []string
		for traceID, session := range sessionOf {
			if session == id {
				wantIDs = append(wantIDs, traceID)
			}
		}
		assert.ElementsMatch(w.t, wantIDs, ids, "session %s traces", id)
	}
	var listed []string
	err := w.store.t.query(ctx, partition(completionsPK(w.project, aggSlug)), queryOpts{}, func(item map[string]types.AttributeValue) error {
		var m memberItem
		if err := attributevalue.UnmarshalMap(item, &m); err != nil {
			return err
		}
		listed = append(listed, memberIDs(m)...)
		return nil
	})
	require.NoError(w.t, err)
	slices.Sort(listed)
	assert.ElementsMatch(w.t, linked, slices.Compact(listed), "the prompt's completions list every linked llm span")
}

// aggSlug is the prompt randomSpans links llm spans to.
const aggSlug = "support-bot"

// randomSpans makes spans of traces, some in sessions, with errors, costs and times; then
// later versions of some of them (changed cost and error, a start moved later or earlier).
func randomSpans(r *rand.Rand, traces int) (first, later []trace.Summary) {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	sessions := []string{uuid.NewString(), uuid.NewString()}
	for range traces {
		traceID := uuid.NewString()
		session := ""
		if r.IntN(3) > 0 {
			session = sessions[r.IntN(len(sessions))]
		}
		root := ""
		for i := range 1 + r.IntN(5) {
			start := base.Add(time.Duration(r.IntN(600_000)) * time.Millisecond)
			end := start.Add(time.Duration(1+r.IntN(5_000)) * time.Millisecond)
			s := trace.Summary{SpanID: uuid.NewString(), TraceID: traceID, Name: fmt.Sprintf("span-%d", i), Kind: "custom",
				StartedAt: start, EndedAt: &end, HasError: r.IntN(5) == 0, SessionID: session,
				CreatedAt: base, UpdatedAt: base.Add(time.Duration(i) * time.Second),
				Location: trace.Location{Key: trace.BatchKey("p", base, uuid.NewString())}}
			if r.IntN(2) == 0 {
				c := float64(r.IntN(1000)) / 10_000
				s.Cost = &c
			}
			if i == 0 {
				root = s.SpanID
				s.SessionName, s.TraceTags = "chat", map[string]string{"env": "prod"}
			} else {
				s.ParentSpanID = root
				if r.IntN(3) == 0 {
					s.Kind, s.PromptSlug = trace.KindLLM, aggSlug
				}
			}
			first = append(first, s)
			if r.IntN(4) == 0 {
				l := s
				c := float64(r.IntN(1000)) / 10_000
				l.Cost, l.HasError = &c, !s.HasError
				ls := s.StartedAt.Add(time.Duration(r.IntN(2_000)-1_000) * time.Millisecond)
				l.StartedAt = ls
				l.UpdatedAt = s.UpdatedAt.Add(time.Minute)
				later = append(later, l)
			}
		}
	}
	return first, later
}

// TestAggregatesFromTheStream: trace and session aggregates equal a recount of the spans
// stored, whatever the stream delivers again, split or interleaved across shards.
func TestAggregatesFromTheStream(t *testing.T) {
	t.Parallel()
	deliveries := []struct {
		name    string
		deliver func(w *aggWorld, r *rand.Rand, rs []StreamRecord)
	}{
		{"once", func(w *aggWorld, _ *rand.Rand, rs []StreamRecord) { w.applyUntilDone("shard-1", rs) }},
		{"twice", func(w *aggWorld, _ *rand.Rand, rs []StreamRecord) {
			w.applyUntilDone("shard-1", rs)
			w.applyUntilDone("shard-1", rs)
		}},
		{"split and again whole", func(w *aggWorld, r *rand.Rand, rs []StreamRecord) {
			cut := r.IntN(len(rs) + 1)
			w.applyUntilDone("shard-1", rs[:cut])
			w.applyUntilDone("shard-1", rs)
			w.applyUntilDone("shard-1", rs[cut:])
		}},
		{"two shards", func(w *aggWorld, r *rand.Rand, rs []StreamRecord) {
			shards := splitByItem(rs, 2)
			for len(shards[0])+len(shards[1]) > 0 {
				i := r.IntN(2)
				n := min(len(shards[i]), 1+r.IntN(7))
				w.applyUntilDone(fmt.Sprintf("shard-%d", i), shards[i][:n])
				shards[i] = shards[i][n:]
			}
		}},
		{"failing requests", func(w *aggWorld, r *rand.Rand, rs []StreamRecord) {
			var mu sync.Mutex
			w.api.fail = func() crash { // 1 in 16 before, 1 in 16 after
				mu.Lock()
				defer mu.Unlock()
				switch r.IntN(16) {
				case 0:
					return crashBefore
				case 1:
					return crashAfter
				}
				return 0
			}
			defer func() { w.api.fail = nil }()
			w.applyUntilDone("shard-1", rs)
		}},
	}
	for _, d := range deliveries {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, 1))
			w := newAggWorld(t)
			first, later := randomSpans(r, 12)
			w.put(first...)
			w.drain(func(rs []StreamRecord) { d.deliver(w, r, rs) })
			w.check()
			w.put(later...)
			w.drain(func(rs []StreamRecord) { d.deliver(w, r, rs) })
			w.check()
		})
	}
}

// TestAggregatesCrashAtEveryRequest fails the consumer at each of its requests in turn, before
// the request and after it (its answer lost), then delivers the batch again: the aggregates
// are exact every time.
func TestAggregatesCrashAtEveryRequest(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	first, later := randomSpans(r, 3)
	run := func(t *testing.T, failAt int64, when crash) (requests int64) {
		w := newAggWorld(t)
		w.put(first...)
		w.drain(func(rs []StreamRecord) { w.applyUntilDone("shard-1", rs) })
		w.put(later...)
		var n atomic.Int64
		w.api.fail = func() crash {
			if n.Add(1) == failAt {
				return when
			}
			return 0
		}
		w.drain(func(rs []StreamRecord) { w.applyUntilDone("shard-1", rs) })
		w.check()
		return n.Load()
	}
	total := run(t, 0, 0)
	require.Positive(t, total)
	for i := range total {
		for _, when := range []crash{crashBefore, crashAfter} {
			t.Run(fmt.Sprintf("request %d %s", i+1, when), func(t *testing.T) {
				t.Parallel()
				run(t, i+1, when)
			})
		}
	}
}

// splitByItem deals records into n shards by their item's key, keeping each item's records
// in order, as DynamoDB Streams does.
func splitByItem(rs []StreamRecord, n int) [][]StreamRecord {
	out := make([][]StreamRecord, n)
	for _, r := range rs {
		h := fnv.New32a()
		_, _ = h.Write([]byte(strAttr(r.New, "PK") + "/" + strAttr(r.New, "SK")))
		i := int(h.Sum32() % uint32(n))
		out[i] = append(out[i], r)
	}
	return out
}

// crash is when crashingAPI fails a request: not (0), before sending it, or after (the
// request took effect, its answer is lost).
type crash int

const (
	crashBefore crash = 1
	crashAfter  crash = 2
)

func (c crash) String() string { return [...]string{"", "before", "after"}[c] }

var errCrash = errors.New("crashed")

// crashingAPI is a DynamoDB client that fails the requests fail picks (nil: none).
type crashingAPI struct {
	API
	fail func() crash
}

func (c *crashingAPI) do(send func() error) error {
	var when crash
	if c.fail != nil {
		when = c.fail()
	}
	if when == crashBefore {
		return errCrash
	}
	if err := send(); err != nil {
		return err
	}
	if when == crashAfter {
		return errCrash
	}
	return nil
}

func (c *crashingAPI) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.GetItemOutput, err error) {
	err = c.do(func() error { out, err = c.API.GetItem(ctx, in, o...); return err })
	return out, err
}

func (c *crashingAPI) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.BatchGetItemOutput, err error) {
	err = c.do(func() error { out, err = c.API.BatchGetItem(ctx, in, o...); return err })
	return out, err
}

func (c *crashingAPI) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (out *dynamodb.QueryOutput, err error) {
	err = c.do(func() error { out, err = c.API.Query(ctx, in, o...); return err })
	return out, err
}

func (c *crashingAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.PutItemOutput, err error) {
	err = c.do(func() error { out, err = c.API.PutItem(ctx, in, o...); return err })
	return out, err
}

func (c *crashingAPI) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.UpdateItemOutput, err error) {
	err = c.do(func() error { out, err = c.API.UpdateItem(ctx, in, o...); return err })
	return out, err
}

// TestItemsListTheirIDsUntilFull: a small trace lists its spans in its own item, and a small
// session its traces; once the next batch's would not fit, they go to member items (a session's
// listing items), and so do all later ones. The list is each id once, those of the item first
// in the order received: what a reader saw of them stays the list's beginning (member items
// follow by time, listing items by trace id).
func TestItemsListTheirIDsUntilFull(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newAggWorld(t)
	traceID, sessionID, base := uuid.NewString(), uuid.NewString(), time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	steps := []int{20, inlineIDsMax - 20, 1, 3} // ids a step sends
	items := func(pk, prefix string) int32 {
		out, err := w.client.Query(ctx, &dynamodb.QueryInput{TableName: &w.table,
			KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :m)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": &types.AttributeValueMemberS{Value: pk}, ":m": &types.AttributeValueMemberS{Value: prefix}}})
		require.NoError(t, err)
		return out.Count
	}
	// run sends steps of ids; after each, the items hold them (wantItems: member or listing
	// items) and list lists them.
	run := func(what string, kept int, wantItems []int32, send func(n int), list func() ([]string, error), items func() int32, want func() int) {
		seen := []string{}
		for i, n := range steps {
			send(n)
			w.drain(func(rs []StreamRecord) { w.applyUntilDone("shard-1", rs) })
			w.check()
			ids, err := list()
			require.NoError(t, err)
			require.Len(t, ids, want())
			n := min(len(seen), kept)
			assert.Equal(t, seen[:n], ids[:n], "%s: what was listed stays the beginning", what)
			assert.Equal(t, wantItems[i], items(), "%s: items after %d", what, want())
			seen = ids
		}
	}
	span := func(traceID, session string, at time.Time) trace.Summary {
		return trace.Summary{SpanID: uuid.NewString(), TraceID: traceID, Name: "step", Kind: "custom", SessionID: session,
			StartedAt: at, EndedAt: &at, CreatedAt: base, UpdatedAt: base,
			Location: trace.Location{Key: trace.BatchKey("p", base, uuid.NewString())}}
	}

	run("a trace's spans", math.MaxInt, []int32{0, 0, 1, 2}, func(n int) {
		for range n {
			w.put(span(traceID, "", base.Add(time.Duration(len(w.spans))*time.Second)))
		}
	}, func() ([]string, error) { return w.store.TraceSpanIDs(ctx, w.project, traceID) },
		func() int32 { return items(tracePK(w.project, traceID), prefixMember) },
		func() int { return len(w.spans) })

	traces := 0
	run("a session's traces", inlineIDsMax, []int32{0, 0, 1, 4}, func(n int) {
		for range n {
			w.put(span(uuid.NewString(), sessionID, base.Add(time.Duration(len(w.spans))*time.Second)))
			traces++
		}
	}, func() ([]string, error) { return w.store.SessionTraceIDs(ctx, w.project, sessionID) },
		func() int32 { return items(sessionPK(w.project, sessionID), prefixSessTrace) },
		func() int { return traces })
}

// TestNarrowingWithNewcomers: a stream batch that narrows a span of a trace and adds another
// span to it (and a trace that narrows beside a trace joining its session) recomputes the
// extent with the newcomers, which the trace's (the session's) own item lists only once the
// batch's update is written.
func TestNarrowingWithNewcomers(t *testing.T) {
	t.Parallel()
	w := newAggWorld(t)
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	traceID, session := uuid.NewString(), uuid.NewString()
	span := func(traceID string, start, end time.Time) trace.Summary {
		return trace.Summary{SpanID: uuid.NewString(), TraceID: traceID, Name: "step", Kind: "custom", SessionID: session,
			StartedAt: start, EndedAt: &end, CreatedAt: base, UpdatedAt: base,
			Location: trace.Location{Key: trace.BatchKey("p", base, uuid.NewString())}}
	}
	a := span(traceID, base, base.Add(5*time.Minute))
	w.put(a)
	w.drain(func(rs []StreamRecord) { w.applyUntilDone("shard-1", rs) })
	w.check()

	narrowed := a
	narrowed.StartedAt, narrowed.UpdatedAt = base.Add(time.Minute), base.Add(time.Second)
	end := base.Add(2 * time.Minute)
	narrowed.EndedAt = &end
	w.put(narrowed, span(traceID, base.Add(-time.Minute), base.Add(10*time.Minute)), span(uuid.NewString(), base.Add(-time.Hour), base.Add(time.Hour)))
	w.drain(func(rs []StreamRecord) { w.applyUntilDone("shard-1", rs) })
	w.check()
}
