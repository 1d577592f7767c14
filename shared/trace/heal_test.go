package trace_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/trace"
)

// crashAPI is DynamoDB that stops at a chosen request: from request number at on, every request
// fails, as if the process had died there. With after set, that request itself is carried out
// first and only its answer is lost (a timeout after the write, a crash before the reply).
// Requests it lets through run to completion even when their caller gives up, so that none
// lands after the test has moved on (in a deployment, trace.PendingGrace covers those).
type crashAPI struct {
	ddb.API
	at    int64
	after bool
	n     atomic.Int64
	mu    sync.Mutex
	ops   []string // the requests, numbered, for failure messages
}

var errCrashed = errors.New("crashed")

func (c *crashAPI) step(op string, run func() error) error {
	n := c.n.Add(1)
	c.mu.Lock()
	c.ops = append(c.ops, fmt.Sprintf("%d %s", n, op))
	c.mu.Unlock()
	switch {
	case c.at == 0 || n < c.at:
		return run()
	case n == c.at && c.after:
		_ = run()
	}
	return errCrashed
}

func (c *crashAPI) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.GetItemOutput, err error) {
	return out, c.step("GetItem", func() error { out, err = c.API.GetItem(context.WithoutCancel(ctx), in, o...); return err })
}

func (c *crashAPI) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.BatchGetItemOutput, err error) {
	return out, c.step("BatchGetItem", func() error { out, err = c.API.BatchGetItem(context.WithoutCancel(ctx), in, o...); return err })
}

func (c *crashAPI) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (out *dynamodb.QueryOutput, err error) {
	return out, c.step("Query", func() error { out, err = c.API.Query(context.WithoutCancel(ctx), in, o...); return err })
}

func (c *crashAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.PutItemOutput, err error) {
	return out, c.step("PutItem", func() error { out, err = c.API.PutItem(context.WithoutCancel(ctx), in, o...); return err })
}

func (c *crashAPI) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.UpdateItemOutput, err error) {
	return out, c.step("UpdateItem", func() error { out, err = c.API.UpdateItem(context.WithoutCancel(ctx), in, o...); return err })
}

func (c *crashAPI) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (out *dynamodb.TransactWriteItemsOutput, err error) {
	return out, c.step("TransactWriteItems", func() error { out, err = c.API.TransactWriteItems(context.WithoutCancel(ctx), in, o...); return err })
}

func (c *crashAPI) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.DeleteItemOutput, err error) {
	return out, c.step("DeleteItem", func() error { out, err = c.API.DeleteItem(context.WithoutCancel(ctx), in, o...); return err })
}

// crashBatch is a batch that exercises every write of ingestion: two traces, one of which joins
// a session only with this batch (its first span came before without one), a span updated with
// a later start (the trace's extent shrinks) and a new cost, an llm span linked to a prompt, an
// llm span of the prompt ended in this second request (listed again by its new batch), and a
// span stored under the second trace sent with the first (refused alone: stray, the last).
func crashBatch(project string, store *ddb.TraceStore, svc *trace.Service, t *testing.T) (batch []trace.Span, traceIDs []string, sessionID string) {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	t1, t2, sessionID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	early := span(t1, "early", ptr(uuid.NewString()), start, 100)
	early.Cost = ptr(0.25)
	started := span(t1, "openai.chat", ptr(uuid.NewString()), start.Add(700*time.Millisecond), 0)
	started.Kind, started.EndedAt, started.DurationMS = trace.KindLLM, nil, nil
	started.Link = &trace.PromptLink{PromptSlug: "support-bot"}
	stray := span(t2, "stray", nil, start, 10)
	_, err := svc.Ingest(ctx, project, []trace.Span{early, started, stray})
	require.NoError(t, err)
	ended := started
	ended.EndedAt, ended.OutputData = ptr(start.Add(time.Second)), ptr("the answer")
	stray.TraceID = t1

	moved := early
	moved.StartedAt = start.Add(time.Second) // later: the trace's start must follow
	moved.EndedAt, moved.Cost = ptr(start.Add(2*time.Second)), ptr(0.5)
	moved.UpdatedAt = moved.UpdatedAt.Add(time.Second)
	root := span(t1, "root", nil, start.Add(500*time.Millisecond), 3000)
	root.SessionID, root.SessionName = &sessionID, ptr("chat")
	root.Status, root.Cost = ptr("error"), ptr(0.125)
	llm := span(t1, "openai.chat", &root.ID, start.Add(600*time.Millisecond), 200)
	llm.Kind, llm.Cost = trace.KindLLM, ptr(0.0625)
	llm.Link = &trace.PromptLink{PromptSlug: "support-bot", PromptVersionID: uuid.NewString()}
	other := span(t2, "other-root", nil, start, 50)
	other.SessionID = &sessionID
	other.Cost = ptr(1.0)
	return []trace.Span{moved, root, llm, other, ended, stray}, []string{t1, t2}, sessionID
}

