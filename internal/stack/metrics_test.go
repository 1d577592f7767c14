package stack_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/rollup"
)

// sentSpan is what the test sent of a span, in its last version.
type sentSpan struct {
	id, trace, name, kind, model, env string
	prompt                            string
	start                             time.Time
	ms                                float64
	cost                              float64
	in, out                           int64
	failed                            bool
}

// TestMetricsEqualARecount sends random spans over three hours through POST /spans (some sent
// again with another cost, another status and another duration), applies the table's stream
// to the rollups in between and at the end, and reads GET /projects/{project_id}/metrics
// through the Go client: every bucket of every bucket size, unfiltered and under each filter,
// equals a recount of the spans as last sent, and the latency percentiles are within the
// sketch's relative error of the true ones. The other project's metrics stay empty.
func TestMetricsEqualARecount(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	web := httptest.NewServer(srv.Handler)
	t.Cleanup(web.Close)
	c, err := client.New(client.WithBaseURL(web.URL), client.WithAPIKey(srv.A.Key), client.WithProject(srv.A.ProjectID),
		client.WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	ctx := context.Background()

	base := time.Now().UTC().Truncate(time.Hour).Add(-3 * time.Hour)
	rng := rand.New(rand.NewPCG(7, 27))
	for _, slug := range []string{"support-bot", "triage"} {
		srv.EnsurePrompt(t, srv.A, slug, "You are "+slug+".")
	}
	sent := map[string]*sentSpan{}
	var ids []string
	for round := range 4 {
		var batch []map[string]any
		for i := range 30 {
			s := &sentSpan{}
			if round > 0 && i%3 == 0 {
				s = sent[ids[rng.IntN(len(ids))]] // sent again, changed
			} else {
				s.id = uuidOf(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, rng.Uint64()), rng.Uint64()))
				s.trace = uuidOf(binary.BigEndian.AppendUint64(make([]byte, 8), uint64(1+rng.IntN(12))))
				s.name = []string{"retrieve", "answer", "plan"}[rng.IntN(3)]
				s.kind = []string{"llm", "tool", "custom"}[rng.IntN(3)]
				s.env = []string{"prod", "dev"}[rng.IntN(2)]
				s.start = base.Add(time.Duration(rng.IntN(3*3600)) * time.Second)
				if s.kind == "llm" {
					s.model = []string{"gpt-4o-mini", "claude-sonnet-4.5"}[rng.IntN(2)]
					s.in, s.out = int64(1+rng.IntN(500)), int64(1+rng.IntN(200))
					s.prompt = []string{"", "support-bot", "triage"}[rng.IntN(3)]
				}
				sent[s.id] = s
				ids = append(ids, s.id)
			}
			s.ms = float64(1 + rng.IntN(5000))
			s.cost = float64(rng.IntN(1000)) / 1e4
			s.failed = rng.IntN(5) == 0
			batch = append(batch, s.wire())
		}
		srv.MustDo(t, "POST", "/spans", srv.A.Key, batch)
		srv.DrainStream(t)
	}

	spans := slices.Collect(func(yield func(*sentSpan) bool) {
		for _, s := range sent {
			if !yield(s) {
				return
			}
		}
	})
	from, to := base, base.Add(3*time.Hour)
	for _, tt := range []struct {
		name   string
		q      api.MetricsQuery
		filter func(*sentSpan) bool
	}{
		{"hours", api.MetricsQuery{Bucket: api.BucketHour}, nil},
		{"minutes", api.MetricsQuery{Bucket: api.BucketMinute}, nil},
		{"days", api.MetricsQuery{Bucket: api.BucketDay}, nil},
		{"kind", api.MetricsQuery{Bucket: api.BucketHour, SpanKind: "llm"}, func(s *sentSpan) bool { return s.kind == "llm" }},
		{"name", api.MetricsQuery{Bucket: api.BucketHour, SpanName: "plan"}, func(s *sentSpan) bool { return s.name == "plan" }},
		{"model", api.MetricsQuery{Bucket: api.BucketHour, Model: "gpt-4o-mini"}, func(s *sentSpan) bool { return s.model == "gpt-4o-mini" }},
		{"tag", api.MetricsQuery{Bucket: api.BucketDay, TagKey: "env", TagValue: "prod"}, func(s *sentSpan) bool { return s.env == "prod" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.From, q.To = from, to
			if q.Bucket == api.BucketMinute {
				q.From = to.Add(-time.Hour) // a day of minutes at most: the last hour
			}
			got, err := c.Metrics(ctx, q)
			require.NoError(t, err)
			step := q.Bucket.Step()
			wantFrom := q.From.Truncate(step)
			require.Equal(t, int(ceilTo(q.To, step).Sub(wantFrom)/step), len(got.Buckets))
			for i, b := range got.Buckets {
				assert.Equal(t, wantFrom.Add(time.Duration(i)*step), b.Start.UTC())
				end := b.Start.Add(step)
				expectValues(t, fmt.Sprintf("bucket %s", b.Start), b.MetricsValues, spans, tt.filter, b.Start, end)
			}
			expectValues(t, "totals", got.Totals, spans, tt.filter, got.From, got.To)
		})
	}

	// People's feedback on completions counts in the bucket it was given in, per prompt too; a
	// person who changes their mind moves their count.
	up, down := map[string]int64{}, map[string]int64{}
	given := 0
	for _, s := range spans {
		if s.prompt == "" || given == 6 {
			continue
		}
		thumb := given%2 == 0
		path := "/v1/prompts/" + s.prompt + "/completions/" + s.id + "/feedback"
		srv.MustDo(t, "POST", path, srv.A.Key, map[string]any{"thumbs_up": thumb})
		if given == 0 {
			srv.DrainStream(t)
			srv.MustDo(t, "POST", path, srv.A.Key, map[string]any{"thumbs_up": false})
			thumb = false
		}
		if thumb {
			up[s.prompt]++
		} else {
			down[s.prompt]++
		}
		given++
	}
	srv.DrainStream(t)
	withFeedback, err := c.Metrics(ctx, api.MetricsQuery{From: from, To: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	require.NotNil(t, withFeedback.Totals.Feedback)
	assert.Equal(t, int64(given), withFeedback.Totals.Feedback.Up+withFeedback.Totals.Feedback.Down)
	for _, p := range withFeedback.Totals.Prompts {
		assert.Equal(t, up[p.Prompt], p.FeedbackUp, "thumbs up on %s", p.Prompt)
		assert.Equal(t, down[p.Prompt], p.FeedbackDown, "thumbs down on %s", p.Prompt)
	}

	other, err := client.New(client.WithBaseURL(web.URL), client.WithAPIKey(srv.B.Key), client.WithProject(srv.B.ProjectID),
		client.WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	empty, err := other.Metrics(ctx, api.MetricsQuery{From: from, To: to})
	require.NoError(t, err)
	assert.Zero(t, empty.Totals.Spans, "another project's metrics count nothing of this one")
	assert.Zero(t, *empty.Totals.Traces)
}

func (s *sentSpan) wire() map[string]any {
	status := "ok"
	if s.failed {
		status = "error"
	}
	w := map[string]any{
		"id": s.id, "trace_id": s.trace, "name": s.name, "kind": s.kind, "status": status, "cost": s.cost,
		"started_at": float64(s.start.UnixMicro()) / 1e6, "duration_ms": s.ms, "tags": map[string]string{"env": s.env},
	}
	if s.model != "" {
		attrs := map[string]any{"provider": "openai", "model": s.model, "inputTokens": s.in, "outputTokens": s.out}
		if s.prompt != "" {
			attrs["zeroeval"] = map[string]any{"prompt_slug": s.prompt}
		}
		w["attributes"] = attrs
	}
	return w
}

// expectValues checks v against a recount of spans in [from, to) (those filter keeps; nil
// keeps all and counts traces too).
func expectValues(t *testing.T, what string, v api.MetricsValues, spans []*sentSpan, filter func(*sentSpan) bool, from, to time.Time) {
	t.Helper()
	in := func(at time.Time) bool { return !at.Before(from) && at.Before(to) }
	var n, failed, calls, tokIn, tokOut int64
	var cost float64
	prompts := map[string]api.PromptMetrics{}
	var durations []float64
	type traceOf struct {
		start, end time.Time
		failed     bool
	}
	traces := map[string]*traceOf{}
	for _, s := range spans {
		end := s.start.Add(time.Duration(s.ms * float64(time.Millisecond)))
		tr := traces[s.trace]
		if tr == nil {
			tr = &traceOf{start: s.start, end: end}
			traces[s.trace] = tr
		}
		tr.start, tr.end, tr.failed = minTime(tr.start, s.start), maxTime(tr.end, end), tr.failed || s.failed
		if (filter != nil && !filter(s)) || !in(s.start) {
			continue
		}
		n++
		cost += s.cost
		durations = append(durations, s.ms)
		if s.failed {
			failed++
		}
		if s.model != "" {
			calls++
			tokIn += s.in
			tokOut += s.out
		}
		if s.prompt != "" {
			p := prompts[s.prompt]
			p.Prompt, p.Spans, p.Cost = s.prompt, p.Spans+1, p.Cost+s.cost
			if s.failed {
				p.ErrorSpans++
			}
			prompts[s.prompt] = p
		}
	}
	for _, p := range v.Prompts {
		want := prompts[p.Prompt]
		assert.Equal(t, want.Spans, p.Spans, "%s: spans of prompt %s", what, p.Prompt)
		assert.Equal(t, want.ErrorSpans, p.ErrorSpans, "%s: error spans of prompt %s", what, p.Prompt)
		assert.InDelta(t, want.Cost, p.Cost, 1e-9, "%s: cost of prompt %s", what, p.Prompt)
		delete(prompts, p.Prompt)
	}
	assert.Empty(t, prompts, "%s: prompts with spans missing from the answer", what)
	assert.Equal(t, n, v.Spans, "%s: spans", what)
	assert.Equal(t, failed, v.ErrorSpans, "%s: error spans", what)
	assert.InDelta(t, cost, v.Cost, 1e-9, "%s: cost", what)
	assert.Equal(t, calls, v.LLMCalls, "%s: llm calls", what)
	assert.Equal(t, tokIn, v.InputTokens, "%s: input tokens", what)
	assert.Equal(t, tokOut, v.OutputTokens, "%s: output tokens", what)
	expectPercentiles(t, what+": span latency", v.SpanLatencyMS, durations)
	if filter != nil {
		assert.Nil(t, v.Traces, "%s: no trace counts under a span filter", what)
		return
	}
	var nt, ft int64
	var traceMS []float64
	for _, tr := range traces {
		if !in(tr.start) {
			continue
		}
		nt++
		if tr.failed {
			ft++
		}
		traceMS = append(traceMS, float64(tr.end.Sub(tr.start).Microseconds())/1000)
	}
	require.NotNil(t, v.Traces, what)
	assert.Equal(t, nt, *v.Traces, "%s: traces", what)
	assert.Equal(t, ft, *v.ErrorTraces, "%s: error traces", what)
	expectPercentiles(t, what+": trace latency", v.LatencyMS, traceMS)
}

// expectPercentiles checks p against the nearest-rank percentiles of ds, within the relative
// error the answer promises.
func expectPercentiles(t *testing.T, what string, p *api.Percentiles, ds []float64) {
	t.Helper()
	if len(ds) == 0 {
		assert.Nil(t, p, what)
		return
	}
	require.NotNil(t, p, what)
	slices.Sort(ds)
	assert.Equal(t, int64(len(ds)), p.Count, what)
	for _, c := range []struct {
		q   float64
		got float64
	}{{0.50, p.P50}, {0.95, p.P95}, {0.99, p.P99}} {
		want := ds[max(int(math.Ceil(c.q*float64(len(ds)))), 1)-1]
		assert.InEpsilon(t, want, c.got, api.MetricsRelativeError*1.0001, "%s: p%.0f", what, c.q*100)
	}
}

func ceilTo(t time.Time, step time.Duration) time.Time {
	if f := t.Truncate(step); !f.Equal(t) {
		return f.Add(step)
	}
	return t
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// failingUpdates is DynamoDB whose UpdateItem fails from the (after+1)th call on, as if the
// consumer died there: the updates before it are stored.
type failingUpdates struct {
	ddb.API
	after, n int
	mu       sync.Mutex
}

func (f *failingUpdates) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.mu.Lock()
	f.n++
	fail := f.n > f.after
	f.mu.Unlock()
	if fail {
		return nil, errors.New("crashed")
	}
	return f.API.UpdateItem(ctx, in, o...)
}

// TestRollupsCountEachRecordOnce delivers one batch of stream records again and again, whole,
// in halves, overlapping what was added, record by record, and after a consumer that died after
// each number of its updates: the metrics stay those of the batch applied once.
func TestRollupsCountEachRecordOnce(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	base := time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour)
	rng := rand.New(rand.NewPCG(3, 25))
	var batch []map[string]any
	for i := range 24 {
		s := &sentSpan{id: uuidOf(binary.BigEndian.AppendUint64(make([]byte, 8), uint64(i+1))),
			trace: uuidOf(binary.BigEndian.AppendUint64(make([]byte, 8), uint64(100+i%5))),
			name:  "step", kind: []string{"llm", "tool"}[i%2], env: "prod", start: base.Add(time.Duration(rng.IntN(7200)) * time.Second),
			ms: float64(1 + rng.IntN(900)), cost: 0.001, failed: i%4 == 0}
		if s.kind == "llm" {
			s.model, s.in, s.out = "gpt-4o-mini", 10, 5
		}
		batch = append(batch, s.wire())
	}
	srv.MustDo(t, "POST", "/spans", srv.A.Key, batch)
	shard, records := captureStream(t, srv)
	require.NotEmpty(t, records)

	ctx := context.Background()
	q := api.MetricsQuery{From: base, To: base.Add(2 * time.Hour), Bucket: api.BucketMinute}
	metricsOf := func(r rollup.Reader) api.Metrics {
		m, err := rollup.Metrics(ctx, r, srv.A.ProjectID, q)
		require.NoError(t, err)
		return m
	}
	store := srv.Env.Rollups()
	require.NoError(t, store.Apply(ctx, shard, records))
	want := metricsOf(store)
	require.Equal(t, int64(len(batch)), want.Totals.Spans)

	half := len(records) / 2
	for name, redelivery := range map[string][][]ddb.StreamRecord{
		"whole":       {records},
		"halves":      {records[:half], records[half:]},
		"overlapping": {records[half/2 : half+half/2], records[1:]},
		"one by one":  slices.Collect(slices.Chunk(records, 1)),
	} {
		for _, part := range redelivery {
			require.NoError(t, store.Apply(ctx, shard, part), name)
		}
		assert.True(t, reflect.DeepEqual(want, metricsOf(store)), "%s: a record delivered again is not counted again", name)
	}

	for after := range 12 {
		other := apitest.New(t, apitest.Options{})
		crashing := ddb.NewRollupStore(ddb.NewTable(&failingUpdates{API: ddbtest.Client(t, nil), after: after}, other.TableName), 0)
		require.Error(t, crashing.Apply(ctx, shard, records), "a consumer that dies after %d updates fails its batch", after)
		fresh := ddb.NewRollupStore(ddb.NewTable(ddbtest.Client(t, nil), other.TableName), 0)
		require.NoError(t, fresh.Apply(ctx, shard, records), "Lambda retries the batch")
		assert.True(t, reflect.DeepEqual(want, metricsOf(fresh)), "after a consumer died after %d updates", after)
	}
}

// TestRollupWindowsCountEachRecordOnce applies a stream's records in tumbling windows, the
// state handed from batch to batch as Lambda hands it: in one window, given again into the
// state, a window's end given again after its writing (as when another store failed its
// invocation), in windows of three batches, in windows whose state passes its limit, and after a
// consumer that died at each update of a window's flush, both retried with the same state (as
// Lambda retries a failed invocation) and restarted from the window's first record with a
// fresh state and batches cut otherwise (as after the mapping's restart), ending before or
// after the flush that died. Every rollup item is that of the records applied once, batch by
// batch, and nothing is written before a window ends.
func TestRollupWindowsCountEachRecordOnce(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	base := time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour)
	rng := rand.New(rand.NewPCG(5, 27))
	for b := range 3 {
		var batch []map[string]any
		for i := range 12 {
			n := b*12 + i
			s := &sentSpan{id: uuidOf(binary.BigEndian.AppendUint64(make([]byte, 8), uint64(n+1))),
				trace: uuidOf(binary.BigEndian.AppendUint64(make([]byte, 8), uint64(100+n%7))),
				name:  []string{"plan", "step", "answer"}[n%3], kind: []string{"llm", "tool", "chain"}[n%3],
				env: []string{"prod", "dev"}[n%2], start: base.Add(time.Duration(rng.IntN(7200)) * time.Second),
				ms: float64(1 + rng.IntN(900)), cost: float64(1+rng.IntN(9)) / 1000, failed: n%5 == 0}
			if s.kind == "llm" {
				s.model, s.in, s.out = []string{"gpt-4o-mini", "claude-3-5-haiku"}[n%2], int64(10+n), 5
			}
			batch = append(batch, s.wire())
		}
		srv.MustDo(t, "POST", "/spans", srv.A.Key, batch)
	}
	shard, records := captureStream(t, srv)
	ctx := context.Background()
	storeOf := func(api ddb.API, table string) *ddb.RollupStore {
		return ddb.NewRollupStore(ddb.NewTable(api, table), 0)
	}
	fresh := func() (*dynamodb.Client, string) {
		client, _, table := ddbtest.NewTable(t)
		return client, table
	}

	client, table := fresh()
	for _, b := range slices.Collect(slices.Chunk(records, 7)) {
		require.NoError(t, storeOf(client, table).Apply(ctx, shard, b))
	}
	want := rollupItems(t, client, table)
	require.Greater(t, len(want), 20, "the spans change many rollup items")

	chunks := func(n int) [][]ddb.StreamRecord { return slices.Collect(slices.Chunk(records, n)) }
	// window applies batches as one window, each with the state the one before answered, and
	// the last as the window's final invocation; it answers the first failure.
	window := func(s *ddb.RollupStore, state map[string]string, batches [][]ddb.StreamRecord) (map[string]string, error) {
		for i, b := range batches {
			next, err := s.ApplyWindow(ctx, shard, b, ddb.StreamWindow{State: state, Final: i == len(batches)-1})
			if err != nil {
				return state, err
			}
			state = next
		}
		return state, nil
	}
	// open applies batches as the start of a window, and answers its state.
	open := func(s *ddb.RollupStore, batches [][]ddb.StreamRecord) map[string]string {
		var state map[string]string
		for _, b := range batches {
			var err error
			state, err = s.ApplyWindow(ctx, shard, b, ddb.StreamWindow{State: state})
			require.NoError(t, err)
		}
		return state
	}
	t.Run("one window", func(t *testing.T) {
		client, table := fresh()
		s := storeOf(client, table)
		state := open(s, chunks(5))
		require.NotEmpty(t, state)
		assert.Empty(t, rollupItems(t, client, table), "nothing is written before the window ends")
		_, err := s.ApplyWindow(ctx, shard, nil, ddb.StreamWindow{State: state, Final: true})
		require.NoError(t, err)
		assert.Equal(t, want, rollupItems(t, client, table))
	})
	t.Run("given again into the state", func(t *testing.T) {
		client, table := fresh()
		s := storeOf(client, table)
		var state map[string]string
		for _, b := range slices.Collect(slices.Chunk(records[:len(records)/2], 5)) {
			for range 2 {
				var err error
				state, err = s.ApplyWindow(ctx, shard, b, ddb.StreamWindow{State: state})
				require.NoError(t, err)
			}
		}
		_, err := s.ApplyWindow(ctx, shard, nil, ddb.StreamWindow{State: state, Final: true})
		require.NoError(t, err)
		_, err = window(s, nil, chunks(3)) // a mapping restarted from the first record: half of them written already
		require.NoError(t, err)
		assert.Equal(t, want, rollupItems(t, client, table))
	})
	t.Run("a window's end given again after its writing", func(t *testing.T) {
		client, table := fresh()
		s := storeOf(client, table)
		batches := chunks(5)
		half := len(batches) / 2
		state := open(s, batches[:half])
		for range 2 { // the second as Lambda retries an invocation another store failed
			_, err := s.ApplyWindow(ctx, shard, batches[half], ddb.StreamWindow{State: state, Final: true})
			require.NoError(t, err)
		}
		_, err := window(s, nil, chunks(3)) // and a mapping restarted from the first record
		require.NoError(t, err)
		assert.Equal(t, want, rollupItems(t, client, table))
	})
	t.Run("windows of three batches", func(t *testing.T) {
		client, table := fresh()
		s := storeOf(client, table)
		for _, w := range slices.Collect(slices.Chunk(chunks(4), 3)) {
			_, err := window(s, nil, w)
			require.NoError(t, err)
		}
		assert.Equal(t, want, rollupItems(t, client, table))
	})
	t.Run("a state past its limit", func(t *testing.T) {
		client, table := fresh()
		s := storeOf(client, table).WithStateLimit(4 << 10)
		var state map[string]string
		early := 0
		for _, b := range chunks(5) {
			next, err := s.ApplyWindow(ctx, shard, b, ddb.StreamWindow{State: state})
			require.NoError(t, err)
			if state != nil && next == nil {
				early++
			}
			state = next
		}
		_, err := s.ApplyWindow(ctx, shard, nil, ddb.StreamWindow{State: state, Final: true})
		require.NoError(t, err)
		assert.Positive(t, early, "a state past its limit is written within its window")
		assert.Equal(t, want, rollupItems(t, client, table))
	})

	// A window of the first two thirds of the records, whose flush dies: its updates counted on
	// a consumer that does not die.
	died := 2 * len(records) / 3
	prefix, final, rest := slices.Collect(slices.Chunk(records[:died-6], 5)), records[died-6:died], records[died:]
	counting := &failingUpdates{API: ddbtest.Client(t, nil), after: math.MaxInt}
	{
		_, table := fresh()
		_, err := window(storeOf(counting, table), nil, append(slices.Clone(prefix), final))
		require.NoError(t, err)
	}
	updates := counting.n
	require.Greater(t, updates, 20)
	// dies is that window with a final invocation that died after some updates of its flush:
	// its table, and the state Lambda hands the retry.
	dies := func(after int) (*dynamodb.Client, string, map[string]string) {
		client, table := fresh()
		state := open(storeOf(client, table), prefix)
		dying := &failingUpdates{API: client, after: after}
		_, err := storeOf(dying, table).ApplyWindow(ctx, shard, final, ddb.StreamWindow{State: state, Final: true})
		require.Error(t, err, "a consumer that dies after %d of %d updates fails its invocation", after, updates)
		return client, table, state
	}
	for after := range updates {
		client, table, state := dies(after)
		retry := [][]ddb.StreamRecord{final}
		if after%2 == 1 {
			retry = [][]ddb.StreamRecord{final[:2], final[2:]} // the batch cut otherwise
		}
		s := storeOf(client, table)
		_, err := window(s, state, retry)
		require.NoError(t, err)
		_, err = window(s, nil, slices.Collect(slices.Chunk(rest, 5)))
		require.NoError(t, err)
		assert.Equal(t, want, rollupItems(t, client, table), "retried with the same state after %d updates", after)

		// The mapping restarts from the window's first record, with a fresh state, in a window
		// past the one that died, or in one that ends before it and then one past it.
		client, table, _ = dies(after)
		s = storeOf(client, table)
		if after%2 == 0 {
			_, err = window(s, nil, chunks(4))
		} else {
			half := len(records) / 2
			if _, err = window(s, nil, slices.Collect(slices.Chunk(records[:half], 4))); err == nil {
				_, err = window(s, nil, slices.Collect(slices.Chunk(records[half:], 4)))
			}
		}
		require.NoError(t, err)
		assert.Equal(t, want, rollupItems(t, client, table), "restarted from the window's first record after %d updates", after)
	}
}

