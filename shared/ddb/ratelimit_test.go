package ddb_test

import (
	"context"
	"math"
	"strconv"
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
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/ratelimit"
)

var _ ratelimit.Store = (*ddb.RateLimitStore)(nil)

// rateT0 is inside the minute 12:34 and the day 2026-03-01, UTC.
var rateT0 = time.Date(2026, 3, 1, 12, 34, 56, 0, time.UTC)

type rateFixture struct {
	store   *ddb.RateLimitStore
	client  *dynamodb.Client
	counter *ddbtest.Counter
	name    string
}

func newRateFixture(t *testing.T) rateFixture {
	t.Helper()
	client, counter, name := ddbtest.NewTable(t)
	return rateFixture{store: ddb.NewRateLimitStore(ddb.NewTable(client, name)), client: client, counter: counter, name: name}
}

// rawRateItem reads a counter item as stored.
func (f rateFixture) rawRateItem(t *testing.T, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	res, err := f.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: &f.name, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			infra.AttrPK: &types.AttributeValueMemberS{Value: pk},
			infra.AttrSK: &types.AttributeValueMemberS{Value: sk},
		},
	})
	require.NoError(t, err)
	require.NotNil(t, res.Item, "item %s / %s", pk, sk)
	return res.Item
}

func rateNum(t *testing.T, item map[string]types.AttributeValue, name string) int64 {
	t.Helper()
	n, ok := item[name].(*types.AttributeValueMemberN)
	require.True(t, ok, "attribute %q is a number: %#v", name, item[name])
	v, err := strconv.ParseInt(n.Value, 10, 64)
	require.NoError(t, err)
	return v
}

func TestRateLimitStoreTakeRequest(t *testing.T) {
	f := newRateFixture(t)
	ctx := context.Background()
	project := uuid.NewString()

	for want := 1; want <= 3; want++ {
		n, taken, err := f.store.TakeRequest(ctx, project, rateT0, 2, 3)
		require.NoError(t, err)
		assert.True(t, taken, "request %d", want)
		assert.Equal(t, want, n)
	}
	n, taken, err := f.store.TakeRequest(ctx, project, rateT0, 2, 3)
	require.NoError(t, err)
	assert.False(t, taken, "the fourth request of a shard with quota 3")
	assert.Equal(t, 3, n)

	item := f.rawRateItem(t, "P#"+project+"#RL#2", "M#202603011234")
	assert.Equal(t, int64(3), rateNum(t, item, "n"), "a refused request is not counted")
	assert.Equal(t, time.Date(2026, 3, 1, 13, 35, 0, 0, time.UTC).Unix(), rateNum(t, item, infra.AttrTTL),
		"minute items expire an hour after their minute")

	others := []struct {
		name    string
		project string
		at      time.Time
		shard   int
	}{
		{"another shard", project, rateT0, 3},
		{"the next minute", project, rateT0.Add(time.Minute), 2},
		{"another project", uuid.NewString(), rateT0, 2},
	}
	for _, o := range others {
		t.Run(o.name, func(t *testing.T) {
			n, taken, err := f.store.TakeRequest(ctx, o.project, o.at, o.shard, 3)
			require.NoError(t, err)
			assert.True(t, taken)
			assert.Equal(t, 1, n)
		})
	}
}

// TestRateLimitStoreTakeRequestConcurrent: the quota holds under concurrent writers.
func TestRateLimitStoreTakeRequestConcurrent(t *testing.T) {
	f := newRateFixture(t)
	project := uuid.NewString()
	var taken atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			_, ok, err := f.store.TakeRequest(context.Background(), project, rateT0, 0, 20)
			assert.NoError(t, err)
			if ok {
				taken.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(20), taken.Load())
	assert.Equal(t, int64(20), rateNum(t, f.rawRateItem(t, "P#"+project+"#RL#0", "M#202603011234"), "n"))
}

