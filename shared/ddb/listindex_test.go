package ddb

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/listindex"
	"github.com/plumehq/plume/shared/trace"
)

var lxKinds = []listindex.Kind{listindex.Spans, listindex.Traces, listindex.Sessions}

// lxState is the index's content: per kind, each key's total count.
type lxState map[listindex.Kind]map[string]int32

// lxFixture is a project's spans ingested through the tracing service into a table with the
// change stream: the stream's records of it, as RollupFunction's event source mapping passes
// them (summaries, traces and sessions), and the index keys of what is stored at the end.
type lxFixture struct {
	projectID string
	shard     string
	records   []StreamRecord
	want      lxState
	spans     int
}

// lxDay0 is the first of the three days the fixtures' records are created on.
var lxDay0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// newLXFixture ingests traces of random spans, spacing apart from lxDay0 on (perTrace spans
// each, in two batches, one span sent again changed), with sessions, tags (uniqueTags of them
// with a value of their own, as request ids have), errors and costs.
func newLXFixture(t *testing.T, traces, perTrace, uniqueTags int, spacing time.Duration, seed uint64) lxFixture {
	t.Helper()
	client, _, name := ddbtest.NewStreamTable(t)
	blobs, _, _ := blobtest.New(t)
	store := NewTraceStore(NewTable(client, name))
	tap := newStreamTap(t, client, name, nil) // applied after each request, as RollupFunction would
	var clock atomic.Pointer[time.Time]
	svc := trace.NewService(store, blobs, nil, trace.WithClock(func() time.Time { return *clock.Load() }))
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 27))
	f := lxFixture{projectID: uuid.NewString()}
	var spanIDs, traceIDs, sessionIDs []string
	for ti := range traces {
		at := lxDay0.Add(time.Duration(ti) * spacing).Add(time.Duration(rng.IntN(3600)) * time.Second)
		traceID, rootID := uuid.NewString(), uuid.NewString()
		traceIDs = append(traceIDs, traceID)
		var session *string
		if ti%3 != 2 {
			s := fmt.Sprintf("conversation-%d", ti/3)
			session = &s
			if ti%3 == 0 {
				sessionIDs = append(sessionIDs, s)
			}
		}
		var spans []trace.Span
		for si := range perTrace {
			start := at.Add(time.Duration(si) * time.Second)
			ms := float64(1 + rng.IntN(2000))
			end := start.Add(time.Duration(ms) * time.Millisecond)
			sp := trace.Span{ID: uuid.NewString(), TraceID: traceID, ParentSpanID: &rootID, Name: "tool.search",
				Kind: trace.KindGeneric, StartedAt: start, EndedAt: &end, DurationMS: &ms, SessionID: session,
				Attributes: json.RawMessage(`{}`), Tags: trace.Tags{{Key: "env", Value: []string{"prod", "dev"}[rng.IntN(2)]}}}
			for i := range uniqueTags {
				sp.Tags = append(sp.Tags, trace.Tag{Key: fmt.Sprintf("request-%d", i), Value: uuid.NewString()})
			}
			if si == 0 {
				sp.ID, sp.ParentSpanID, sp.Name = rootID, nil, "handle_request"
			}
			if si%2 == 1 {
				sp.Name, sp.Kind, sp.Cost = "openai.chat", trace.KindLLM, ptrTo(float64(rng.IntN(100))/1000)
			}
			if rng.IntN(5) == 0 {
				sp.Status, sp.ErrorCode = ptrTo("error"), ptrTo([]string{"timeout", "rate_limited"}[rng.IntN(2)])
			}
			spans = append(spans, sp)
			spanIDs = append(spanIDs, sp.ID)
		}
		half := len(spans) / 2
		for bi, batch := range [][]trace.Span{spans[half:], spans[:half]} { // children first
			now := at.Add(time.Duration(bi) * time.Minute)
			clock.Store(&now)
			for i := range batch {
				batch[i].CreatedAt, batch[i].UpdatedAt = now, now
			}
			_, err := svc.Ingest(ctx, f.projectID, batch)
			require.NoError(t, err)
			tap.drain(t)
		}
		// One span sent again, changed: a MODIFY of its summary and its trace.
		again := spans[rng.IntN(len(spans))]
		now := at.Add(2 * time.Minute)
		clock.Store(&now)
		ms := *again.DurationMS * 2
		end := again.StartedAt.Add(time.Duration(ms) * time.Millisecond)
		again.DurationMS, again.EndedAt, again.Cost, again.UpdatedAt = &ms, &end, ptrTo(0.5), now
		_, err := svc.Ingest(ctx, f.projectID, []trace.Span{again})
		require.NoError(t, err)
		tap.drain(t)
	}
	f.spans = len(spanIDs)
	f.shard, f.records = tap.shard, tap.records
	require.NotEmpty(t, f.records)

	// What is stored, read back by the tracing store's own readers.
	f.want = lxState{listindex.Spans: {}, listindex.Traces: {}, listindex.Sessions: {}}
	sums, err := store.Summaries(ctx, f.projectID, spanIDs)
	require.NoError(t, err)
	require.Len(t, sums, len(spanIDs))
	for _, s := range sums {
		addKeys(f.want[listindex.Spans], trace.SpanIndexKeys(s))
	}
	trs, err := store.Traces(ctx, f.projectID, traceIDs)
	require.NoError(t, err)
	require.Len(t, trs, len(traceIDs))
	for _, tr := range trs {
		addKeys(f.want[listindex.Traces], trace.TraceIndexKeys(tr))
	}
	ses, err := store.Sessions(ctx, f.projectID, sessionIDs)
	require.NoError(t, err)
	require.Len(t, ses, len(sessionIDs))
	for _, s := range ses {
		addKeys(f.want[listindex.Sessions], trace.SessionIndexKeys(s))
	}
	return f
}