// rollupItems are the rollup items of table, their non-zero counters by key (without the shards'
// marks and the expiry).
func rollupItems(t *testing.T, api dynamodb.ScanAPIClient, table string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	p := dynamodb.NewScanPaginator(api, &dynamodb.ScanInput{TableName: &table})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Items {
			pk, _ := it["PK"].(*types.AttributeValueMemberS)
			sk, _ := it["SK"].(*types.AttributeValueMemberS)
			if pk == nil || !strings.Contains(pk.Value, "#RU#") {
				continue
			}
			counts := map[string]string{}
			for name, v := range it {
				if n, ok := v.(*types.AttributeValueMemberN); ok && name != "ttl" {
					f, err := strconv.ParseFloat(n.Value, 64) // 0.010 and 0.01 are one number
					require.NoError(t, err)
					if f != 0 { // a count added and taken back by another batch
						counts[name] = strconv.FormatFloat(f, 'g', -1, 64)
					}
				}
			}
			out[pk.Value+" "+sk.Value] = counts
		}
	}
	return out
}

// captureStream reads the records the table's stream holds, without applying them: the batch
// Lambda would deliver (the stream has one shard here).
func captureStream(t *testing.T, srv *apitest.API) (string, []ddb.StreamRecord) {
	t.Helper()
	var shard string
	var records []ddb.StreamRecord
	o := ddbtest.Client(t, nil).Options()
	p := &ddb.StreamPoller{DB: ddbtest.Client(t, nil), TableName: srv.TableName,
		Streams: ddb.NewStreamsClient(aws.Config{Region: o.Region, Credentials: o.Credentials}, ddbtest.Endpoint(t)),
		Apply: func(_ context.Context, s string, rs []ddb.StreamRecord) error {
			require.True(t, shard == "" || shard == s, "one shard")
			shard, records = s, append(records, rs...)
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

// TestMetricsCostFollowsTheAnswer reads the same 30 days of metrics from a project of 12 spans
// and one of 120 (ten times the traces, the same hours): the read costs the same requests and
// read units, since it reads a bucket's rollup item whatever the spans behind it.
func TestMetricsCostFollowsTheAnswer(t *testing.T) {
	type cost struct {
		requests int
		units    float64
	}
	measure := func(spans int) cost {
		srv := apitest.New(t, apitest.Options{})
		base := time.Now().UTC().Truncate(time.Hour).Add(-5 * time.Hour)
		var batch []map[string]any
		for i := range spans {
			s := &sentSpan{id: uuidOf(binary.BigEndian.AppendUint64(make([]byte, 8), uint64(i+1))),
				trace: uuidOf(binary.BigEndian.AppendUint64(make([]byte, 8), uint64(1000+i/3))),
				name:  "step", kind: "tool", env: "prod", start: base.Add(time.Duration(i%5) * time.Hour), ms: float64(1 + i%7), cost: 0.001}
			batch = append(batch, s.wire())
		}
		for part := range slices.Chunk(batch, 100) {
			srv.MustDo(t, "POST", "/spans", srv.A.Key, part)
		}
		srv.DrainStream(t)
		srv.DDB.Reset()
		m, err := rollup.Metrics(context.Background(), srv.Env.Rollups(), srv.A.ProjectID,
			api.MetricsQuery{From: base.Add(-29 * 24 * time.Hour), To: base.Add(6 * time.Hour), Bucket: api.BucketDay})
		require.NoError(t, err)
		require.Equal(t, int64(spans), m.Totals.Spans)
		read, _ := srv.DDB.Units()
		return cost{srv.DDB.Total(), read}
	}
	small, large := measure(12), measure(120)
	t.Logf("30 days of metrics: %+v at 12 spans, %+v at 120", small, large)
	assert.Equal(t, small.requests, large.requests, "the same requests")
	assert.InDelta(t, small.units, large.units, 0.5*small.units, "read units within 1.5x")
}
