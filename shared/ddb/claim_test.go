package ddb_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
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
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/judge"
)

// claimT0 is the clock of the claim tests: every call gets its now explicitly.
var claimT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const claimLease = 5 * time.Minute

type claimFixture struct {
	store   *ddb.ClaimStore
	table   *ddb.Table
	client  *dynamodb.Client
	counter *ddbtest.Counter
	name    string
}

func newClaimFixture(t *testing.T) claimFixture {
	t.Helper()
	client, counter, name := ddbtest.NewTable(t)
	table := ddb.NewTable(client, name)
	return claimFixture{store: ddb.NewClaimStore(table), table: table, client: client, counter: counter, name: name}
}

// claimKey names one (project, judge, span); each test case gets fresh ids.
type claimKey struct{ project, judge, span string }

func newClaimKey() claimKey {
	return claimKey{project: uuid.NewString(), judge: uuid.NewString(), span: uuid.NewString()}
}

func (f claimFixture) claim(t *testing.T, k claimKey, hash string, now time.Time) judge.Claim {
	t.Helper()
	c, err := f.store.Claim(context.Background(), k.project, k.judge, k.span, hash, claimLease, now)
	require.NoError(t, err)
	return c
}

func (f claimFixture) acquire(t *testing.T, k claimKey, hash string, now time.Time) judge.Claim {
	t.Helper()
	c := f.claim(t, k, hash, now)
	require.Equal(t, judge.ClaimAcquired, c.State, "precondition: claim of %s at %s", hash, now)
	return c
}

// rawClaim reads the stored claim item.
func (f claimFixture) rawClaim(t *testing.T, k claimKey) map[string]types.AttributeValue {
	t.Helper()
	res, err := f.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: &f.name, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			infra.AttrPK: &types.AttributeValueMemberS{Value: "P#" + k.project + "#S#" + k.span},
			infra.AttrSK: &types.AttributeValueMemberS{Value: "CLAIM#" + k.judge},
		},
	})
	require.NoError(t, err)
	require.NotNil(t, res.Item, "claim item")
	return res.Item
}

func claimNum(t *testing.T, item map[string]types.AttributeValue, name string) int64 {
	t.Helper()
	n, ok := item[name].(*types.AttributeValueMemberN)
	require.True(t, ok, "attribute %q is a number: %#v", name, item[name])
	v, err := strconv.ParseInt(n.Value, 10, 64)
	require.NoError(t, err)
	return v
}

