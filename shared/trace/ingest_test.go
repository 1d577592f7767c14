package trace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

type harness struct {
	// apply applies the table's change stream to the trace and session aggregates, as
	// RollupFunction does a second or so after each write: a test calls it before reading them.
	apply   func()
	svc     *trace.Service
	store   *ddb.TraceStore
	blobs   trace.Blobs
	ddbReqs *ddbtest.Counter
	s3Reqs  *blobtest.Counter
	project string
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	client, counter, name := ddbtest.NewStreamTable(t)
	blobs, s3Counter, _ := blobtest.New(t)
	store := ddb.NewTraceStore(ddb.NewTable(client, name))
	return &harness{
		apply: aggregator(t, name),
		svc:   trace.NewService(store, blobs, nil), store: store, blobs: blobs,
		ddbReqs: counter, s3Reqs: s3Counter, project: uuid.NewString(),
	}
}

// aggregator returns a function that applies the stream of table name, so far, to its trace
// and session aggregates (ddb.AggregateStore), through a client of its own (not counted).
func aggregator(t testing.TB, name string, opts ...ddb.TraceOption) func() {
	client := ddbtest.Client(t, nil)
	o := client.Options()
	p := &ddb.StreamPoller{DB: client, TableName: name,
		Streams: ddb.NewStreamsClient(aws.Config{Region: o.Region, Credentials: o.Credentials}, ddbtest.Endpoint(t)),
		Apply:   ddb.NewAggregateStore(ddb.NewTraceStore(ddb.NewTable(client, name), opts...)).Apply}
	return func() {
		t.Helper()
		require.NoError(t, p.Drain(context.Background()), "apply the stream to the aggregates")
	}
}

func ptr[T any](v T) *T { return &v }

func span(traceID, name string, parent *string, start time.Time, ms float64) trace.Span {
	end := start.Add(time.Duration(ms * float64(time.Millisecond)))
	return trace.Span{
		ID: uuid.NewString(), TraceID: traceID, ParentSpanID: parent, Name: name, Kind: trace.KindGeneric,
		StartedAt: start, EndedAt: &end, DurationMS: &ms, Attributes: json.RawMessage(`{}`),
		CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC(),
	}
}

