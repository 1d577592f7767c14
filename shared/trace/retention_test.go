package trace_test

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// retentionRun ingests the same batches as every case of TestSpanRetention, on a clock of its
// own: a trace with a session and a prompt's llm span (t0); a new span of the trace and an
// update of the llm span (t0+1h); a second trace joining the session (t0+2h); the session
// named through POST /sessions (t0+3h).
type retentionRun struct {
	t       *testing.T
	client  *dynamodb.Client
	table   string
	reqs    *ddbtest.Counter
	apply   func() // the stream applied to the aggregates (aggregator)
	svc     *trace.Service
	store   *ddb.TraceStore
	project string
	now     time.Time
	items   map[string]map[string]types.AttributeValue // the table after the last step, by PK|SK
}

var retentionStart = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func newRetentionRun(t *testing.T, retention time.Duration) *retentionRun {
	client, counter, name := ddbtest.NewStreamTable(t)
	blobs, _, _ := blobtest.New(t)
	r := &retentionRun{t: t, client: client, table: name, reqs: counter, project: uuid.NewString(), now: retentionStart,
		apply: aggregator(t, name, ddb.WithRetention(retention))}
	r.store = ddb.NewTraceStore(ddb.NewTable(client, name), ddb.WithRetention(retention))
	r.svc = trace.NewService(r.store, blobs, nil, trace.WithClock(func() time.Time { return r.now }))
	return r
}

// step runs f at the run's time at and returns the requests it made and the items it and the
// stream's consumer of the aggregates wrote (new or changed).
func (r *retentionRun) step(at time.Time, f func(ctx context.Context) error) (map[string]int, map[string]map[string]types.AttributeValue) {
	r.t.Helper()
	r.now = at
	r.reqs.Reset()
	require.NoError(r.t, f(context.Background()))
	counts := r.reqs.Counts()
	r.apply()
	before := r.items
	r.items = scanAll(r.t, r.client, r.table)
	written := map[string]map[string]types.AttributeValue{}
	for k, it := range r.items {
		if old, ok := before[k]; !ok || !reflect.DeepEqual(old, it) {
			written[k] = it
		}
	}
	return counts, written
}

func scanAll(t *testing.T, client *dynamodb.Client, table string) map[string]map[string]types.AttributeValue {
	t.Helper()
	out := map[string]map[string]types.AttributeValue{}
	p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: &table, ConsistentRead: new(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Items {
			out[attrS(it, infra.AttrPK)+"|"+attrS(it, infra.AttrSK)] = it
		}
	}
	return out
}