func TestRateLimitStoreUsage(t *testing.T) {
	f := newRateFixture(t)
	ctx := context.Background()
	project := uuid.NewString()
	for shard := range 8 {
		require.NoError(t, f.store.AddUsage(ctx, project, rateT0, shard, int64(10*(shard+1)), int64(shard+1)))
	}
	require.NoError(t, f.store.AddUsage(ctx, project, rateT0.Add(time.Minute), 0, 1000, 500))
	require.NoError(t, f.store.AddUsage(ctx, project, rateT0.AddDate(0, 0, 1), 0, 7, 7))
	require.NoError(t, f.store.AddUsage(ctx, uuid.NewString(), rateT0, 0, 99, 99))

	tests := []struct {
		name                     string
		at                       time.Time
		tokenShards, spendShards int
		wantTokens, wantPicoUSD  int64
	}{
		// The day's spend includes the 500 picodollars of 12:35.
		{"every shard", rateT0, 8, 8, 360, 536},
		{"some shards", rateT0, 2, 3, 30, 506},
		{"tokens only", rateT0, 8, 0, 360, 0},
		{"spend only", rateT0, 0, 8, 0, 536},
		{"the next minute: its tokens, the same day's spend", rateT0.Add(time.Minute), 8, 8, 1000, 536},
		{"the next day", rateT0.AddDate(0, 0, 1), 8, 8, 7, 7},
		{"an empty minute and day", rateT0.AddDate(0, 0, 2), 8, 8, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tokens, picoUSD, err := f.store.Usage(ctx, project, tt.at, tt.tokenShards, tt.spendShards)
			require.NoError(t, err)
			assert.Equal(t, tt.wantTokens, tokens)
			assert.Equal(t, tt.wantPicoUSD, picoUSD)
		})
	}

	day := f.rawRateItem(t, "P#"+project+"#RL#0", "D#20260301")
	assert.Equal(t, time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC).Unix(), rateNum(t, day, infra.AttrTTL),
		"day items expire two days after their day")
	minute := f.rawRateItem(t, "P#"+project+"#RL#0", "M#202603011234")
	assert.Equal(t, time.Date(2026, 3, 1, 13, 35, 0, 0, time.UTC).Unix(), rateNum(t, minute, infra.AttrTTL))
}

func TestRateLimitStoreUsageSaturates(t *testing.T) {
	f := newRateFixture(t)
	ctx := context.Background()
	project := uuid.NewString()
	for shard := range 3 {
		require.NoError(t, f.store.AddUsage(ctx, project, rateT0, shard, math.MaxInt64/2, math.MaxInt64/2))
	}
	tokens, picoUSD, err := f.store.Usage(ctx, project, rateT0, 3, 3)
	require.NoError(t, err)
	assert.Equal(t, int64(math.MaxInt64), tokens)
	assert.Equal(t, int64(math.MaxInt64), picoUSD)
}

func TestRateLimitStoreInvalid(t *testing.T) {
	f := newRateFixture(t)
	ctx := context.Background()
	tests := []struct {
		name string
		call func() error
	}{
		{"negative tokens", func() error { return f.store.AddUsage(ctx, "p", rateT0, 0, -1, 0) }},
		{"negative spend", func() error { return f.store.AddUsage(ctx, "p", rateT0, 0, 0, -1) }},
		{"negative shard", func() error { return f.store.AddUsage(ctx, "p", rateT0, -1, 1, 1) }},
		{"shard out of range", func() error { _, _, err := f.store.TakeRequest(ctx, "p", rateT0, 50, 1); return err }},
		{"too many shards to sum", func() error { _, _, err := f.store.Usage(ctx, "p", rateT0, 51, 0); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.counter.Reset()
			assert.Equal(t, errs.CodeInvalid, errs.CodeOf(tt.call()))
			assert.Zero(t, f.counter.Total(), "nothing is sent")
		})
	}
}

func TestRateLimitStoreRequestsPerOperation(t *testing.T) {
	f := newRateFixture(t)
	ctx := context.Background()
	project := uuid.NewString()
	_, _, err := f.store.TakeRequest(ctx, project, rateT0, 1, 1)
	require.NoError(t, err)

	tests := []struct {
		name string
		call func() error
		want map[string]int
	}{
		{"take a request", func() error { _, _, err := f.store.TakeRequest(ctx, project, rateT0, 0, 5); return err },
			map[string]int{"UpdateItem": 1}},
		{"take a request of a full shard", func() error { _, _, err := f.store.TakeRequest(ctx, project, rateT0, 1, 1); return err },
			map[string]int{"UpdateItem": 1}},
		{"take a request of a shard without quota", func() error { _, _, err := f.store.TakeRequest(ctx, project, rateT0, 0, 0); return err },
			map[string]int{}},
		{"add tokens and spend", func() error { return f.store.AddUsage(ctx, project, rateT0, 0, 10, 10) },
			map[string]int{"UpdateItem": 2}},
		{"add tokens", func() error { return f.store.AddUsage(ctx, project, rateT0, 0, 10, 0) },
			map[string]int{"UpdateItem": 1}},
		{"add nothing", func() error { return f.store.AddUsage(ctx, project, rateT0, 0, 0, 0) },
			map[string]int{}},
		{"sum tokens and spend of 8 shards", func() error { _, _, err := f.store.Usage(ctx, project, rateT0, 8, 8); return err },
			map[string]int{"BatchGetItem": 1}},
		{"sum nothing", func() error { _, _, err := f.store.Usage(ctx, project, rateT0, 0, 0); return err },
			map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.counter.Reset()
			require.NoError(t, tt.call())
			assert.Equal(t, tt.want, f.counter.Counts())
		})
	}
}