func claimStr(item map[string]types.AttributeValue, name string) string {
	s, _ := item[name].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

func TestClaim(t *testing.T) {
	f := newClaimFixture(t)
	ctx := context.Background()
	tests := []struct {
		name string
		// before runs on k (and may use other ids) before the checked claim.
		before       func(t *testing.T, k claimKey)
		hash         string
		now          time.Time
		want         judge.ClaimState
		wantAttempts int
		wantExpiry   time.Time
	}{
		{name: "first claim acquires",
			before: func(*testing.T, claimKey) {}, hash: "h1", now: claimT0,
			want: judge.ClaimAcquired, wantAttempts: 1, wantExpiry: claimT0.Add(claimLease)},
		{name: "second claim while the lease runs is busy",
			before: func(t *testing.T, k claimKey) { f.acquire(t, k, "h1", claimT0) },
			hash:   "h1", now: claimT0.Add(time.Second),
			want: judge.ClaimBusy, wantAttempts: 1, wantExpiry: claimT0.Add(claimLease)},
		{name: "a lease is held up to its expiry instant",
			before: func(t *testing.T, k claimKey) { f.acquire(t, k, "h1", claimT0) },
			hash:   "h1", now: claimT0.Add(claimLease),
			want: judge.ClaimBusy, wantAttempts: 1, wantExpiry: claimT0.Add(claimLease)},
		{name: "an expired lease is taken over",
			before: func(t *testing.T, k claimKey) { f.acquire(t, k, "h1", claimT0) },
			hash:   "h1", now: claimT0.Add(claimLease + time.Millisecond),
			want: judge.ClaimAcquired, wantAttempts: 2, wantExpiry: claimT0.Add(2*claimLease + time.Millisecond)},
		{name: "after complete the same content is done",
			before: func(t *testing.T, k claimKey) {
				c := f.acquire(t, k, "h1", claimT0)
				require.NoError(t, f.store.Complete(ctx, k.project, k.judge, k.span, c.Token))
			},
			hash: "h1", now: claimT0.Add(time.Hour), want: judge.ClaimDone},
		{name: "a changed content hash acquires although done",
			before: func(t *testing.T, k claimKey) {
				c := f.acquire(t, k, "h1", claimT0)
				require.NoError(t, f.store.Complete(ctx, k.project, k.judge, k.span, c.Token))
			},
			hash: "h2", now: claimT0.Add(time.Second),
			want: judge.ClaimAcquired, wantAttempts: 1, wantExpiry: claimT0.Add(time.Second + claimLease)},
		{name: "a changed content hash acquires although leased",
			before: func(t *testing.T, k claimKey) { f.acquire(t, k, "h1", claimT0) },
			hash:   "h2", now: claimT0.Add(time.Second),
			want: judge.ClaimAcquired, wantAttempts: 2, wantExpiry: claimT0.Add(time.Second + claimLease)},
		{name: "a released claim is acquired at once",
			before: func(t *testing.T, k claimKey) {
				c := f.acquire(t, k, "h1", claimT0)
				require.NoError(t, f.store.Release(ctx, k.project, k.judge, k.span, c.Token))
			},
			hash: "h1", now: claimT0.Add(time.Second),
			want: judge.ClaimAcquired, wantAttempts: 2, wantExpiry: claimT0.Add(time.Second + claimLease)},
		{name: "another project's claim on the same ids is independent",
			before: func(t *testing.T, k claimKey) {
				other := claimKey{project: uuid.NewString(), judge: k.judge, span: k.span}
				c := f.acquire(t, other, "h1", claimT0)
				require.NoError(t, f.store.Complete(ctx, other.project, other.judge, other.span, c.Token))
			},
			hash: "h1", now: claimT0.Add(time.Second),
			want: judge.ClaimAcquired, wantAttempts: 1, wantExpiry: claimT0.Add(time.Second + claimLease)},
		{name: "another judge's claim on the span is independent",
			before: func(t *testing.T, k claimKey) {
				f.acquire(t, claimKey{project: k.project, judge: uuid.NewString(), span: k.span}, "h1", claimT0)
			},
			hash: "h1", now: claimT0.Add(time.Second),
			want: judge.ClaimAcquired, wantAttempts: 1, wantExpiry: claimT0.Add(time.Second + claimLease)},
		{name: "the judge's claim on another span is independent",
			before: func(t *testing.T, k claimKey) {
				f.acquire(t, claimKey{project: k.project, judge: k.judge, span: uuid.NewString()}, "h1", claimT0)
			},
			hash: "h1", now: claimT0.Add(time.Second),
			want: judge.ClaimAcquired, wantAttempts: 1, wantExpiry: claimT0.Add(time.Second + claimLease)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newClaimKey()
			tt.before(t, k)
			got := f.claim(t, k, tt.hash, tt.now)
			assert.Equal(t, tt.want, got.State)
			assert.Equal(t, tt.wantAttempts, got.Attempts, "attempts")
			if tt.want == judge.ClaimAcquired {
				assert.NotEmpty(t, got.Token, "an acquired claim has a token")
			} else {
				assert.Empty(t, got.Token, "only an acquired claim has a token")
			}
			if !tt.wantExpiry.IsZero() {
				assert.True(t, tt.wantExpiry.Equal(got.LeaseExpiry), "lease expiry %s, want %s", got.LeaseExpiry, tt.wantExpiry)
			}
		})
	}
}