func ptrTo[T any](v T) *T { return &v }

func addKeys(m map[string]int32, keys [][]byte) {
	for _, k := range keys {
		m[string(k)]++
	}
}

// captureRecords reads what the table's stream holds (streamTap), without applying it to
// anything but the trace and session aggregates.
func captureRecords(t *testing.T, client *dynamodb.Client, table string, agg *AggregateStore) (string, []StreamRecord) {
	t.Helper()
	return captureRecordsIn(t, client, table, agg, icStreamBatch)
}

// captureRecordsIn is captureRecords with the aggregates applied in stream batches of batch.
func captureRecordsIn(t testing.TB, client *dynamodb.Client, table string, agg *AggregateStore, batch int) (string, []StreamRecord) {
	t.Helper()
	tap := newStreamTap(t, client, table, agg)
	tap.batch = batch
	tap.drain(t)
	return tap.shard, tap.records
}

// streamTap reads a table's stream as it grows, keeping the records RollupFunction's filter
// passes for the list index (the stream has one shard here). It applies the trace and session
// aggregates as it reads, in batches of batch (icStreamBatch unless set; through agg, or a store of client when
// agg is nil), as RollupFunction applies them: the trace and session items exist only once
// they are, and their records are among those kept.
type streamTap struct {
	p       *StreamPoller
	shard   string
	records []StreamRecord
	batch   int
}

func newStreamTap(t testing.TB, client *dynamodb.Client, table string, agg *AggregateStore) *streamTap {
	if agg == nil {
		agg = NewAggregateStore(NewTraceStore(NewTable(client, table)))
	}
	o := client.Options()
	tap := &streamTap{batch: icStreamBatch}
	tap.p = &StreamPoller{DB: client, TableName: table,
		Streams: NewStreamsClient(aws.Config{Region: o.Region, Credentials: o.Credentials}, ddbtest.Endpoint(t)),
		Apply: func(ctx context.Context, s string, rs []StreamRecord) error {
			require.True(t, tap.shard == "" || tap.shard == s, "one shard")
			tap.shard = s
			for b := range slices.Chunk(rs, tap.batch) {
				if err := agg.Apply(ctx, s, b); err != nil {
					return err
				}
			}
			for _, r := range rs {
				if sk := strAttr(r.New, "SK"); r.EventName != "REMOVE" && (sk == skSpan || sk == skTrace || sk == skSession) {
					tap.records = append(tap.records, r)
				}
			}
			return nil
		}}
	return tap
}

// drain reads (and applies to the aggregates) what the stream holds so far.
func (tap *streamTap) drain(t testing.TB) {
	t.Helper()
	require.NoError(t, tap.p.Drain(context.Background()))
}

// newLXStore is a list index in a fresh table and bucket.
func newLXStore(t *testing.T, cfg ListIndexConfig) (*ListIndexStore, *dynamodb.Client, string, *blob.Store) {
	t.Helper()
	client, _, name := ddbtest.NewTable(t)
	blobs, _, _ := blobtest.New(t)
	return NewListIndexStore(NewTable(client, name), blobs, cfg), client, name, blobs
}

// state reads the whole index of a project through Partitions and OpenRuns, each partition's
// runs merged.
func (s *ListIndexStore) state(t *testing.T, projectID string) lxState {
	t.Helper()
	out, err := s.readState(projectID)
	require.NoError(t, err)
	return out
}

func (s *ListIndexStore) readState(projectID string) (lxState, error) {
	ctx := context.Background()
	out := lxState{}
	for _, kind := range lxKinds {
		out[kind] = map[string]int32{}
		parts, err := s.Partitions(ctx, projectID, kind, lxDay0.AddDate(0, 0, -30), lxDay0.AddDate(0, 0, 30))
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			runs, err := s.OpenRuns(ctx, p)
			if err != nil {
				return nil, err
			}
			entries, err := listindex.Compact(ctx, runs)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				parsed, err := listindex.Parse(e.Key)
				if err != nil {
					return nil, err
				}
				if listIndexSK(p.Day) != listIndexSK(parsed.Created) {
					return nil, fmt.Errorf("a key of %s in the partition of %s", parsed.Created, p.Day)
				}
				out[kind][string(e.Key)] += e.Count
			}
		}
	}
	return out, nil
}