// TestIngestCrashAtEveryStep stops ingestion at every DynamoDB request of a batch in turn,
// before and after the request takes effect. Then the sweeper alone leaves every trace and
// session equal to a recomputation from what is stored, and the client's re-send (before or
// after the sweeper) leaves them, at once, equal to the same batch ingested without a fault:
// nothing lost, nothing counted twice.
func TestIngestCrashAtEveryStep(t *testing.T) {
	client, _, name := ddbtest.NewTable(t)
	blobs, _, _ := blobtest.New(t)
	healthy := ddb.NewTraceStore(ddb.NewTable(client, name))
	healthySvc := trace.NewService(healthy, blobs, nil)
	ctx := context.Background()

	// The reference: the batch without a fault.
	refProject := uuid.NewString()
	batch, refTraces, refSession := crashBatch(refProject, healthy, healthySvc, t)
	require.NoError(t, ingestCrashBatch(t, healthySvc, refProject, batch, "reference"))
	want := map[string]trace.Totals{}
	for _, id := range refTraces {
		r, err := healthy.RecountTrace(ctx, refProject, id)
		require.NoError(t, err)
		require.True(t, r.Exact(), "reference trace: %+v", r)
		want[id] = r.Stored
	}
	r, err := healthy.RecountSession(ctx, refProject, refSession)
	require.NoError(t, err)
	require.True(t, r.Exact(), "reference session: %+v", r)
	require.Equal(t, 2, r.Stored.Count)
	wantSession := r.Stored
	assert.Equal(t, 4, want[refTraces[0]].Count)
	assert.Equal(t, 1, want[refTraces[0]].Errors)
	assert.InDelta(t, 0.6875, want[refTraces[0]].Cost, 1e-12)
	assert.Equal(t, time.Date(2026, 11, 20, 10, 0, 0, 500e6, time.UTC), *want[refTraces[0]].Start, "the moved span's old start is gone")

	var tried, failed int
	for _, after := range []bool{false, true} {
		for at := int64(1); ; at++ {
			require.Less(t, at, int64(200), "bounded")
			project := uuid.NewString()
			batch, traceIDs, sessionID := crashBatch(project, healthy, healthySvc, t)
			crash := &crashAPI{API: client, at: at, after: after}
			crashed := trace.NewService(ddb.NewTraceStore(ddb.NewTable(crash, name)), blobs, nil)
			label := fmt.Sprintf("crash at request %d (after: %v)", at, after)
			err := ingestCrashBatch(t, crashed, project, batch, label)
			tried++
			if err == nil {
				require.Less(t, crash.n.Load(), at, "no request failed, so none may have been refused")
				break
			}
			require.ErrorIs(t, err, errCrashed)
			failed++

			if at%2 == 1 {
				// The sweeper alone leaves every aggregate equal to what is stored of the batch.
				sweep(t, healthy, label)
				checkExact(t, healthy, project, traceIDs, sessionID, label+", swept")
			}
			// The client, told the request failed, sends it again: its heal decides what the
			// failed request left (each span is now stored by one of the two), so every
			// aggregate is at once what the batch without a fault made; the sweeper changes
			// nothing after that.
			require.NoError(t, ingestCrashBatch(t, healthySvc, project, batch, label), label)
			for _, step := range []string{"sent again", "sent again and swept"} {
				if step == "sent again and swept" {
					sweep(t, healthy, label)
				}
				label := label + ", " + step
				checkExact(t, healthy, project, traceIDs, sessionID, label)
				for i, id := range traceIDs {
					r, err := healthy.RecountTrace(ctx, project, id)
					require.NoError(t, err, label)
					assert.True(t, r.Stored.Equal(want[refTraces[i]]), "%s: trace %d %+v, want %+v", label, i, r.Stored, want[refTraces[i]])
				}
				r, err := healthy.RecountSession(ctx, project, sessionID)
				require.NoError(t, err, label)
				assert.True(t, r.Stored.Equal(wantSession), "%s: session %+v, want %+v", label, r.Stored, wantSession)
				checkCompletions(t, ddb.NewTable(client, name), project, batch, label)
			}
		}
	}
	t.Logf("%d crashed ingests of %d, every one healed exactly", failed, tried)
	assert.Greater(t, failed, 10)
}