func TestClaimConcurrentSameContent(t *testing.T) {
	f := newClaimFixture(t)
	k := newClaimKey()
	const n = 20
	claims := make([]judge.Claim, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := f.store.Claim(context.Background(), k.project, k.judge, k.span, "h1", claimLease, claimT0)
			assert.NoError(t, err)
			claims[i] = c
		})
	}
	wg.Wait()
	counts := map[judge.ClaimState]int{}
	for _, c := range claims {
		counts[c.State]++
	}
	assert.Equal(t, map[judge.ClaimState]int{judge.ClaimAcquired: 1, judge.ClaimBusy: n - 1}, counts,
		"exactly one of %d concurrent claims acquires", n)
}

func TestClaimOwnership(t *testing.T) {
	f := newClaimFixture(t)
	ctx := context.Background()
	k := newClaimKey()
	old := f.acquire(t, k, "h1", claimT0)
	late := claimT0.Add(claimLease + time.Second)
	taken := f.acquire(t, k, "h1", late)
	require.NotEqual(t, old.Token, taken.Token, "a takeover gets its own token")

	tests := []struct {
		name  string
		call  func() error
		wantE error // nil: success
	}{
		{"the old owner's release fails", func() error { return f.store.Release(ctx, k.project, k.judge, k.span, old.Token) }, ddb.ErrClaimLost},
		{"the old owner's complete fails", func() error { return f.store.Complete(ctx, k.project, k.judge, k.span, old.Token) }, ddb.ErrClaimLost},
		{"an empty token owns nothing", func() error { return f.store.Complete(ctx, k.project, k.judge, k.span, "") }, ddb.ErrClaimLost},
		{"a token of another span owns nothing", func() error {
			return f.store.Complete(ctx, k.project, k.judge, uuid.NewString(), taken.Token)
		}, ddb.ErrClaimLost},
		{"a token of another project owns nothing", func() error {
			return f.store.Complete(ctx, uuid.NewString(), k.judge, k.span, taken.Token)
		}, ddb.ErrClaimLost},
		{"the new owner completes", func() error { return f.store.Complete(ctx, k.project, k.judge, k.span, taken.Token) }, nil},
		{"completing again succeeds", func() error { return f.store.Complete(ctx, k.project, k.judge, k.span, taken.Token) }, nil},
		{"a completed claim cannot be released", func() error { return f.store.Release(ctx, k.project, k.judge, k.span, taken.Token) }, ddb.ErrClaimLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if tt.wantE == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.wantE)
			assert.Equal(t, errs.CodeConflict, errs.CodeOf(err))
		})
	}

	got := f.claim(t, k, "h1", late.Add(time.Second))
	assert.Equal(t, judge.ClaimDone, got.State, "the new owner's completion stands")
}

func TestClaimItem(t *testing.T) {
	f := newClaimFixture(t)
	ctx := context.Background()
	k := newClaimKey()
	c := f.acquire(t, k, "h1", claimT0)

	item := f.rawClaim(t, k)
	assert.Equal(t, "h1", claimStr(item, "h"))
	assert.Equal(t, "running", claimStr(item, "st"))
	assert.Equal(t, c.Token, claimStr(item, "tok"))
	assert.Equal(t, claimT0.Add(claimLease).UnixMilli(), claimNum(t, item, "ls"), "lease expiry in epoch ms")
	assert.EqualValues(t, 1, claimNum(t, item, "at"))
	assert.Equal(t, claimT0.Add(ddb.ClaimTTL).Unix(), claimNum(t, item, infra.AttrTTL), "TTL in epoch seconds")
	assert.Equal(t, 30*24*time.Hour, ddb.ClaimTTL)

	require.NoError(t, f.store.Release(ctx, k.project, k.judge, k.span, c.Token))
	item = f.rawClaim(t, k)
	assert.EqualValues(t, 0, claimNum(t, item, "ls"), "a released lease has ended")
	assert.NotContains(t, item, "tok", "a released claim has no owner")
	assert.EqualValues(t, 1, claimNum(t, item, "at"), "the failed attempt stays counted")

	c = f.acquire(t, k, "h1", claimT0.Add(time.Second))
	assert.Equal(t, 2, c.Attempts)
	require.NoError(t, f.store.Complete(ctx, k.project, k.judge, k.span, c.Token))
	item = f.rawClaim(t, k)
	assert.Equal(t, "done", claimStr(item, "st"))
	assert.NotContains(t, item, "at", "a completed claim starts counting again")
	assert.Equal(t, claimT0.Add(time.Second+ddb.ClaimTTL).Unix(), claimNum(t, item, infra.AttrTTL), "TTL of the last claim")
}