// assertExact checks that the index holds every key of what is stored once, and nothing else.
func assertExact(t *testing.T, want, got lxState, label string) {
	t.Helper()
	if d := diffState(want, got); d != "" {
		assert.Fail(t, "index differs from what is stored", "%s: %s", label, d)
	}
}

// diffState says how got differs from want ("" when it does not).
func diffState(want, got lxState) string {
	var out []string
	for _, kind := range lxKinds {
		if maps.Equal(want[kind], got[kind]) {
			continue
		}
		var missing, extra int
		for k, n := range want[kind] {
			if got[kind][k] != n {
				missing++
			}
		}
		for k := range got[kind] {
			if _, ok := want[kind][k]; !ok {
				extra++
			}
		}
		out = append(out, fmt.Sprintf("%s: %d keys wrong or missing, %d extra (of %d)", kind, missing, extra, len(want[kind])))
	}
	return strings.Join(out, "; ")
}

// TestListIndexAppliesEachRecordOnce delivers the stream's records whole, split, overlapping,
// one by one, twice, and as two shards applied at once, with compactions along the way: the
// index always holds every key of what is stored exactly once.
func TestListIndexAppliesEachRecordOnce(t *testing.T) {
	f := newLXFixture(t, 12, 6, 1, 6*time.Hour, 1)
	rs := f.records
	n := len(rs)
	t.Logf("%d spans, %d stream records", f.spans, n)
	tests := []struct {
		name    string
		maxRuns int
		batches [][]StreamRecord
	}{
		{name: "whole", batches: [][]StreamRecord{rs}},
		{name: "whole twice", batches: [][]StreamRecord{rs, rs}},
		{name: "halves", batches: [][]StreamRecord{rs[:n/2], rs[n/2:]}},
		{name: "halves, the first again with more", batches: [][]StreamRecord{rs[:n/2], rs[:3*n/4], rs[n/2:]}},
		{name: "overlapping", batches: [][]StreamRecord{rs[n/4 : n/2], rs[:n/3], rs[n/3:], rs[1:]}},
		{name: "one by one, compacting", maxRuns: 4, batches: slices.Collect(slices.Chunk(rs, 1))},
		{name: "by 7, each twice, compacting", maxRuns: 3, batches: twice(slices.Collect(slices.Chunk(rs, 7)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _, _ := newLXStore(t, ListIndexConfig{MaxRuns: tt.maxRuns})
			for _, b := range tt.batches {
				require.NoError(t, s.Apply(context.Background(), f.shard, b))
			}
			assertExact(t, f.want, s.state(t, f.projectID), tt.name)
			if tt.maxRuns > 0 {
				for _, kind := range lxKinds {
					parts, err := s.Partitions(context.Background(), f.projectID, kind, lxDay0, lxDay0.AddDate(0, 0, 3))
					require.NoError(t, err)
					for _, p := range parts {
						assert.LessOrEqual(t, len(p.Runs), tt.maxRuns, "compacted: %s %s", kind, p.Day)
					}
				}
			}
		})
	}

	t.Run("two shards at once", func(t *testing.T) {
		// Counts commute: the records split between two shards, each in order, applied
		// concurrently by small batches with compactions racing, add up to the same index.
		s, _, _, _ := newLXStore(t, ListIndexConfig{MaxRuns: 3})
		shards := [2][]StreamRecord{}
		for i, r := range rs {
			shards[i%2] = append(shards[i%2], r)
		}
		var wg sync.WaitGroup
		for i, shard := range shards {
			wg.Go(func() {
				for b := range slices.Chunk(shard, 3) {
					assert.NoError(t, s.Apply(context.Background(), fmt.Sprintf("%s-%d", f.shard, i), b))
				}
			})
		}
		wg.Wait()
		assertExact(t, f.want, s.state(t, f.projectID), "two shards")
	})
}

func twice(batches [][]StreamRecord) [][]StreamRecord {
	var out [][]StreamRecord
	for _, b := range batches {
		out = append(out, b, b)
	}
	return out
}

// lxCrash fails the at-th request to DynamoDB or S3 (counted together), before it takes effect
// or after, and every request after it: a consumer that died there.
type lxCrash struct {
	at    int64
	after bool
	n     atomic.Int64
	mu    sync.Mutex
	ops   []string
}

var errLXCrashed = fmt.Errorf("crashed")

func (c *lxCrash) step(op string, run func() error) error {
	n := c.n.Add(1)
	c.mu.Lock()
	c.ops = append(c.ops, fmt.Sprintf("%d %s", n, op))
	c.mu.Unlock()
	switch {
	case n < c.at:
		return run()
	case n == c.at && c.after:
		_ = run()
	}
	return errLXCrashed
}

type lxCrashTable struct {
	API
	c *lxCrash
}

func (a *lxCrashTable) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.GetItemOutput, err error) {
	return out, a.c.step("GetItem", func() error { out, err = a.API.GetItem(context.WithoutCancel(ctx), in, o...); return err })
}