// ingestCrashBatch ingests a crashBatch: on success, its stray span (the last) is the one span
// refused.
func ingestCrashBatch(t *testing.T, svc *trace.Service, project string, batch []trace.Span, label string) error {
	t.Helper()
	res, err := svc.IngestBatch(context.Background(), project, batch)
	if err != nil {
		return err
	}
	stray := len(batch) - 1
	require.Len(t, res.Refused, 1, label)
	assert.Equal(t, stray, res.Refused[0].Index, label)
	assert.Equal(t, batch[stray].ID, res.Refused[0].ID, label)
	assert.Len(t, res.Stored, stray, label)
	return nil
}

// checkCompletions checks the prompt's completions after a crashBatch was stored: its two llm
// spans, each once, the one ended in a second request with its output.
func checkCompletions(t *testing.T, table *ddb.Table, project string, batch []trace.Span, label string) {
	t.Helper()
	ctx := context.Background()
	content := "You help."
	_, _, err := ddb.NewPromptStore(table).EnsureVersion(ctx, prompt.Version{ID: uuid.NewString(), PromptID: uuid.NewString(),
		ProjectID: project, Slug: "support-bot", Content: content, ContentHash: prompt.Hash(content), CreatedAt: time.Now().UTC()})
	require.NoError(t, err, label)
	page, err := ddb.NewFeedbackStore(table).PromptCompletions(ctx, project, "support-bot", feedback.CompletionQuery{Limit: 50})
	require.NoError(t, err, label)
	var got []string
	for _, c := range page.Completions {
		got = append(got, c.Summary.SpanID)
		if c.Summary.SpanID == batch[4].ID {
			assert.NotNil(t, c.Summary.EndedAt, "%s: the completion as ended", label)
		}
	}
	assert.ElementsMatch(t, []string{batch[2].ID, batch[4].ID}, got, "%s: the prompt's completions, each once", label)
}

// sweep runs the sweeper as if every request had ended.
func sweep(t *testing.T, store *ddb.TraceStore, label string) {
	t.Helper()
	_, err := store.Sweep(context.Background(), time.Now().Add(time.Hour))
	require.NoError(t, err, label)
}