func attrS(it map[string]types.AttributeValue, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// ttlOf is an item's TTL attribute, and whether it has one.
func ttlOf(t *testing.T, it map[string]types.AttributeValue) (int64, bool) {
	v, ok := it[infra.AttrTTL].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	require.NoError(t, err)
	return n, true
}

// keptForever reports whether an item is one that retention leaves without TTL on purpose:
// the day registry (shared/ddb/retention.go).
func keptForever(key string) bool {
	_, sk, _ := strings.Cut(key, "|")
	return strings.HasPrefix(sk, "DAYS#")
}

type retentionSteps struct {
	traceA, traceB, session     string
	root, llm, second, otherTop trace.Span
}

func newRetentionSteps() retentionSteps {
	s := retentionSteps{traceA: uuid.NewString(), traceB: uuid.NewString(), session: uuid.NewString()}
	start := retentionStart.Add(-time.Minute)
	s.root = span(s.traceA, "chat", nil, start, 900)
	s.root.SessionID = &s.session
	s.llm = span(s.traceA, "openai.chat", &s.root.ID, start.Add(100*time.Millisecond), 500)
	s.llm.Kind, s.llm.Cost = trace.KindLLM, ptr(0.0042)
	s.llm.Link = &trace.PromptLink{PromptSlug: "support-bot", ContentHash: strings.Repeat("ab", 32)}
	s.second = span(s.traceA, "tool", &s.root.ID, start.Add(time.Hour), 20)
	s.otherTop = span(s.traceB, "chat", nil, start.Add(2*time.Hour), 300)
	s.otherTop.SessionID = &s.session
	return s
}

// TestSpanRetention: with retention on, every tracing index item a write makes or changes
// carries the TTL attribute at the write's time plus the retention, and a later write of a
// trace or session refreshes theirs; the day registry carries none. With
// retention off, no item carries one, and both make the same requests.
func TestSpanRetention(t *testing.T) {
	const retention = 30 * 24 * time.Hour
	s := newRetentionSteps()
	updated := s.llm
	updated.Status, updated.Cost = ptr("error"), ptr(0.01)
	steps := []struct {
		name string
		at   time.Time
		run  func(*retentionRun, context.Context) error
	}{
		{"new trace in a session, with a completion", retentionStart, func(r *retentionRun, ctx context.Context) error {
			_, err := r.svc.Ingest(ctx, r.project, []trace.Span{s.root, s.llm})
			return err
		}},
		{"a new span and an update of the trace", retentionStart.Add(time.Hour), func(r *retentionRun, ctx context.Context) error {
			_, err := r.svc.Ingest(ctx, r.project, []trace.Span{s.second, updated})
			return err
		}},
		{"a second trace joins the session", retentionStart.Add(2 * time.Hour), func(r *retentionRun, ctx context.Context) error {
			_, err := r.svc.Ingest(ctx, r.project, []trace.Span{s.otherTop})
			return err
		}},
		{"the session named", retentionStart.Add(3 * time.Hour), func(r *retentionRun, ctx context.Context) error {
			return r.store.ApplySession(ctx, r.project, trace.SessionDelta{SessionID: s.session, Name: "support chat", At: r.now})
		}},
	}
	on, off := newRetentionRun(t, retention), newRetentionRun(t, 0)
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			onCounts, onWritten := on.step(st.at, func(ctx context.Context) error { return st.run(on, ctx) })
			offCounts, offWritten := off.step(st.at, func(ctx context.Context) error { return st.run(off, ctx) })
			assert.Equal(t, offCounts, onCounts, "retention adds no request")
			// With retention, a trace's later writes may also refresh its listing in its session
			// (once a day of the trace's life).
			require.GreaterOrEqual(t, len(onWritten), len(offWritten), "items written")
			require.NotEmpty(t, onWritten)
			want := st.at.Add(retention).Unix()
			for k, it := range onWritten {
				ttl, has := ttlOf(t, it)
				if keptForever(k) {
					assert.False(t, has, "%s must not expire", k)
					continue
				}
				if !assert.True(t, has, "%s has no TTL", k) {
					continue
				}
				if isListing(k) {
					assert.Equal(t, endOfDay(want), ttl, "TTL of %s: the end of the day of the write's time plus the retention", k)
				} else {
					assert.Equal(t, want, ttl, "TTL of %s: the write's time plus the retention", k)
				}
			}
			for k, it := range on.items {
				ttl, has := ttlOf(t, it)
				if !keptForever(k) && assert.True(t, has, "%s has no TTL", k) {
					lo, hi := retentionStart.Add(retention).Unix(), want
					if isListing(k) {
						lo, hi = endOfDay(lo), endOfDay(hi)
					}
					assert.GreaterOrEqual(t, ttl, lo, k)
					assert.LessOrEqual(t, ttl, hi, k)
				}
			}
			for k, it := range off.items {
				_, has := ttlOf(t, it)
				assert.False(t, has, "retention off: %s has a TTL", k)
			}
		})
	}

	// What each item ended with: a trace, a session and a span live from their last write; a
	// batch's items from their batch. A small trace lists its spans, and a small session its
	// traces, in their own items (shared/ddb's TestItemsListTheirIDsUntilFull).
	ttl := func(pkSuffix, skPrefix string) []int64 {
		var out []int64
		for _, k := range slices.Sorted(maps.Keys(on.items)) {
			pk, sk, _ := strings.Cut(k, "|")
			if strings.HasSuffix(pk, pkSuffix) && strings.HasPrefix(sk, skPrefix) {
				v, _ := ttlOf(t, on.items[k])
				out = append(out, v)
			}
		}
		return out
	}
	at := func(h int) int64 { return retentionStart.Add(time.Duration(h)*time.Hour + retention).Unix() }
	assert.Equal(t, []int64{at(1)}, ttl("#T#"+s.traceA, "TRACE"), "trace A: its last write")
	assert.Empty(t, ttl("#T#"+s.traceA, "M#"), "trace A lists its spans in its item: no member items")
	assert.Equal(t, []int64{at(3)}, ttl("#SE#"+s.session, "SESSION"), "the session: POST /sessions")
	assert.Empty(t, ttl("#SE#"+s.session, "T#"), "the session lists its traces in its item: no listing items")
	assert.Equal(t, []int64{at(0)}, ttl("#S#"+s.root.ID, "SPAN"), "a span written once")
	assert.Equal(t, []int64{at(1)}, ttl("#S#"+s.llm.ID, "SPAN"), "a span updated")
	assert.Equal(t, []int64{at(0), at(1)}, ttl("#PC#support-bot", ""), "completions: their batches")
}