func (a *lxCrashTable) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.BatchGetItemOutput, err error) {
	return out, a.c.step("BatchGetItem", func() error { out, err = a.API.BatchGetItem(context.WithoutCancel(ctx), in, o...); return err })
}

func (a *lxCrashTable) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.PutItemOutput, err error) {
	return out, a.c.step("PutItem", func() error { out, err = a.API.PutItem(context.WithoutCancel(ctx), in, o...); return err })
}

func (a *lxCrashTable) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (out *dynamodb.UpdateItemOutput, err error) {
	return out, a.c.step("UpdateItem", func() error { out, err = a.API.UpdateItem(context.WithoutCancel(ctx), in, o...); return err })
}

type lxCrashBlobs struct {
	RunBlobs
	c *lxCrash
}

func (b *lxCrashBlobs) Put(ctx context.Context, key string, body []byte, contentType string) error {
	return b.c.step("S3 Put", func() error { return b.RunBlobs.Put(context.WithoutCancel(ctx), key, body, contentType) })
}

func (b *lxCrashBlobs) Get(ctx context.Context, key string) (out []byte, err error) {
	return out, b.c.step("S3 Get", func() error { out, err = b.RunBlobs.Get(context.WithoutCancel(ctx), key); return err })
}

func (b *lxCrashBlobs) Delete(ctx context.Context, keys ...string) error {
	return b.c.step("S3 Delete", func() error { return b.RunBlobs.Delete(context.WithoutCancel(ctx), keys...) })
}

// TestListIndexCrashAtEveryStep stops the consumer at every request of a batch in turn (the
// IndexedSince item, runs in the table and in the bucket, manifest updates, the compaction the
// batch sets off: its reads, its merged run, its replacement and the expiry of what it
// replaced), before and after the request takes effect. Lambda then retries the batch: the
// index is at once exact, and stays so when the batch comes yet again.
func TestListIndexCrashAtEveryStep(t *testing.T) {
	// Eleven traces of 24 spans, four hours apart: the setup leaves the second day's spans
	// (traces 4 to 9) in three runs (two traces in the bucket, half a trace in the table, two
	// traces in the bucket), and the batch's run of that day, a fourth, sets off its compaction.
	f := newLXFixture(t, 11, 24, 6, 4*time.Hour, 2)
	at := func(traces float64) int { return int(traces * float64(len(f.records)) / 11) }
	setup := [][]StreamRecord{f.records[:at(4)], f.records[at(4):at(6)], f.records[at(6):at(6.5)], f.records[at(6.5):at(8.5)]}
	batch := f.records[at(8.5):]
	cfg := ListIndexConfig{MaxRuns: 3}
	ctx := context.Background()

	// The batch writes runs of both kinds and sets off compactions.
	ref, _, _, _ := newLXStore(t, cfg)
	for _, b := range setup {
		require.NoError(t, ref.Apply(ctx, f.shard, b))
	}
	parts, err := ref.Partitions(ctx, f.projectID, listindex.Spans, lxDay0.AddDate(0, 0, 1), lxDay0.AddDate(0, 0, 2))
	require.NoError(t, err)
	require.Len(t, parts, 1)
	before := len(parts[0].Runs)
	inBucket := func(r IndexRun) bool { return r.InBucket }
	require.True(t, slices.ContainsFunc(parts[0].Runs, inBucket), "the compaction reads runs of the bucket %+v", parts[0].Runs)
	require.False(t, !slices.ContainsFunc(parts[0].Runs, func(r IndexRun) bool { return !r.InBucket }), "and of the table")
	require.NoError(t, ref.Apply(ctx, f.shard, batch))
	assertExact(t, f.want, ref.state(t, f.projectID), "reference")
	var inTable int
	for _, kind := range lxKinds {
		parts, err := ref.Partitions(ctx, f.projectID, kind, lxDay0, lxDay0.AddDate(0, 0, 3))
		require.NoError(t, err)
		for _, p := range parts {
			for _, r := range p.Runs {
				if !r.InBucket {
					inTable++
				}
			}
		}
	}
	require.NotZero(t, inTable, "the batch writes runs in the table")
	require.Equal(t, cfg.MaxRuns, before, "the batch's run is one past MaxRuns")

	// The batch's requests, counted by a consumer that does not crash.
	client, _, name := ddbtest.NewTable(t)
	blobs, _, _ := blobtest.New(t)
	crash := func(at int64, after bool) (*lxCrash, error) {
		// Each crash in a project of its own, in one table and bucket.
		project := uuid.NewString()
		setup, batch := forProject(setup, f.projectID, project), forProject([][]StreamRecord{batch}, f.projectID, project)[0]
		healthy := NewListIndexStore(NewTable(client, name), blobs, cfg)
		for _, b := range setup {
			if err := healthy.Apply(ctx, f.shard, b); err != nil {
				return nil, err
			}
		}
		c := &lxCrash{at: at, after: after}
		crashing := NewListIndexStore(NewTable(&lxCrashTable{API: client, c: c}, name), &lxCrashBlobs{RunBlobs: blobs, c: c}, cfg)
		err := crashing.Apply(ctx, f.shard, batch)
		if c.n.Load() < at {
			return c, err // no request failed
		}
		// A crash in a compaction does not fail the batch, which is applied already. Lambda
		// retries a failed batch, and may deliver one again.
		retry := NewListIndexStore(NewTable(client, name), blobs, cfg)
		for _, step := range []string{"retried", "delivered again"} {
			if err := retry.Apply(ctx, f.shard, batch); err != nil {
				return c, fmt.Errorf("%s: %w", step, err)
			}
			got, err := retry.readState(project)
			if err != nil {
				return c, fmt.Errorf("%s: %w", step, err)
			}
			if d := diffState(f.want, got); d != "" {
				return c, fmt.Errorf("%s: %s", step, d)
			}
		}
		return c, nil
	}
	c, err := crash(math.MaxInt64, false)
	require.NoError(t, err)
	steps := c.n.Load()
	t.Logf("the batch's %d requests: %v", steps, c.ops)

	// Every step, in parallel (each crash is a project of its own).
	var wg sync.WaitGroup
	limit := make(chan struct{}, 4)
	for _, after := range []bool{false, true} {
		for at := int64(1); at <= steps; at++ {
			wg.Go(func() {
				limit <- struct{}{}
				defer func() { <-limit }()
				c, err := crash(at, after)
				if assert.NoError(t, err, "crash at request %d (after: %v)", at, after) {
					assert.GreaterOrEqual(t, c.n.Load(), at, "crashed at request %d", at)
				} else if c != nil {
					t.Logf("requests: %v", c.ops)
				}
			})
		}
	}
	wg.Wait()
}

