package ddb

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
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
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
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

// newLXFixture ingests traces of random spans over three days (about perTrace spans each, in
// two batches, some spans sent again changed), with sessions, tags, errors and costs.
func newLXFixture(t *testing.T, traces, perTrace int, seed uint64) lxFixture {
	t.Helper()
	client, _, name := ddbtest.NewStreamTable(t)
	blobs, _, _ := blobtest.New(t)
	store := NewTraceStore(NewTable(client, name))
	var clock atomic.Pointer[time.Time]
	svc := trace.NewService(store, blobs, nil, trace.WithClock(func() time.Time { return *clock.Load() }))
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 27))
	f := lxFixture{projectID: uuid.NewString()}
	var spanIDs, traceIDs, sessionIDs []string
	for ti := range traces {
		at := lxDay0.Add(time.Duration(ti*72/traces) * time.Hour).Add(time.Duration(rng.IntN(3600)) * time.Second)
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
	}
	f.spans = len(spanIDs)
	f.shard, f.records = captureRecords(t, client, name)
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

// captureRecords reads what the table's stream holds, without applying it, keeping the
// records RollupFunction's filter passes for the list index (the stream has one shard here).
func captureRecords(t *testing.T, client *dynamodb.Client, table string) (string, []StreamRecord) {
	t.Helper()
	o := client.Options()
	var shard string
	var records []StreamRecord
	p := &StreamPoller{DB: client, TableName: table,
		Streams: dynamodbstreams.New(dynamodbstreams.Options{Region: o.Region, Credentials: o.Credentials, BaseEndpoint: aws.String(ddbtest.Endpoint(t))}),
		Apply: func(_ context.Context, s string, rs []StreamRecord) error {
			require.True(t, shard == "" || shard == s, "one shard")
			shard = s
			for _, r := range rs {
				if sk := strAttr(r.New, "SK"); r.EventName != "REMOVE" && (sk == skSpan || sk == skTrace || sk == skSession) {
					records = append(records, r)
				}
			}
			return nil
		}}
	for idle := 0; idle < 2; {
		busy, err := p.Poll(context.Background())
		require.NoError(t, err)
		if idle++; busy {
			idle = 0
		}
	}
	return shard, records
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
	ctx := context.Background()
	out := lxState{}
	for _, kind := range lxKinds {
		out[kind] = map[string]int32{}
		parts, err := s.Partitions(ctx, projectID, kind, lxDay0.AddDate(0, 0, -30), lxDay0.AddDate(0, 0, 30))
		require.NoError(t, err)
		for _, p := range parts {
			runs, err := s.OpenRuns(ctx, p)
			require.NoError(t, err)
			entries, err := listindex.Compact(ctx, runs)
			require.NoError(t, err)
			for _, e := range entries {
				parsed, err := listindex.Parse(e.Key)
				require.NoError(t, err)
				require.Equal(t, listIndexSK(p.Day), listIndexSK(parsed.Created), "a key in the partition of its created day")
				out[kind][string(e.Key)] += e.Count
			}
		}
	}
	return out
}

// assertExact checks that the index holds every key of what is stored once, and nothing else.
func assertExact(t *testing.T, want, got lxState, label string) {
	t.Helper()
	for _, kind := range lxKinds {
		if !maps.Equal(want[kind], got[kind]) {
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
			assert.Fail(t, "index differs from what is stored", "%s: %s: %d keys wrong or missing, %d extra (of %d)", label, kind, missing, extra, len(want[kind]))
		}
	}
}

// TestListIndexAppliesEachRecordOnce delivers the stream's records whole, split, overlapping,
// one by one, twice, and as two shards applied at once, with compactions along the way: the
// index always holds every key of what is stored exactly once.
func TestListIndexAppliesEachRecordOnce(t *testing.T) {
	f := newLXFixture(t, 12, 6, 1)
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
	// Nine traces of 24 spans, eight hours apart: the setup leaves the second day's spans in
	// three runs (traces 2, 3 and 4, in the bucket and in the table), and the batch's run of
	// that day, a fourth, sets off its compaction.
	f := newLXFixture(t, 9, 24, 2)
	at := func(traces float64) int { return int(traces * float64(len(f.records)) / 9) }
	setup := [][]StreamRecord{f.records[:at(2)], f.records[at(2):at(3)], f.records[at(3):at(3.5)], f.records[at(3.5):at(4.5)]}
	batch := f.records[at(4.5):]
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
	require.NoError(t, ref.Apply(ctx, f.shard, batch))
	assertExact(t, f.want, ref.state(t, f.projectID), "reference")
	var inBucket, inTable int
	for _, kind := range lxKinds {
		parts, err := ref.Partitions(ctx, f.projectID, kind, lxDay0, lxDay0.AddDate(0, 0, 3))
		require.NoError(t, err)
		for _, p := range parts {
			for _, r := range p.Runs {
				if r.InBucket {
					inBucket++
				} else {
					inTable++
				}
			}
		}
	}
	require.NotZero(t, inBucket, "runs in the bucket")
	require.NotZero(t, inTable, "runs in the table")
	require.Equal(t, cfg.MaxRuns, before, "the batch's run is one past MaxRuns")

	client, _, name := ddbtest.NewTable(t)
	blobs, _, _ := blobtest.New(t)
	var tried int
	for _, after := range []bool{false, true} {
		for at := int64(1); ; at++ {
			require.Less(t, at, int64(100), "bounded")
			label := fmt.Sprintf("crash at request %d (after: %v)", at, after)
			// Each crash in a project of its own, in one table and bucket.
			project := uuid.NewString()
			setup, batch := forProject(setup, f.projectID, project), forProject([][]StreamRecord{batch}, f.projectID, project)[0]
			healthy := NewListIndexStore(NewTable(client, name), blobs, cfg)
			for _, b := range setup {
				require.NoError(t, healthy.Apply(ctx, f.shard, b))
			}
			crash := &lxCrash{at: at, after: after}
			crashing := NewListIndexStore(NewTable(&lxCrashTable{API: client, c: crash}, name), &lxCrashBlobs{RunBlobs: blobs, c: crash}, cfg)
			err := crashing.Apply(ctx, f.shard, batch)
			if crash.n.Load() < at {
				require.NoError(t, err, label)
				if after {
					t.Logf("the batch's requests: %v", crash.ops)
				}
				break // no request failed: every step has been crashed at
			}
			tried++
			// A crash in a compaction does not fail the batch, which is applied already.
			retry := NewListIndexStore(NewTable(client, name), blobs, cfg)
			require.NoError(t, retry.Apply(ctx, f.shard, batch), label)
			assertExact(t, f.want, retry.state(t, project), label+", retried")
			require.NoError(t, retry.Apply(ctx, f.shard, batch), label)
			assertExact(t, f.want, retry.state(t, project), label+", delivered again")
			if t.Failed() {
				t.Logf("%s: requests %v", label, crash.ops)
				return
			}
		}
	}
	t.Logf("%d crashes", tried)
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
