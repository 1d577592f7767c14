package ratelimit_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/ratelimit"
)

// t0 is 10 s into the minute 12:00 of 2026-03-01, UTC.
var t0 = time.Date(2026, 3, 1, 12, 0, 10, 0, time.UTC)

// newStore returns the counters in a fresh DynamoDB Local table and the table's request counter.
func newStore(t testing.TB) (*ddb.RateLimitStore, *ddbtest.Counter) {
	t.Helper()
	client, counter, name := ddbtest.NewTable(t)
	return ddb.NewRateLimitStore(ddb.NewTable(client, name)), counter
}

// instances returns n limiters sharing store and clock: n Lambda instances of one deployment.
func instances(n int, store ratelimit.Store, cfg ratelimit.Config, c *apitest.Clock) []*ratelimit.Limiter {
	ls := make([]*ratelimit.Limiter, n)
	for i := range ls {
		ls[i] = ratelimit.New(store, cfg, c.Now)
	}
	return ls
}

// requireRefusal checks that err refuses for limit with retry, as a 429.
func requireRefusal(t *testing.T, err error, limit ratelimit.Limit, retry time.Duration) {
	t.Helper()
	var r *ratelimit.Refusal
	require.ErrorAs(t, err, &r)
	assert.Equal(t, limit, r.Limit)
	assert.Equal(t, retry, r.RetryAfter)
	assert.Equal(t, errs.CodeRateLimited, errs.CodeOf(err))
}

func TestLimiterRequestsPerMinute(t *testing.T) {
	store, _ := newStore(t)
	ctx := context.Background()
	tests := []struct {
		name      string
		instances int
	}{
		{"one instance", 1},
		{"requests spread over three instances", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := apitest.NewClock(t0)
			ls := instances(tt.instances, store, ratelimit.Config{RequestsPerMinute: 60, MaxStaleness: time.Second}, c)
			project := uuid.NewString()
			for i := range 60 {
				require.NoError(t, ls[i%len(ls)].Admit(ctx, project), "request %d", i+1)
			}
			for i, l := range ls {
				err := l.Admit(ctx, project)
				requireRefusal(t, err, ratelimit.RequestsPerMinute, 50*time.Second)
				assert.EqualError(t, err, "the project has reached its limit of 60 requests per minute; retry in 50s", "instance %d", i)
			}
			assert.NoError(t, ls[0].Admit(ctx, uuid.NewString()), "another project")

			c.Set(t0.Add(50 * time.Second)) // 12:01:00
			for i, l := range ls {
				assert.NoError(t, l.Admit(ctx, project), "instance %d in the next minute", i)
			}
		})
	}
}

// TestLimiterConcurrentAdmits: shard quotas admit exactly the limit, whatever the concurrency
// and the number of instances, with the cache on (it holds only token and spend sums).
func TestLimiterConcurrentAdmits(t *testing.T) {
	store, _ := newStore(t)
	c := apitest.NewClock(t0)
	ls := instances(4, store, ratelimit.Config{RequestsPerMinute: 100, TokensPerMinute: 1 << 40, MaxStaleness: time.Second}, c)
	project := uuid.NewString()
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			err := ls[i%len(ls)].Admit(context.Background(), project)
			var r *ratelimit.Refusal
			switch {
			case err == nil:
				admitted.Add(1)
			case errors.As(err, &r) && r.Limit == ratelimit.RequestsPerMinute:
				refused.Add(1)
			default:
				t.Errorf("admit: %v", err)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(100), admitted.Load())
	assert.Equal(t, int64(100), refused.Load())
}

// TestLimiterConcurrentAdmitsShareOneRead: with a cache, an instance's concurrent admissions of
// a project read the sums once.
func TestLimiterConcurrentAdmitsShareOneRead(t *testing.T) {
	store, counter := newStore(t)
	l := ratelimit.New(store, ratelimit.Config{TokensPerMinute: 1000, DailyUSD: 1, MaxStaleness: time.Second}, apitest.NewClock(t0).Now)
	project := uuid.NewString()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { assert.NoError(t, l.Admit(context.Background(), project)) })
	}
	wg.Wait()
	assert.Equal(t, map[string]int{"BatchGetItem": 1}, counter.Counts())
}