// forProject is batches with the records of project from moved to project to.
func forProject(batches [][]StreamRecord, from, to string) [][]StreamRecord {
	move := func(item map[string]types.AttributeValue) map[string]types.AttributeValue {
		if item == nil {
			return nil
		}
		out := maps.Clone(item)
		out[infra.AttrPK] = &types.AttributeValueMemberS{Value: strings.Replace(strAttr(item, infra.AttrPK), "P#"+from+"#", "P#"+to+"#", 1)}
		return out
	}
	out := make([][]StreamRecord, len(batches))
	for i, b := range batches {
		for _, r := range b {
			out[i] = append(out[i], StreamRecord{EventName: r.EventName, Sequence: r.Sequence, Old: move(r.Old), New: move(r.New)})
		}
	}
	return out
}

// spanRecords are the stream records (INSERT, images as TraceStore stores them) of n span
// summaries of project created at created, with sequence numbers from seq on; the spans' ids
// come from rng, so that two projects can have the same keys.
func spanRecords(t *testing.T, projectID string, created time.Time, seq, n int, rng *rand.Rand) []StreamRecord {
	t.Helper()
	out := make([]StreamRecord, n)
	for i := range out {
		id := uuid.Must(uuid.NewRandomFromReader(rngReader{rng})).String()
		ms := float64(rng.IntN(5000))
		sum := trace.Summary{SpanID: id, TraceID: id, Name: "step", Kind: trace.KindGeneric, Status: "ok",
			StartedAt: created, DurationMS: &ms, Tags: map[string]string{"env": "prod", "user": fmt.Sprint(rng.IntN(1000))},
			CreatedAt: created, UpdatedAt: created, Location: trace.Location{Key: trace.BatchPrefix(projectID) + "b.ndjson", Length: 1}}
		item, err := marshal(toSummaryItem(projectID, sum))
		require.NoError(t, err)
		out[i] = StreamRecord{EventName: "INSERT", Sequence: fmt.Sprint(seq + i), New: item}
	}
	return out
}

type rngReader struct{ *rand.Rand }

func (r rngReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return len(p), nil
}

// keysOf is the index a batch of first writes makes.
func keysOf(records []StreamRecord) lxState {
	out := lxState{listindex.Spans: {}, listindex.Traces: {}, listindex.Sessions: {}}
	for _, r := range records {
		rec, ok := lxRecordOf(r.New)
		if ok {
			addKeys(out[rec.part.kind], rec.keys)
		}
	}
	return out
}