func TestIngestStoresAndReadsBack(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	traceID, sessionID := uuid.NewString(), uuid.NewString()
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	root := span(traceID, "chat", nil, start, 900)
	root.SessionID, root.SessionName = &sessionID, ptr("support chat")
	root.InputData, root.OutputData = ptr(`[{"role":"user","content":"hi"}]`), ptr("hello!")
	child := span(traceID, "openai.chat", &root.ID, start.Add(100*time.Millisecond), 500)
	child.Kind, child.Cost, child.Status = trace.KindLLM, ptr(0.0042), ptr("error")
	child.Tags = trace.Tags{{Key: "env", Value: "prod"}}
	child.Attributes = json.RawMessage(`{"model":"gpt-4o","inputTokens":100}`)

	stored, err := h.svc.Ingest(ctx, h.project, []trace.Span{child, root})
	require.NoError(t, err)
	require.Len(t, stored, 2)
	assert.Equal(t, []string{child.ID, root.ID}, []string{stored[0].ID, stored[1].ID}, "stored spans in request order")
	assert.Equal(t, 1, h.s3Reqs.Count("PutObject"), "one object per batch")

	sums, err := h.store.Summaries(ctx, h.project, []string{root.ID, child.ID})
	require.NoError(t, err)
	require.Len(t, sums, 2)
	recs, err := trace.LoadRecords(ctx, h.blobs, map[string]trace.Location{root.ID: sums[root.ID].Location, child.ID: sums[child.ID].Location})
	require.NoError(t, err)
	assert.Equal(t, "hello!", *recs[root.ID].OutputData)
	assert.JSONEq(t, `{"model":"gpt-4o","inputTokens":100}`, string(recs[child.ID].Attributes))
	assert.Equal(t, map[string]string{"env": "prod"}, recs[child.ID].Tags.Map())

	h.apply()
	traces, err := h.store.Traces(ctx, h.project, []string{traceID})
	require.NoError(t, err)
	require.Len(t, traces, 1)
	tr := traces[0]
	assert.Equal(t, 2, tr.SpanCount)
	assert.Equal(t, 1, tr.ErrorCount)
	assert.Equal(t, "error", tr.Status)
	assert.Equal(t, "chat", tr.Name)
	assert.InDelta(t, 0.0042, tr.Cost, 1e-12)
	assert.InDelta(t, 900, *tr.DurationMS, 1e-9)
	assert.Equal(t, "hello!", *tr.RootSpanOutput)
	assert.Equal(t, sessionID, *tr.SessionID)

	sessions, err := h.store.Sessions(ctx, h.project, []string{sessionID})
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	assert.Equal(t, 1, sessions[0].TraceCount)
	assert.Equal(t, "support chat", *sessions[0].Name)

	ids, err := h.store.TraceSpanIDs(ctx, h.project, traceID)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{root.ID, child.ID}, ids)

	// The identical batch again changes nothing. Its first round takes the spans for new
	// without reading them (an SDK sends a span once): a batch object and two summary puts that
	// fail their condition; then it reads the spans and finds them unchanged.
	h.ddbReqs.Reset()
	h.s3Reqs.Reset()
	_, err = h.svc.Ingest(ctx, h.project, []trace.Span{child, root})
	require.NoError(t, err)
	assert.Equal(t, 1, h.s3Reqs.Count("PutObject"))
	assert.Equal(t, map[string]int{"PutItem": 2, "BatchGetItem": 1}, h.ddbReqs.Counts(),
		"a re-send: the first round's summary puts, the read of the spans")
	h.apply()
	traces, err = h.store.Traces(ctx, h.project, []string{traceID})
	require.NoError(t, err)
	assert.Equal(t, 2, traces[0].SpanCount)

	// A later write of the child changes only what it carries.
	update := child
	update.Status, update.Cost, update.OutputData, update.Tags = ptr("ok"), ptr(0.01), ptr("fixed"), trace.Tags{{Key: "retry", Value: "1"}}
	update.InputData, update.Attributes = nil, json.RawMessage(`{"outputTokens":7}`)
	update.UpdatedAt = time.Now().UTC().Add(time.Second)
	_, err = h.svc.Ingest(ctx, h.project, []trace.Span{update})
	require.NoError(t, err)
	sums, err = h.store.Summaries(ctx, h.project, []string{child.ID})
	require.NoError(t, err)
	recs, err = trace.LoadRecords(ctx, h.blobs, map[string]trace.Location{child.ID: sums[child.ID].Location})
	require.NoError(t, err)
	got := recs[child.ID]
	assert.Equal(t, "fixed", *got.OutputData)
	assert.Equal(t, map[string]string{"env": "prod", "retry": "1"}, got.Tags.Map())
	assert.JSONEq(t, `{"model":"gpt-4o","inputTokens":100,"outputTokens":7}`, string(got.Attributes))
	assert.Equal(t, trace.KindLLM, got.Kind, "kind is kept when the later write does not name one")
	h.apply()
	traces, err = h.store.Traces(ctx, h.project, []string{traceID})
	require.NoError(t, err)
	assert.Equal(t, 2, traces[0].SpanCount, "an update is not a new span")
	assert.Equal(t, 0, traces[0].ErrorCount)
	assert.InDelta(t, 0.01, traces[0].Cost, 1e-12)
}