func TestLimiterTokensPerMinute(t *testing.T) {
	store, _ := newStore(t)
	ctx := context.Background()
	tests := []struct {
		name      string
		staleness time.Duration
	}{
		{"sums cached", time.Second},
		{"sums read on every admission", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := apitest.NewClock(t0)
			cfg := ratelimit.Config{TokensPerMinute: 1000, MaxStaleness: tt.staleness}
			l := ratelimit.New(store, cfg, c.Now)
			project := uuid.NewString()

			require.NoError(t, l.Admit(ctx, project))
			require.NoError(t, l.Record(ctx, project, 600, 0.01))
			require.NoError(t, l.Admit(ctx, project), "600 tokens of 1000")
			require.NoError(t, l.Record(ctx, project, 500, 0.01))
			err := l.Admit(ctx, project)
			requireRefusal(t, err, ratelimit.TokensPerMinute, 50*time.Second)
			assert.EqualError(t, err, "the project has reached its limit of 1000 tokens per minute; retry in 50s")
			requireRefusal(t, ratelimit.New(store, cfg, c.Now).Admit(ctx, project), ratelimit.TokensPerMinute, 50*time.Second)
			assert.NoError(t, l.Admit(ctx, uuid.NewString()), "another project")

			c.Set(t0.Add(50 * time.Second))
			assert.NoError(t, l.Admit(ctx, project), "the next minute")
		})
	}
}

// TestLimiterStaleness: an instance sees another's Record once its sums are MaxStaleness old,
// and at once without a cache.
func TestLimiterStaleness(t *testing.T) {
	store, _ := newStore(t)
	ctx := context.Background()
	tests := []struct {
		name      string
		staleness time.Duration
		// admittedUntil is how long after its read an instance still admits.
		admittedUntil time.Duration
	}{
		{"one second", time.Second, time.Second - time.Nanosecond},
		{"no cache", 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := apitest.NewClock(t0)
			ls := instances(2, store, ratelimit.Config{TokensPerMinute: 1000, MaxStaleness: tt.staleness}, c)
			project := uuid.NewString()
			require.NoError(t, ls[1].Admit(ctx, project), "reads the sums at t0")
			require.NoError(t, ls[0].Record(ctx, project, 1000, 0))
			if tt.admittedUntil >= 0 {
				assert.NoError(t, ls[1].Admit(ctx, project), "sums read 0 s ago")
				c.Set(t0.Add(tt.admittedUntil))
				assert.NoError(t, ls[1].Admit(ctx, project), "sums read %s ago", tt.admittedUntil)
			}
			c.Set(t0.Add(tt.staleness))
			requireRefusal(t, ls[1].Admit(ctx, project), ratelimit.TokensPerMinute, 50*time.Second-tt.staleness)
		})
	}
}

func TestLimiterDailySpend(t *testing.T) {
	store, _ := newStore(t)
	ctx := context.Background()
	c := apitest.NewClock(t0)
	cfg := ratelimit.Config{DailyUSD: 1, MaxStaleness: time.Second}
	l := ratelimit.New(store, cfg, c.Now)
	project := uuid.NewString()

	// Ten calls of $0.10 reach $1 exactly (in float64 they add up to 0.9999999999999999).
	for i := range 10 {
		require.NoError(t, l.Admit(ctx, project), "call %d", i+1)
		require.NoError(t, l.Record(ctx, project, 100, 0.1))
	}
	err := l.Admit(ctx, project)
	requireRefusal(t, err, ratelimit.DailySpend, 11*time.Hour+59*time.Minute+50*time.Second)
	assert.EqualError(t, err, "the project has reached its daily spend cap of $1.00; retry in 11h59m50s")
	requireRefusal(t, ratelimit.New(store, cfg, c.Now).Admit(ctx, project), ratelimit.DailySpend, 11*time.Hour+59*time.Minute+50*time.Second)
	assert.NoError(t, l.Admit(ctx, uuid.NewString()), "another project")

	c.Set(time.Date(2026, 3, 1, 23, 59, 59, 500_000_000, time.UTC))
	err = l.Admit(ctx, project)
	requireRefusal(t, err, ratelimit.DailySpend, 500*time.Millisecond)
	assert.EqualError(t, err, "the project has reached its daily spend cap of $1.00; retry in 1s", "Retry-After rounds up")

	c.Set(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC))
	assert.NoError(t, l.Admit(ctx, project), "the next UTC day")
}