func (s *ListIndexStore) only(t *testing.T, projectID string, kind listindex.Kind, day time.Time) (IndexPartition, lxManifest) {
	t.Helper()
	parts, err := s.Partitions(context.Background(), projectID, kind, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	require.Len(t, parts, 1)
	m, err := s.manifest(context.Background(), lxPart{projectID: projectID, kind: kind, day: listIndexSK(day)})
	require.NoError(t, err)
	return parts[0], m
}

// TestListIndexPlacement: a run that takes under 4 KB compressed (8 KB with a retention of up
// to 75 days, which expires a replaced run with its partition rather than by a write) is an item
// of its day's partition, compressed, and no object; a larger one is an object under the
// project's index prefix, as it is, and no item; both read back whole through Sources.
func TestListIndexPlacement(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  ListIndexConfig
		max  int
	}{
		{"no retention", ListIndexConfig{}, inlineRunMax / 2},
		{"30 days' retention", ListIndexConfig{Retention: 30 * 24 * time.Hour}, inlineRunMax},
	} {
		t.Run(c.name, func(t *testing.T) { testListIndexPlacement(t, c.cfg, c.max) })
	}
}

func testListIndexPlacement(t *testing.T, cfg ListIndexConfig, inlineMax int) {
	s, client, table, blobs := newLXStore(t, cfg)
	require.Equal(t, inlineMax, s.inlineMax())
	ctx := context.Background()
	day := lxDay0.Truncate(24 * time.Hour)
	entries := func(project string, spans int) []listindex.Entry {
		rs := spanRecords(t, project, lxDay0, 1, spans, rand.New(rand.NewPCG(4, 4)))
		return lxEntries(rs)[lxPart{project, listindex.Spans, listIndexSK(lxDay0)}]
	}
	// The largest batch whose run fits in the table, and one span more.
	n := 1
	for ; ; n++ {
		run, err := placeRun("sizing", entries("sizing", n), inlineMax)
		require.NoError(t, err)
		if run.InBucket {
			break
		}
	}
	tests := []struct {
		name     string
		spans    int
		inBucket bool
	}{
		{name: "under the bound compressed", spans: n - 1},
		{name: "at the bound or more compressed", spans: n, inBucket: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			project := uuid.NewString()
			rs := spanRecords(t, project, lxDay0, 1, tt.spans, rand.New(rand.NewPCG(4, 4)))
			body := listindex.EncodeRun(entries(project, tt.spans))
			require.NoError(t, s.Apply(ctx, "shard-1", rs))
			p, _ := s.only(t, project, listindex.Spans, day)
			require.Len(t, p.Runs, 1)
			run := p.Runs[0]
			assert.Equal(t, tt.inBucket, run.InBucket)
			assert.Equal(t, int64(len(body)), run.Size)
			assert.Equal(t, keysOf(rs)[listindex.Spans], s.state(t, project)[listindex.Spans])

			item, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key(listIndexRunsPK(project, listindex.Spans, day), run.ID)})
			require.NoError(t, err)
			object, objErr := blobs.Get(ctx, "index/project="+project+"/kind=spans/day=2026-11-20/"+run.ID+".run")
			if tt.inBucket {
				assert.Nil(t, item.Item, "no item")
				require.NoError(t, objErr)
				assert.Equal(t, body, object)
				assert.Zero(t, run.Stored)
			} else {
				require.NotNil(t, item.Item)
				stored := item.Item[attrLXRunBytes].(*types.AttributeValueMemberB).Value
				assert.Equal(t, run.Stored, int64(len(stored)))
				assert.Less(t, len(stored), inlineMax)
				assert.Less(t, 3*len(stored), len(body), "compressed (a span's id is in each of its keys)")
				got, err := inflate(stored, run.Size)
				require.NoError(t, err)
				assert.Equal(t, body, got)
				assert.Equal(t, errs.CodeNotFound, errs.CodeOf(objErr), "no object: %v", objErr)
			}
			sources, err := s.Sources(ctx, p)
			require.NoError(t, err)
			require.Len(t, sources, 1)
			got, err := sources[0].Source.ReadAt(ctx, 0, run.Size)
			require.NoError(t, err)
			assert.Equal(t, body, got)
		})
	}
}