// isListing reports whether the item k names is a session's listing of a trace, which expires
// at the end of the day its trace does (written again once a day of the trace's life, not at
// each of its writes).
func isListing(k string) bool {
	pk, sk, _ := strings.Cut(k, "|")
	return strings.Contains(pk, "#SE#") && strings.HasPrefix(sk, "T#")
}

// endOfDay is the end of the UTC day of the Unix time ttl.
func endOfDay(ttl int64) int64 { return (ttl/86400 + 1) * 86400 }

// expiredBlobs is the bucket after its lifecycle rule deleted some batch objects, before
// DynamoDB's TTL deleted their summaries.
type expiredBlobs struct {
	trace.Blobs
	gone map[string]bool
}

func (b expiredBlobs) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if b.gone[key] {
		return nil, errs.NotFound("object %q not found", key)
	}
	return b.Blobs.GetRange(ctx, key, offset, length)
}

// TestExpiredBatchObject: a summary that outlives its batch object (S3 expired it, DynamoDB has
// not deleted the summary yet) is a span that has expired: reads leave it out instead of
// failing, an attachment to it is not found, and a re-send stores it again.
func TestExpiredBatchObject(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	traceID := uuid.NewString()
	start := time.Now().UTC().Add(-time.Hour)
	old := span(traceID, "old", nil, start, 10)
	_, err := h.svc.Ingest(ctx, h.project, []trace.Span{old})
	require.NoError(t, err)
	recent := span(traceID, "recent", &old.ID, start.Add(time.Minute), 10)
	_, err = h.svc.Ingest(ctx, h.project, []trace.Span{recent})
	require.NoError(t, err)
	h.apply()
	sums, err := h.store.Summaries(ctx, h.project, []string{old.ID, recent.ID})
	require.NoError(t, err)
	require.NotEqual(t, sums[old.ID].Location.Key, sums[recent.ID].Location.Key)

	blobs := expiredBlobs{Blobs: h.blobs, gone: map[string]bool{sums[old.ID].Location.Key: true}}
	recs, err := trace.LoadRecords(ctx, blobs, map[string]trace.Location{old.ID: sums[old.ID].Location, recent.ID: sums[recent.ID].Location})
	require.NoError(t, err)
	assert.Equal(t, []string{recent.ID}, slices.Collect(maps.Keys(recs)))

	queries := trace.NewQueries(h.store, blobs)
	spans, _, err := queries.Spans(ctx, h.project, trace.SpanQuery{TraceID: traceID, Common: trace.Common{Limit: 10}})
	require.NoError(t, err)
	require.Len(t, spans, 1)
	assert.Equal(t, recent.ID, spans[0].ID)

	svc := trace.NewService(h.store, blobs, nil)
	err = svc.Attach(ctx, h.project, old.ID, trace.Attachment{Type: "image", Key: "k"})
	assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "attach to an expired span: %v", err)

	resent := old
	resent.Name = "old again"
	_, err = svc.Ingest(ctx, h.project, []trace.Span{resent})
	require.NoError(t, err)
	h.apply()
	spans, _, err = trace.NewQueries(h.store, h.blobs).Spans(ctx, h.project, trace.SpanQuery{ID: old.ID, Common: trace.Common{Limit: 1}})
	require.NoError(t, err)
	require.Len(t, spans, 1)
	assert.Equal(t, "old again", spans[0].Name)
	traces, err := h.store.Traces(ctx, h.project, []string{traceID})
	require.NoError(t, err)
	assert.Equal(t, 2, traces[0].SpanCount, "a re-sent span is not counted again")
}