func TestLimiterRecordInvalid(t *testing.T) {
	l := ratelimit.New(nil, ratelimit.Config{TokensPerMinute: 1, DailyUSD: 1}, nil)
	tests := []struct {
		name    string
		project string
		tokens  int
		cost    float64
	}{
		{"no project", "", 1, 1},
		{"negative tokens", "p", -1, 1},
		{"negative cost", "p", 1, -0.01},
		{"cost not a number", "p", 1, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, errs.CodeInvalid, errs.CodeOf(l.Record(context.Background(), tt.project, tt.tokens, tt.cost)))
		})
	}
	assert.Equal(t, errs.CodeInvalid, errs.CodeOf(l.Admit(context.Background(), "")))
}

// TestLimiterRequestsPerOperation: the DynamoDB requests of each path (package documentation).
func TestLimiterRequestsPerOperation(t *testing.T) {
	store, counter := newStore(t)
	ctx := context.Background()
	every := ratelimit.Config{RequestsPerMinute: 1000, TokensPerMinute: 1000, DailyUSD: 10, MaxStaleness: time.Second}
	admit := func(l *ratelimit.Limiter, project string) error { return l.Admit(ctx, project) }
	record := func(l *ratelimit.Limiter, project string) error { return l.Record(ctx, project, 10, 0.01) }
	tests := []struct {
		name string
		cfg  ratelimit.Config
		// before runs on the limiter, another instance and the clock before the counted call.
		before  func(t *testing.T, l, other *ratelimit.Limiter, c *apitest.Clock, project string)
		call    func(l *ratelimit.Limiter, project string) error
		refused ratelimit.Limit
		want    map[string]int
	}{
		{name: "no limits: admit", cfg: ratelimit.Config{}, call: admit, want: map[string]int{}},
		{name: "no limits: record", cfg: ratelimit.Config{}, call: record, want: map[string]int{}},
		{name: "requests: admit", cfg: ratelimit.Config{RequestsPerMinute: 1000}, call: admit,
			want: map[string]int{"UpdateItem": 1}},
		{name: "every limit: first admit", cfg: every, call: admit,
			want: map[string]int{"BatchGetItem": 1, "UpdateItem": 1}},
		{name: "every limit: admit with the sums cached", cfg: every,
			before: func(t *testing.T, l, _ *ratelimit.Limiter, _ *apitest.Clock, p string) {
				require.NoError(t, l.Admit(ctx, p))
			},
			call: admit, want: map[string]int{"UpdateItem": 1}},
		{name: "every limit: admit once the cache is stale", cfg: every,
			before: func(t *testing.T, l, _ *ratelimit.Limiter, c *apitest.Clock, p string) {
				require.NoError(t, l.Admit(ctx, p))
				c.Set(t0.Add(time.Second))
			},
			call: admit, want: map[string]int{"BatchGetItem": 1, "UpdateItem": 1}},
		{name: "tokens and spend: admit with the sums cached", cfg: ratelimit.Config{TokensPerMinute: 1000, DailyUSD: 10, MaxStaleness: time.Second},
			before: func(t *testing.T, l, _ *ratelimit.Limiter, _ *apitest.Clock, p string) {
				require.NoError(t, l.Admit(ctx, p))
			},
			call: admit, want: map[string]int{}},
		{name: "every limit: record", cfg: every, call: record, want: map[string]int{"UpdateItem": 2}},
		{name: "tokens: record", cfg: ratelimit.Config{TokensPerMinute: 1000}, call: record,
			want: map[string]int{"UpdateItem": 1}},
		{name: "spend: record", cfg: ratelimit.Config{DailyUSD: 10}, call: record,
			want: map[string]int{"UpdateItem": 1}},
		{name: "requests reached, known to the instance", cfg: ratelimit.Config{RequestsPerMinute: 2},
			before: func(t *testing.T, l, _ *ratelimit.Limiter, _ *apitest.Clock, p string) {
				require.NoError(t, l.Admit(ctx, p))
				require.NoError(t, l.Admit(ctx, p))
			},
			call: admit, refused: ratelimit.RequestsPerMinute, want: map[string]int{}},
		{name: "requests reached on another instance: one failed write per shard", cfg: ratelimit.Config{RequestsPerMinute: 16},
			before: func(t *testing.T, _, other *ratelimit.Limiter, _ *apitest.Clock, p string) {
				for range 16 {
					require.NoError(t, other.Admit(ctx, p))
				}
			},
			call: admit, refused: ratelimit.RequestsPerMinute, want: map[string]int{"UpdateItem": ratelimit.Shards}},
		{name: "requests reached on another instance, then known", cfg: ratelimit.Config{RequestsPerMinute: 16},
			before: func(t *testing.T, l, other *ratelimit.Limiter, _ *apitest.Clock, p string) {
				for range 16 {
					require.NoError(t, other.Admit(ctx, p))
				}
				require.Error(t, l.Admit(ctx, p))
			},
			call: admit, refused: ratelimit.RequestsPerMinute, want: map[string]int{}},
		{name: "tokens reached: no request until the minute ends, cache or not", cfg: ratelimit.Config{RequestsPerMinute: 1000, TokensPerMinute: 10},
			before: func(t *testing.T, l, _ *ratelimit.Limiter, _ *apitest.Clock, p string) {
				require.NoError(t, l.Admit(ctx, p))
				require.NoError(t, l.Record(ctx, p, 10, 0))
			},
			call: admit, refused: ratelimit.TokensPerMinute, want: map[string]int{}},
		{name: "spend reached on another instance: one read", cfg: ratelimit.Config{RequestsPerMinute: 1000, DailyUSD: 1, MaxStaleness: time.Second},
			before: func(t *testing.T, _, other *ratelimit.Limiter, _ *apitest.Clock, p string) {
				require.NoError(t, other.Record(ctx, p, 0, 1))
			},
			call: admit, refused: ratelimit.DailySpend, want: map[string]int{"BatchGetItem": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := apitest.NewClock(t0)
			ls := instances(2, store, tt.cfg, c)
			project := uuid.NewString()
			if tt.before != nil {
				tt.before(t, ls[0], ls[1], c, project)
			}
			counter.Reset()
			err := tt.call(ls[0], project)
			if tt.refused != "" {
				var r *ratelimit.Refusal
				require.ErrorAs(t, err, &r)
				assert.Equal(t, tt.refused, r.Limit)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, counter.Counts())
		})
	}
}