// TestListIndexRetention: with a span retention, a partition and its runs in the table expire
// at the end of the day plus the retention; an expired partition is not listed, and a change
// of a record whose partition has expired writes nothing.
func TestListIndexRetention(t *testing.T) {
	const retention = 30 * 24 * time.Hour
	day := lxDay0.Truncate(24 * time.Hour)
	var now atomic.Pointer[time.Time]
	setNow := func(at time.Time) { now.Store(&at) }
	setNow(lxDay0.Add(2 * time.Hour))
	s, client, table, _ := newLXStore(t, ListIndexConfig{Retention: retention, Now: func() time.Time { return *now.Load() }})
	ctx := context.Background()
	project := uuid.NewString()
	rng := rand.New(rand.NewPCG(5, 5))
	require.NoError(t, s.Apply(ctx, "shard-1", spanRecords(t, project, lxDay0, 1, 3, rng)))

	wantTTL := day.Add(24*time.Hour + retention).Unix()
	p, m := s.only(t, project, listindex.Spans, day)
	assert.Equal(t, wantTTL, m.ttl, "the manifest expires at the end of its day plus the retention")
	item, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key(listIndexRunsPK(project, listindex.Spans, day), p.Runs[0].ID)})
	require.NoError(t, err)
	ttl, _ := intAttr(item.Item, "ttl")
	assert.Equal(t, wantTTL, ttl, "and so do its runs in the table")

	setNow(time.Unix(wantTTL-1, 0))
	parts, err := s.Partitions(ctx, project, listindex.Spans, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	assert.Len(t, parts, 1, "listed until it expires")
	setNow(time.Unix(wantTTL, 0))
	parts, err = s.Partitions(ctx, project, listindex.Spans, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	assert.Empty(t, parts, "an expired partition is not listed, though DynamoDB deletes it later")

	// A change of a record created before the retention: nothing written for it.
	old := lxDay0.Add(-40 * 24 * time.Hour)
	require.NoError(t, s.Apply(ctx, "shard-1", spanRecords(t, project, old, 10, 2, rng)))
	got, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key(listIndexPK(project, listindex.Spans), listIndexSK(old))})
	require.NoError(t, err)
	assert.Nil(t, got.Item)
}

// TestListIndexedSince: IndexedSince is the earliest created_at of the records the index
// holds, kept by any consumer: a later record leaves it, an earlier one moves it, and a change
// of a record created earlier still (one from before the index existed) does not, since the
// record's own entry is not in the index.
func TestListIndexedSince(t *testing.T) {
	client, _, table := ddbtest.NewTable(t)
	blobs, _, _ := blobtest.New(t)
	ctx := context.Background()
	store := func() *ListIndexStore { return NewListIndexStore(NewTable(client, table), blobs, ListIndexConfig{}) }
	project := uuid.NewString()
	_, ok, err := store().IndexedSince(ctx, project)
	require.NoError(t, err)
	assert.False(t, ok, "nothing indexed yet")

	rng := rand.New(rand.NewPCG(6, 6))
	old := spanRecords(t, project, lxDay0.AddDate(0, 0, -10), 1, 1, rng)[0]
	changed := maps.Clone(old.New)
	changed["d"] = &types.AttributeValueMemberN{Value: "12345"}
	a, b := store(), store()
	for _, step := range []struct {
		name    string
		store   *ListIndexStore
		records []StreamRecord
		want    time.Time
	}{
		{"the first records", a, spanRecords(t, project, lxDay0.Add(3*time.Hour), 1, 2, rng), lxDay0.Add(3 * time.Hour)},
		{"later ones, by another consumer", b, spanRecords(t, project, lxDay0.Add(5*time.Hour), 1, 2, rng), lxDay0.Add(3 * time.Hour)},
		{"earlier ones", b, spanRecords(t, project, lxDay0.Add(time.Hour), 10, 2, rng), lxDay0.Add(time.Hour)},
		{"a change of an older record", a, []StreamRecord{{EventName: "MODIFY", Sequence: "20", Old: old.New, New: changed}}, lxDay0.Add(time.Hour)},
	} {
		require.NoError(t, step.store.Apply(ctx, "shard-"+step.name, step.records))
		since, ok, err := store().IndexedSince(ctx, project)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, step.want, since, step.name)
	}
}

