package ddb

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

// TestDayRegistryWritesADayOnce: the traces of a stream batch note their day at once, and the
// day is written once; a write that failed is written again by the next note, and the day
// is stored either way.
func TestDayRegistryWritesADayOnce(t *testing.T) {
	ctx := context.Background()
	client, counter, table := ddbtest.NewTable(t)
	var failNext atomic.Bool
	api := &crashingAPI{API: client, fail: func() crash {
		if failNext.CompareAndSwap(true, false) {
			return crashBefore
		}
		return 0
	}}
	r := &dayRegistry{t: NewTable(api, table)}
	projectID, day := uuid.NewString(), time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			assert.NoError(t, r.note(ctx, projectID, trace.IndexTraces, day.Add(time.Duration(i)*time.Minute)))
		})
	}
	wg.Wait()
	assert.Equal(t, 1, counter.Counts()["UpdateItem"], "one write for 16 notes of a day")

	counter.Reset()
	failNext.Store(true)
	next := day.AddDate(0, 0, 1)
	require.ErrorIs(t, r.note(ctx, projectID, trace.IndexTraces, next), errCrash)
	require.NoError(t, r.note(ctx, projectID, trace.IndexTraces, next))
	require.NoError(t, r.note(ctx, projectID, trace.IndexTraces, next))
	assert.Equal(t, 1, counter.Counts()["UpdateItem"], "the failed note's day written by the next, once")

	days, err := r.days(ctx, projectID, trace.IndexTraces, day, next)
	require.NoError(t, err)
	assert.Equal(t, []time.Time{next.Truncate(24 * time.Hour), day.Truncate(24 * time.Hour)}, days)
}