// checkExact asserts that the traces and the session (those that exist) have no pending delta
// and equal a recomputation from what they are made of.
func checkExact(t *testing.T, store *ddb.TraceStore, project string, traceIDs []string, sessionID, label string) {
	t.Helper()
	ctx := context.Background()
	for i, id := range traceIDs {
		r, err := store.RecountTrace(ctx, project, id)
		if errs.CodeOf(err) == errs.CodeNotFound {
			continue // the crash came before anything of this trace was stored
		}
		require.NoError(t, err, label)
		assert.Zero(t, r.Pending, label)
		assert.True(t, r.Exact(), "%s: trace %d %+v", label, i, r)
	}
	if r, err := store.RecountSession(ctx, project, sessionID); errs.CodeOf(err) != errs.CodeNotFound {
		require.NoError(t, err, label)
		assert.Zero(t, r.Pending, label)
		assert.True(t, r.Exact(), "%s: session %+v", label, r)
	}
}

// TestConcurrentHealsApplyOnce heals one trace with many pending deltas from many goroutines at
// once: each delta is added exactly once.
func TestConcurrentHealsApplyOnce(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	traceID := uuid.NewString()
	const writes = 20
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
	for i := range writes {
		_, err := h.store.WriteTrace(ctx, h.project, trace.TraceWrite{ID: uuid.Must(uuid.NewV7()).String(), Delta: trace.TraceDelta{
			TraceID: traceID, Spans: 1, Errors: i % 2, Cost: 0.5, MinStart: start.Add(time.Duration(i) * time.Second), At: start,
		}})
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := h.store.HealTrace(ctx, h.project, traceID)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	traces, err := h.store.Traces(ctx, h.project, []string{traceID})
	require.NoError(t, err)
	require.Len(t, traces, 1)
	assert.Equal(t, writes, traces[0].SpanCount)
	assert.Equal(t, writes/2, traces[0].ErrorCount)
	assert.InDelta(t, writes*0.5, traces[0].Cost, 1e-12)
	assert.Equal(t, start, *traces[0].StartedAt)
}

// TestSessionCountsSpansBeforeJoin: a trace's spans written before it named its session count in
// the session once it does.
func TestSessionCountsSpansBeforeJoin(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	traceID, sessionID := uuid.NewString(), uuid.NewString()
	start := time.Now().UTC().Add(-time.Minute)
	child := span(traceID, "child", ptr(uuid.NewString()), start, 10)
	child.Cost, child.Status = ptr(0.75), ptr("error")
	_, err := h.svc.Ingest(ctx, h.project, []trace.Span{child})
	require.NoError(t, err)
	root := span(traceID, "root", nil, start.Add(-time.Second), 5000)
	root.SessionID, root.Cost = &sessionID, ptr(0.25)
	_, err = h.svc.Ingest(ctx, h.project, []trace.Span{root})
	require.NoError(t, err)

	sessions, err := h.store.Sessions(ctx, h.project, []string{sessionID})
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	s := sessions[0]
	assert.Equal(t, 1, s.TraceCount)
	assert.Equal(t, 1, s.ErrorCount, "the child's error, written before the trace joined")
	assert.InDelta(t, 1.0, s.Cost, 1e-12, "both spans' costs")
	assert.Equal(t, start.Add(-time.Second).Truncate(time.Microsecond), *s.StartedAt)
	r, err := h.store.RecountSession(ctx, h.project, sessionID)
	require.NoError(t, err)
	assert.True(t, r.Exact(), "%+v", r)
}

// TestSpanMovedLaterShrinksTrace: a span sent again with a later start (or an earlier end) moves
// the trace's start (end) with it.
func TestSpanMovedLaterShrinksTrace(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	traceID := uuid.NewString()
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
	a := span(traceID, "a", nil, start, 10_000)
	b := span(traceID, "b", &a.ID, start.Add(2*time.Second), 1000)
	_, err := h.svc.Ingest(ctx, h.project, []trace.Span{a, b})
	require.NoError(t, err)

	a.StartedAt, a.EndedAt = start.Add(time.Second), ptr(start.Add(4*time.Second))
	a.DurationMS = ptr(3000.0)
	a.UpdatedAt = a.UpdatedAt.Add(time.Second)
	_, err = h.svc.Ingest(ctx, h.project, []trace.Span{a})
	require.NoError(t, err)
	traces, err := h.store.Traces(ctx, h.project, []string{traceID})
	require.NoError(t, err)
	require.Len(t, traces, 1)
	assert.Equal(t, start.Add(time.Second), *traces[0].StartedAt)
	assert.Equal(t, start.Add(4*time.Second), *traces[0].EndedAt)
	r, err := h.store.RecountTrace(ctx, h.project, traceID)
	require.NoError(t, err)
	assert.True(t, r.Exact(), "%+v", r)
}

// TestFixTraceRepairsDrift: a trace whose stored aggregates drifted (as data written before
// pending deltas could have) is reported by RecountTrace and repaired by FixTrace.
func TestFixTraceRepairsDrift(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	traceID := uuid.NewString()
	sp := span(traceID, "root", nil, time.Now().UTC().Add(-time.Minute), 10)
	sp.Cost = ptr(0.5)
	_, err := h.svc.Ingest(ctx, h.project, []trace.Span{sp})
	require.NoError(t, err)
	// Drift: a delta whose span was never stored (what a crash between the two writes of the
	// old ingestion left).
	_, err = h.store.WriteTrace(ctx, h.project, trace.TraceWrite{ID: uuid.Must(uuid.NewV7()).String(), Delta: trace.TraceDelta{
		TraceID: traceID, Spans: 1, Cost: 9, At: time.Now().UTC(),
	}})
	require.NoError(t, err)
	_, err = h.store.HealTrace(ctx, h.project, traceID)
	require.NoError(t, err)

	r, err := h.store.RecountTrace(ctx, h.project, traceID)
	require.NoError(t, err)
	require.False(t, r.Exact())
	assert.Equal(t, 2, r.Stored.Count)
	assert.Equal(t, 1, r.Computed.Count)

	fixed, err := h.store.FixTrace(ctx, h.project, traceID)
	require.NoError(t, err)
	assert.Equal(t, r, fixed, "the recount it acted on")
	r, err = h.store.RecountTrace(ctx, h.project, traceID)
	require.NoError(t, err)
	assert.True(t, r.Exact(), "%+v", r)
	assert.InDelta(t, 0.5, r.Stored.Cost, 1e-12)
}

// TestUnstoredChangeWaitsForItsWriter: a write whose summary is not stored (its request may
// still be putting it) is neither counted nor dropped by another request's heal; its own
// writer's heal, or the sweeper once it is older than trace.PendingGrace, drops it.
func TestUnstoredChangeWaitsForItsWriter(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	traceID, writeID := uuid.NewString(), uuid.Must(uuid.NewV7()).String()
	sp := span(traceID, "root", nil, time.Now().UTC().Add(-time.Minute), 10)
	sp.Cost = ptr(0.5)
	// The pending delta of a write whose summary put has not happened (yet).
	_, err := h.store.WriteTrace(ctx, h.project, trace.TraceWrite{ID: writeID, Delta: trace.TraceDelta{
		TraceID: traceID, MinStart: sp.StartedAt, At: time.Now().UTC(),
		Changes: []trace.SpanChange{{SpanID: sp.ID, New: true, Cost: 0.5}},
	}})
	require.NoError(t, err)
	_, err = h.store.HealTrace(ctx, h.project, traceID) // another request's heal
	require.NoError(t, err)
	r, err := h.store.RecountTrace(ctx, h.project, traceID)
	require.NoError(t, err)
	assert.Equal(t, 1, r.Pending, "undecided: kept")

	_, err = h.store.Sweep(ctx, time.Now().Add(-trace.PendingGrace))
	require.NoError(t, err)
	r, err = h.store.RecountTrace(ctx, h.project, traceID)
	require.NoError(t, err)
	assert.Equal(t, 1, r.Pending, "younger than the grace: kept by the sweeper")

	_, err = h.store.HealTrace(ctx, h.project, traceID, trace.Written{WriteID: writeID}) // its writer: the put failed
	require.NoError(t, err)
	_, err = h.store.RecountTrace(ctx, h.project, traceID)
	assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "dropped, and no empty trace made")
}