// TestListIndexRangeBandsSince: a project the index holds from its first record has its
// records' bands from the start; one it held before, or whose band keys had no numbers, from an
// hour after the first batch of it a consumer with numbered bands applied; a later consumer
// leaves the mark.
func TestListIndexRangeBandsSince(t *testing.T) {
	client, _, table := ddbtest.NewTable(t)
	blobs, _, _ := blobtest.New(t)
	ctx := context.Background()
	now := lxDay0.Add(12 * time.Hour)
	store := func() *ListIndexStore {
		return NewListIndexStore(NewTable(client, table), blobs, ListIndexConfig{Now: func() time.Time { return now }})
	}
	rng := rand.New(rand.NewPCG(7, 7))

	fresh := uuid.NewString()
	_, ok, err := store().RangeBandsSince(ctx, fresh)
	require.NoError(t, err)
	assert.False(t, ok, "nothing indexed yet")
	require.NoError(t, store().Apply(ctx, "shard-1", spanRecords(t, fresh, lxDay0.Add(time.Hour), 1, 2, rng)))
	since, ok, err := store().RangeBandsSince(ctx, fresh)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, time.Unix(0, 0).UTC(), since, "bands from the first record")
	_, ok, err = store().IndexedSince(ctx, fresh)
	require.NoError(t, err)
	assert.True(t, ok)

	// A project an older consumer indexed: its IndexedSince without the bands' mark.
	older := uuid.NewString()
	putIndexMarks(t, client, table, older, map[string]time.Time{attrLXSince: lxDay0})
	require.NoError(t, store().Apply(ctx, "shard-1", spanRecords(t, older, lxDay0.Add(time.Hour), 1, 2, rng)))
	now = now.Add(48 * time.Hour)
	require.NoError(t, store().Apply(ctx, "shard-1", spanRecords(t, older, lxDay0.Add(2*time.Hour), 3, 2, rng)))
	since, ok, err = store().RangeBandsSince(ctx, older)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, lxDay0.Add(13*time.Hour), since, "an hour after the first batch with bands")

	// A project indexed from its first record by a consumer whose band keys had no numbers
	// (its mark "bk"): its band keys have them from an hour after the first batch of this code.
	unnumbered := uuid.NewString()
	putIndexMarks(t, client, table, unnumbered, map[string]time.Time{attrLXSince: lxDay0, "bk": time.UnixMicro(0)})
	require.NoError(t, store().Apply(ctx, "shard-1", spanRecords(t, unnumbered, lxDay0.Add(3*time.Hour), 5, 2, rng)))
	since, ok, err = store().RangeBandsSince(ctx, unnumbered)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, now.Add(time.Hour), since, "an hour after the first batch with numbered band keys")
}

// TestListIndexCompactionTidies: a compaction removes the marks of shards that have not moved
// for 25 hours (the stream keeps records 24), keeps the runs of the bucket it replaced
// readable until a later compaction past their grace deletes them, and expires the replaced
// runs of the table (without a retention); the index stays exact throughout.
func TestListIndexCompactionTidies(t *testing.T) {
	var now atomic.Pointer[time.Time]
	setNow := func(at time.Time) { now.Store(&at) }
	t0 := lxDay0.Add(time.Hour)
	setNow(t0)
	s, client, table, blobs := newLXStore(t, ListIndexConfig{MaxRuns: 2, Now: func() time.Time { return *now.Load() }})
	ctx := context.Background()
	project := uuid.NewString()
	day := lxDay0.Truncate(24 * time.Hour)
	rng := rand.New(rand.NewPCG(7, 7))
	var all []StreamRecord
	apply := func(shard string, seq, spans int) {
		rs := spanRecords(t, project, lxDay0, seq, spans, rng)
		all = append(all, rs...)
		require.NoError(t, s.Apply(ctx, shard, rs))
		assertExact(t, keysOf(all), s.state(t, project), fmt.Sprintf("after %d records", len(all)))
	}
	object := func(id string) error {
		_, err := blobs.Get(ctx, listIndexObjectKey(project, listindex.Spans, day, id))
		return err
	}

	apply("shard-a", 1, 200)
	setNow(t0.Add(26 * time.Hour))
	apply("shard-b", 1, 200)
	first, m := s.only(t, project, listindex.Spans, day)
	require.Len(t, first.Runs, 2)
	require.Len(t, m.marks, 2)
	apply("shard-b", 1000, 200) // a third run: compacted
	_, m = s.only(t, project, listindex.Spans, day)
	require.Len(t, m.runs, 1, "merged")
	assert.Equal(t, []string{lxMarkPrefix + shardHash("shard-b")}, slices.Collect(maps.Keys(m.marks)), "shard-a's mark, 26 hours old, is gone")
	require.Len(t, m.replaced, 3)
	for _, r := range first.Runs {
		require.True(t, r.InBucket)
		assert.NoError(t, object(r.ID), "a replaced run stays readable for readers that listed it")
	}

	setNow(t0.Add(26*time.Hour + replacedGrace))
	apply("shard-b", 2000, 200)
	apply("shard-b", 3000, 200) // compacted again
	_, m = s.only(t, project, listindex.Spans, day)
	for _, r := range first.Runs {
		assert.Equal(t, errs.CodeNotFound, errs.CodeOf(object(r.ID)), "deleted after its grace")
		assert.NotContains(t, m.replaced, r.ID)
	}
	assert.Len(t, m.replaced, 3, "the runs the second compaction replaced wait for theirs")

	t.Run("replaced runs of the table expire", func(t *testing.T) {
		project := uuid.NewString()
		for i := range 3 {
			require.NoError(t, s.Apply(ctx, "shard-c", spanRecords(t, project, lxDay0, 1+10*i, 2, rng)))
			if i == 1 {
				first, _ = s.only(t, project, listindex.Spans, day)
			}
		}
		for _, r := range first.Runs {
			require.False(t, r.InBucket)
			item, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key(listIndexRunsPK(project, listindex.Spans, day), r.ID)})
			require.NoError(t, err)
			ttl, _ := intAttr(item.Item, "ttl")
			assert.Equal(t, now.Load().Add(replacedGrace).Unix(), ttl)
		}
	})
}
