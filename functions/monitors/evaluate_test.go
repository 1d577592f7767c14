package monitors_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// sendTraces posts n one-span traces starting at at, failed of them with status error.
func sendTraces(t *testing.T, a *apitest.API, tenant apitest.Tenant, at time.Time, n, failed int) {
	t.Helper()
	var spans []any
	for i := range n {
		s := apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", "", "", "in", "out", at)
		delete(s["attributes"].(map[string]any), "zeroeval")
		if i < failed {
			s["status"] = "error"
		}
		spans = append(spans, s)
	}
	a.MustDo(t, "POST", "/spans", tenant.Key, spans)
}

// TestEvaluateFromRollups: the evaluator reads each monitor's window from the rollups, moves
// it on a change (one conditional write), writes nothing when nothing changed, and its reads
// are one index Query plus one Query per monitor, whatever the number of spans.
func TestEvaluateFromRollups(t *testing.T) {
	c := apitest.NewClock(time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute))
	a := apitest.New(t, apitest.Options{Clock: c.Now})
	ctx := context.Background()
	create := func(tenant apitest.Tenant, body map[string]any) api.Monitor {
		var m api.Monitor
		a.MustDo(t, "POST", monitorsPath(tenant), tenant.Key, body).Decode(t, &m)
		return m
	}
	errs := create(a.A, map[string]any{"name": "errors", "metric": "error_rate", "window": "5m", "comparison": "gt", "threshold": 0.3, "min_samples": 5})
	calls := create(a.A, map[string]any{"name": "traffic", "metric": "llm_calls", "window": "1h", "comparison": "lt", "threshold": 1, "min_samples": 0})
	create(a.B, map[string]any{"name": "B's errors", "metric": "error_rate", "window": "5m", "comparison": "gt", "threshold": 0.3})

	sendTraces(t, a, a.A, c.Now(), 200, 100)
	a.DrainStream(t)
	ev := a.Env.MonitorEvaluator()
	a.DDB.Reset()
	res, err := ev.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, res.Monitors)
	assert.Equal(t, 2, res.Changes, "errors alerts, traffic is ok; B's has no data still: no change")
	byOp := a.DDB.UnitsByOperation()
	t.Logf("one run of 3 monitors with 2 changes: %d requests (%v units)", a.DDB.Total(), byOp)
	assert.Equal(t, 1+3+2, a.DDB.Total(), "1 index Query, 1 rollup Query per monitor, 1 UpdateItem per change")

	var got api.Monitor
	a.MustDo(t, "GET", monitorsPath(a.A)+"/"+errs.ID, a.A.Key, nil).Decode(t, &got)
	assert.Equal(t, api.MonitorAlerting, got.State)
	require.NotNil(t, got.Value)
	assert.InDelta(t, 0.5, *got.Value, 1e-9)
	assert.EqualValues(t, 200, got.Samples)
	require.Len(t, got.History, 1)
	assert.Equal(t, api.MonitorStateChange{From: api.MonitorNoData, To: api.MonitorAlerting, At: c.Now(), Value: got.Value, Samples: 200}, got.History[0])
	a.MustDo(t, "GET", monitorsPath(a.A)+"/"+calls.ID, a.A.Key, nil).Decode(t, &got)
	assert.Equal(t, api.MonitorOK, got.State)

	// Nothing changed: reads only, the same whatever the traffic.
	a.DDB.Reset()
	res, err = ev.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, res.Changes+res.Reminders)
	assert.Equal(t, 1+3, a.DDB.Total(), "a run that changes nothing writes nothing")

	// Six minutes on, the errors are out of the window: no data (too few samples), a
	// change; still no write for the others.
	c.Add(6 * time.Minute)
	sendTraces(t, a, a.A, c.Now(), 2, 0)
	a.DrainStream(t)
	res, err = ev.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Changes)
	a.MustDo(t, "GET", monitorsPath(a.A)+"/"+errs.ID, a.A.Key, nil).Decode(t, &got)
	assert.Equal(t, api.MonitorNoData, got.State)
	require.Len(t, got.History, 2)
}

// TestOverlappingRunsRecordOnce: runs that overlap record each change once: the second
// write, conditioned on the counter the first moved, is refused.
func TestOverlappingRunsRecordOnce(t *testing.T) {
	c := apitest.NewClock(time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute))
	a := apitest.New(t, apitest.Options{Clock: c.Now})
	ctx := context.Background()
	for range 5 {
		a.MustDo(t, "POST", monitorsPath(a.A), a.A.Key, map[string]any{"name": "errors", "metric": "error_rate", "window": "5m", "comparison": "gt", "threshold": 0.3})
	}
	sendTraces(t, a, a.A, c.Now(), 10, 10)
	a.DrainStream(t)

	stale, err := a.Env.MonitorStore().AllMonitors(ctx)
	require.NoError(t, err)
	var wg sync.WaitGroup
	results := make([]int, 4)
	for i := range results {
		wg.Go(func() {
			res, err := a.Env.MonitorEvaluator().Run(ctx)
			assert.NoError(t, err)
			results[i] = res.Changes
		})
	}
	wg.Wait()
	assert.Equal(t, 5, results[0]+results[1]+results[2]+results[3], "each monitor's change recorded once")
	for _, m := range stale {
		next := m
		next.Seq++
		ok, err := a.Env.MonitorStore().RecordState(ctx, m, next)
		require.NoError(t, err)
		assert.False(t, ok, "a write from the state read before the change is refused")
	}
	var list api.MonitorList
	a.MustDo(t, "GET", monitorsPath(a.A), a.A.Key, nil).Decode(t, &list)
	for _, m := range list.Monitors {
		assert.Equal(t, api.MonitorAlerting, m.State)
		assert.Len(t, m.History, 1)
	}
}