// TestChangeOfUndecidedWriteWaits: a write that changes a span again after a write still
// undecided (one of its spans is not stored) waits for it, so that the earlier change, whose
// difference the later one builds on, is counted when the earlier write is decided.
func TestChangeOfUndecidedWriteWaits(t *testing.T) {
	client, _, name := ddbtest.NewTable(t)
	blobs, _, _ := blobtest.New(t)
	store := ddb.NewTraceStore(ddb.NewTable(client, name))
	svc := trace.NewService(store, blobs, nil)
	ctx, project, traceID := context.Background(), uuid.NewString(), uuid.NewString()
	start := time.Now().UTC().Add(-time.Minute)
	a, b := span(traceID, "a", nil, start, 10), span(traceID, "b", nil, start, 10)
	a.Cost, b.Cost = ptr(1.0), ptr(2.0)
	// A request that stopped after its pending delta (both spans) and a's summary put.
	key := trace.BatchKey(project, time.Now(), uuid.NewString())
	body := a.AppendJSON(nil)
	require.NoError(t, blobs.Put(ctx, key, body, "application/x-ndjson"))
	sum := trace.Summarize(a, trace.Location{Key: key, Length: int64(len(body))})
	_, err := store.WriteTrace(ctx, project, trace.TraceWrite{ID: uuid.Must(uuid.NewV7()).String(), Puts: []trace.SummaryPut{{Summary: sum}}, Delta: trace.TraceDelta{
		TraceID: traceID, MinStart: start, At: time.Now().UTC(),
		Changes: []trace.SpanChange{{SpanID: a.ID, New: true, Cost: 1}, {SpanID: b.ID, New: true, Cost: 2}},
	}})
	require.NoError(t, err)
	stored := a
	// Another request changes the stored span again, before the first request's write is
	// decided (it may still be running).
	stored.Cost, stored.UpdatedAt = ptr(5.0), stored.UpdatedAt.Add(time.Second)
	_, err = svc.Ingest(ctx, project, []trace.Span{stored})
	require.NoError(t, err)

	_, err = store.Sweep(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	r, err := store.RecountTrace(ctx, project, traceID)
	require.NoError(t, err)
	assert.Zero(t, r.Pending)
	assert.True(t, r.Exact(), "%+v", r)
	assert.Equal(t, 1, r.Stored.Count)
	assert.InDelta(t, 5.0, r.Stored.Cost, 1e-12)
}

// TestSessionOfConcurrentTraces: traces of one session written at the same moment by separate
// requests, whose heals contend for the session, all count in it once.
func TestSessionOfConcurrentTraces(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	sessionID := uuid.NewString()
	start := time.Now().UTC().Add(-time.Minute)
	const traces = 16
	var wg sync.WaitGroup
	for i := range traces {
		wg.Go(func() {
			sp := span(uuid.NewString(), "root", nil, start.Add(time.Duration(i)*time.Second), 10)
			sp.SessionID, sp.Cost, sp.Status = &sessionID, ptr(0.25), ptr("error")
			_, err := h.svc.Ingest(ctx, h.project, []trace.Span{sp})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	r, err := h.store.RecountSession(ctx, h.project, sessionID)
	require.NoError(t, err)
	assert.Zero(t, r.Pending)
	assert.True(t, r.Exact(), "%+v", r)
	assert.Equal(t, traces, r.Stored.Count)
	assert.Equal(t, traces, r.Stored.Errors)
	assert.InDelta(t, traces*0.25, r.Stored.Cost, 1e-12)
}

// TestSessionNarrows: a span sent again with a later start or an earlier end narrows its trace,
// and its session too when that trace made the session's start or end, whether the session is
// updated with the trace (direct) or through a pending delta (its update contended). A session
// kept its widest extent for good.
func TestSessionNarrows(t *testing.T) {
	for _, contended := range []bool{false, true} {
		t.Run(fmt.Sprintf("contended %v", contended), func(t *testing.T) {
			client, _, name := ddbtest.NewTable(t)
			blobs, _, _ := blobtest.New(t)
			store := ddb.NewTraceStore(ddb.NewTable(client, name))
			svc := trace.NewService(store, blobs, nil)
			ctx, project, sessionID := context.Background(), uuid.NewString(), uuid.NewString()
			at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
			a := span(uuid.NewString(), "a", nil, at, float64(10*time.Minute/time.Millisecond))
			b := span(uuid.NewString(), "b", nil, at.Add(time.Minute), float64(time.Minute/time.Millisecond))
			a.SessionID, b.SessionID = &sessionID, &sessionID
			_, err := svc.Ingest(ctx, project, []trace.Span{a, b})
			require.NoError(t, err)

			// a now starts at 10:03 and ends at 10:05: the session spans b's 10:01 to a's 10:05.
			a.StartedAt, a.EndedAt, a.DurationMS = at.Add(3*time.Minute), ptr(at.Add(5*time.Minute)), nil
			a.UpdatedAt = a.UpdatedAt.Add(time.Second)
			if contended {
				lost := &faultyHeals{API: client, lose: func(n int64, in *dynamodb.TransactWriteItemsInput) int {
					if n == 1 {
						return updateOf(in, sessionID) // another trace's heal changed the session first
					}
					return -1
				}}
				svc = trace.NewService(ddb.NewTraceStore(ddb.NewTable(lost, name)), blobs, nil)
			}
			_, err = svc.Ingest(ctx, project, []trace.Span{a})
			require.NoError(t, err)

			r, err := store.RecountSession(ctx, project, sessionID)
			require.NoError(t, err)
			assert.Zero(t, r.Pending)
			assert.True(t, r.Exact(), "%+v", r)
			require.NotNil(t, r.Stored.Start)
			require.NotNil(t, r.Stored.End)
			assert.Equal(t, at.Add(time.Minute), *r.Stored.Start, "b's start")
			assert.Equal(t, at.Add(5*time.Minute), *r.Stored.End, "a's new end")
		})
	}
}

// TestSessionTracesOfABatchHealTogether: a batch carrying two traces of one session is applied
// by one transaction that writes the session once (ddb's HealTraces); batches of the session
// sent at once, whose transactions contend on the session, fall back to one heal per trace.
// The session is exact either way.
func TestSessionTracesOfABatchHealTogether(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	sessionID := uuid.NewString()
	start := time.Now().UTC().Add(-time.Minute)
	turn := func(i int) []trace.Span {
		traceID := uuid.NewString()
		root := span(traceID, "root", nil, start.Add(time.Duration(i)*time.Second), 10)
		root.SessionID, root.Cost = &sessionID, ptr(0.25)
		child := span(traceID, "child", &root.ID, start.Add(time.Duration(i)*time.Second), 5)
		child.SessionID, child.Status = &sessionID, ptr("error")
		return []trace.Span{child, root}
	}
	h.ddbReqs.Reset()
	_, err := h.svc.Ingest(ctx, h.project, slices.Concat(turn(0), turn(1)))
	require.NoError(t, err)
	assert.Equal(t, 1, h.ddbReqs.Counts()["TransactWriteItems"], "one transaction for both traces and their session")

	const batches = 6
	var wg sync.WaitGroup
	for i := range batches {
		wg.Go(func() {
			_, err := h.svc.Ingest(ctx, h.project, slices.Concat(turn(2+2*i), turn(3+2*i)))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	const traces = 2 + 2*batches
	r, err := h.store.RecountSession(ctx, h.project, sessionID)
	require.NoError(t, err)
	assert.Zero(t, r.Pending)
	assert.True(t, r.Exact(), "%+v", r)
	assert.Equal(t, traces, r.Stored.Count)
	assert.Equal(t, traces, r.Stored.Errors)
	assert.InDelta(t, traces*0.25, r.Stored.Cost, 1e-12)
}