// TestLimiterUsage: Usage reads what every instance recorded in the current windows, for the
// usage limits that are set only, in one BatchGetItem (none without a usage limit); a new
// minute starts the tokens from 0, a new day the spend.
func TestLimiterUsage(t *testing.T) {
	store, counter := newStore(t)
	ctx := context.Background()
	minute, day := t0.Truncate(time.Minute), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		cfg  ratelimit.Config
		// at is when Usage reads, after 120 tokens and $0.75 recorded at t0 (by two instances).
		at         time.Time
		wantTokens *int64
		wantSpend  *float64
		wantReads  map[string]int
	}{
		{name: "every limit", cfg: ratelimit.Config{RequestsPerMinute: 10, TokensPerMinute: 1000, DailyUSD: 5},
			at: t0, wantTokens: ptr[int64](120), wantSpend: ptr(0.75), wantReads: map[string]int{"BatchGetItem": 1}},
		{name: "tokens only", cfg: ratelimit.Config{TokensPerMinute: 1000},
			at: t0, wantTokens: ptr[int64](120), wantReads: map[string]int{"BatchGetItem": 1}},
		{name: "spend only", cfg: ratelimit.Config{DailyUSD: 5},
			at: t0, wantSpend: ptr(0.75), wantReads: map[string]int{"BatchGetItem": 1}},
		{name: "requests only: nothing counted, nothing read", cfg: ratelimit.Config{RequestsPerMinute: 10},
			at: t0, wantReads: map[string]int{}},
		{name: "no limit", cfg: ratelimit.Config{}, at: t0, wantReads: map[string]int{}},
		{name: "the next minute", cfg: ratelimit.Config{TokensPerMinute: 1000, DailyUSD: 5},
			at: minute.Add(time.Minute), wantTokens: ptr[int64](0), wantSpend: ptr(0.75), wantReads: map[string]int{"BatchGetItem": 1}},
		{name: "the next day", cfg: ratelimit.Config{TokensPerMinute: 1000, DailyUSD: 5},
			at: day.AddDate(0, 0, 1), wantTokens: ptr[int64](0), wantSpend: ptr(0.0), wantReads: map[string]int{"BatchGetItem": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := apitest.NewClock(t0)
			ls := instances(2, store, tt.cfg, c)
			project := uuid.NewString()
			require.NoError(t, ls[0].Record(ctx, project, 100, 0.5))
			require.NoError(t, ls[1].Record(ctx, project, 20, 0.25))
			c.Set(tt.at)
			counter.Reset()
			u, err := ls[0].Usage(ctx, project)
			require.NoError(t, err)
			assert.Equal(t, tt.wantTokens, u.Tokens)
			if tt.wantSpend == nil {
				assert.Nil(t, u.SpendUSD)
			} else if assert.NotNil(t, u.SpendUSD) {
				assert.InDelta(t, *tt.wantSpend, *u.SpendUSD, 1e-9)
			}
			assert.Equal(t, tt.at.Truncate(time.Minute), u.Minute)
			assert.Equal(t, time.Date(tt.at.Year(), tt.at.Month(), tt.at.Day(), 0, 0, 0, 0, time.UTC), u.Day)
			assert.Equal(t, tt.wantReads, counter.Counts())
		})
	}

	t.Run("no project", func(t *testing.T) {
		_, err := ratelimit.New(store, ratelimit.Config{TokensPerMinute: 1}, nil).Usage(ctx, "")
		assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
	})
}