// TestClaimInvisibleToSpanReaders: a claim in a span's partition is neither an evaluation nor
// feedback nor evidence that the span exists.
func TestClaimInvisibleToSpanReaders(t *testing.T) {
	f := newClaimFixture(t)
	ctx := context.Background()
	k := newClaimKey()
	c := f.acquire(t, k, "h1", claimT0)
	require.NoError(t, f.store.Complete(ctx, k.project, k.judge, k.span, c.Token))

	_, err := ddb.NewJudgeStore(f.table).SpanEvaluations(ctx, k.project, k.span)
	assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "evaluations of a span with only a claim: %v", err)
	_, err = ddb.NewFeedbackStore(f.table).EntityFeedback(ctx, k.project, feedback.EntitySpan, k.span)
	assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "feedback of a span with only a claim: %v", err)
}

func TestClaimInvalid(t *testing.T) {
	f := newClaimFixture(t)
	k := newClaimKey()
	tests := []struct {
		name  string
		hash  string
		lease time.Duration
	}{
		{"empty content hash", "", claimLease},
		{"zero lease", "h1", 0},
		{"negative lease", "h1", -time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.counter.Reset()
			_, err := f.store.Claim(context.Background(), k.project, k.judge, k.span, tt.hash, tt.lease, claimT0)
			assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
			assert.Zero(t, f.counter.Total(), "nothing is sent")
		})
	}
}

func TestClaimRequestsPerOperation(t *testing.T) {
	f := newClaimFixture(t)
	ctx := context.Background()
	k := newClaimKey()
	var token string
	tests := []struct {
		name string
		call func() error
		want map[string]int
	}{
		{"claim acquired", func() error {
			c, err := f.store.Claim(ctx, k.project, k.judge, k.span, "h1", claimLease, claimT0)
			token = c.Token
			return claimIs(c, err, judge.ClaimAcquired)
		}, map[string]int{"UpdateItem": 1}},
		{"claim busy", func() error {
			c, err := f.store.Claim(ctx, k.project, k.judge, k.span, "h1", claimLease, claimT0)
			return claimIs(c, err, judge.ClaimBusy)
		}, map[string]int{"UpdateItem": 1}},
		{"release", func() error { return f.store.Release(ctx, k.project, k.judge, k.span, token) },
			map[string]int{"UpdateItem": 1}},
		{"claim after release", func() error {
			c, err := f.store.Claim(ctx, k.project, k.judge, k.span, "h1", claimLease, claimT0)
			token = c.Token
			return claimIs(c, err, judge.ClaimAcquired)
		}, map[string]int{"UpdateItem": 1}},
		{"complete", func() error { return f.store.Complete(ctx, k.project, k.judge, k.span, token) },
			map[string]int{"UpdateItem": 1}},
		{"claim done", func() error {
			c, err := f.store.Claim(ctx, k.project, k.judge, k.span, "h1", claimLease, claimT0)
			return claimIs(c, err, judge.ClaimDone)
		}, map[string]int{"UpdateItem": 1}},
		{"release by another token", func() error {
			if err := f.store.Release(ctx, k.project, k.judge, k.span, "not-the-owner"); !errors.Is(err, ddb.ErrClaimLost) {
				return errors.Join(errors.New("want ErrClaimLost"), err)
			}
			return nil
		}, map[string]int{"UpdateItem": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.counter.Reset()
			require.NoError(t, tt.call())
			assert.Equal(t, tt.want, f.counter.Counts())
		})
	}
}

func claimIs(c judge.Claim, err error, want judge.ClaimState) error {
	if err != nil {
		return err
	}
	if c.State != want {
		return errors.New("claim state " + string(c.State) + ", want " + string(want))
	}
	return nil
}