// TestAggregatesUnderConcurrentResends is the consistency test: 10,000 spans over 100 traces and
// 20 sessions, in 500 batches sent concurrently, children before parents, every batch twice.
func TestAggregatesUnderConcurrentResends(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	const (
		traces        = 100
		spansPerTrace = 100
		sessions      = 20
		batchSize     = 20
	)
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	sessionIDs := make([]string, sessions)
	for i := range sessionIDs {
		sessionIDs[i] = uuid.NewString()
	}
	var all []trace.Span
	traceOf := map[string]int{}
	traceIDs := make([]string, traces)
	for ti := range traces {
		traceID := uuid.NewString()
		traceIDs[ti] = traceID
		start := base.Add(time.Duration(rng.IntN(3600)) * time.Second)
		session := sessionIDs[ti%sessions]
		root := span(traceID, fmt.Sprintf("trace-%d", ti), nil, start, float64(1000+rng.IntN(5000)))
		var spans []trace.Span
		for si := 1; si < spansPerTrace; si++ {
			sp := span(traceID, fmt.Sprintf("step-%d", si), &root.ID, start.Add(time.Duration(rng.IntN(20000))*time.Millisecond), float64(rng.IntN(9000)))
			if rng.IntN(10) == 0 {
				sp.Status = ptr(trace.StatusError)
			}
			if rng.IntN(3) == 0 {
				sp.Kind, sp.Cost = trace.KindLLM, ptr(float64(rng.IntN(100000))/1e7)
			}
			sp.SessionID = &session
			spans = append(spans, sp)
		}
		root.SessionID = &session
		spans = append(spans, root) // children before their parent
		for _, sp := range spans {
			traceOf[sp.ID] = ti
		}
		all = append(all, spans...)
	}
	// Interleave traces so batches mix them, keeping each trace's children before its root.
	slices.SortStableFunc(all, func(a, b trace.Span) int {
		return (traceOf[a.ID] % 7) - (traceOf[b.ID] % 7)
	})
	var batches [][]trace.Span
	for b := range slices.Chunk(all, batchSize) {
		batches = append(batches, b, b) // every batch sent twice
	}
	rng.Shuffle(len(batches), func(i, j int) {
		if i/2 != j/2 || rng.IntN(2) == 0 { // keep most pairs close, so copies race each other
			batches[i], batches[j] = batches[j], batches[i]
		}
	})

	work := make(chan []trace.Span)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for b := range work {
				_, err := h.svc.Ingest(ctx, h.project, slices.Clone(b))
				assert.NoError(t, err)
			}
		})
	}
	for _, b := range batches {
		work <- b
	}
	close(work)
	wg.Wait()
	h.apply()

	// Recompute every aggregate from the spans themselves.
	type agg struct {
		count, errors int
		cost          float64
		start, end    time.Time
	}
	wantTrace := map[string]*agg{}
	wantSession := map[string]*agg{}
	for _, sp := range all {
		a := wantTrace[sp.TraceID]
		if a == nil {
			a = &agg{start: sp.StartedAt, end: *sp.EndedAt}
			wantTrace[sp.TraceID] = a
		}
		a.count++
		if sp.HasError() {
			a.errors++
		}
		if sp.Cost != nil {
			a.cost += *sp.Cost
		}
		if sp.StartedAt.Before(a.start) {
			a.start = sp.StartedAt
		}
		if sp.EndedAt.After(a.end) {
			a.end = *sp.EndedAt
		}
	}
	for ti, traceID := range traceIDs {
		a := wantTrace[traceID]
		sid := sessionIDs[ti%sessions]
		s := wantSession[sid]
		if s == nil {
			s = &agg{start: a.start, end: a.end}
			wantSession[sid] = s
		}
		s.count++
		s.errors += a.errors
		s.cost += a.cost
		if a.start.Before(s.start) {
			s.start = a.start
		}
		if a.end.After(s.end) {
			s.end = a.end
		}
	}

	got, err := h.store.Traces(ctx, h.project, traceIDs)
	require.NoError(t, err)
	require.Len(t, got, traces)
	for _, tr := range got {
		want := wantTrace[tr.ID]
		assert.Equal(t, want.count, tr.SpanCount, "trace %s span_count", tr.ID)
		assert.Equal(t, want.errors, tr.ErrorCount, "trace %s error_count", tr.ID)
		assert.InDelta(t, want.cost, tr.Cost, 1e-9, "trace %s cost", tr.ID)
		assert.True(t, want.start.Equal(*tr.StartedAt), "trace %s started_at", tr.ID)
		assert.True(t, want.end.Equal(*tr.EndedAt), "trace %s ended_at", tr.ID)
		assert.InDelta(t, float64(want.end.Sub(want.start).Microseconds())/1000, *tr.DurationMS, 1e-9)
		ids, err := h.store.TraceSpanIDs(ctx, h.project, tr.ID)
		require.NoError(t, err)
		assert.Len(t, ids, spansPerTrace, "trace %s lists each span once", tr.ID)
	}
	gotSessions, err := h.store.Sessions(ctx, h.project, sessionIDs)
	require.NoError(t, err)
	require.Len(t, gotSessions, sessions)
	for _, s := range gotSessions {
		want := wantSession[s.ID]
		assert.Equal(t, want.count, s.TraceCount, "session %s trace_count", s.ID)
		assert.Equal(t, want.errors, s.ErrorCount, "session %s error_count", s.ID)
		assert.InDelta(t, want.cost, s.Cost, 1e-9, "session %s cost", s.ID)
		assert.InDelta(t, float64(want.end.Sub(want.start).Microseconds())/1000, *s.Duration, 1e-9, "session %s duration", s.ID)
	}
	sums, err := h.store.Summaries(ctx, h.project, func() []string {
		out := make([]string, len(all))
		for i, sp := range all {
			out[i] = sp.ID
		}
		return out
	}())
	require.NoError(t, err)
	assert.Len(t, sums, len(all), "no span lost")
}

// TestTraceJoinsSessionLater: a trace whose first spans carry no session is counted once in the
// session that a later span names.
func TestTraceJoinsSessionLater(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	traceID, sessionID := uuid.NewString(), uuid.NewString()
	start := time.Now().UTC().Add(-time.Minute)
	first := span(traceID, "child", ptr(uuid.NewString()), start, 10)
	_, err := h.svc.Ingest(ctx, h.project, []trace.Span{first})
	require.NoError(t, err)
	for range 2 {
		later := span(traceID, "root", nil, start, 20)
		later.SessionID = &sessionID
		_, err = h.svc.Ingest(ctx, h.project, []trace.Span{later})
		require.NoError(t, err)
		h.apply()
	}
	sessions, err := h.store.Sessions(ctx, h.project, []string{sessionID})
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	assert.Equal(t, 1, sessions[0].TraceCount)
	ids, err := h.store.SessionTraceIDs(ctx, h.project, sessionID)
	require.NoError(t, err)
	assert.Equal(t, []string{traceID}, ids)
}