func ptr[T any](v T) *T { return &v }

// BenchmarkLimiterAdmit measures Admit with the token and spend sums cached (a frozen clock),
// against DynamoDB Local: "every limit" is dominated by its one UpdateItem; the others send
// nothing and measure the limiter itself.
func BenchmarkLimiterAdmit(b *testing.B) {
	store, counter := newStore(b)
	ctx := context.Background()
	usage := ratelimit.Config{TokensPerMinute: 1 << 40, DailyUSD: 1e6, MaxStaleness: ratelimit.DefaultMaxStaleness}
	every := usage
	every.RequestsPerMinute = 1e9
	benchmarks := []struct {
		name     string
		cfg      ratelimit.Config
		refused  bool
		parallel bool
	}{
		{name: "every limit", cfg: every},
		{name: "tokens and spend", cfg: usage},
		{name: "tokens and spend parallel", cfg: usage, parallel: true},
		{name: "refused by tokens", cfg: ratelimit.Config{TokensPerMinute: 1, MaxStaleness: ratelimit.DefaultMaxStaleness}, refused: true},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			l := ratelimit.New(store, bm.cfg, apitest.NewClock(t0).Now)
			project := uuid.NewString()
			require.NoError(b, l.Admit(ctx, project))
			if bm.refused {
				require.NoError(b, l.Record(ctx, project, 1, 0))
			}
			check := func(err error) {
				if (err != nil) != bm.refused {
					b.Fatalf("admit: %v", err)
				}
			}
			counter.Reset()
			b.ReportAllocs()
			b.ResetTimer()
			n := 0
			if bm.parallel {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						check(l.Admit(ctx, project))
					}
				})
				n = b.N
			} else {
				for b.Loop() {
					check(l.Admit(ctx, project))
					n++
				}
			}
			b.ReportMetric(float64(counter.Total())/float64(n), "requests/op")
		})
	}
}

// TestLimiterDaySpend: the spend of the day asked for (another day's is not counted), read
// from the store with one BatchGetItem; nothing read and nothing counted without a cap.
func TestLimiterDaySpend(t *testing.T) {
	store, counter := newStore(t)
	ctx := context.Background()
	c := apitest.NewClock(t0)
	ls := instances(2, store, ratelimit.Config{TokensPerMinute: 1000, DailyUSD: 5}, c)
	project := uuid.NewString()
	require.NoError(t, ls[0].Record(ctx, project, 100, 0.5))
	require.NoError(t, ls[1].Record(ctx, project, 20, 0.25))

	counter.Reset()
	usd, counted, err := ls[0].DaySpend(ctx, project, t0.Add(5*time.Hour))
	require.NoError(t, err)
	assert.True(t, counted)
	assert.InDelta(t, 0.75, usd, 1e-9)
	assert.Equal(t, map[string]int{"BatchGetItem": 1}, counter.Counts())

	usd, counted, err = ls[0].DaySpend(ctx, project, t0.AddDate(0, 0, 1))
	require.NoError(t, err)
	assert.True(t, counted)
	assert.Zero(t, usd, "the next day counts from 0")

	counter.Reset()
	_, counted, err = ratelimit.New(store, ratelimit.Config{RequestsPerMinute: 10}, c.Now).DaySpend(ctx, project, t0)
	require.NoError(t, err)
	assert.False(t, counted, "no cap: no spend counted")
	assert.Empty(t, counter.Counts())

	_, _, err = ls[0].DaySpend(ctx, "", t0)
	assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
}
