package monitors_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ratelimit"
)

// picos are dollars in the picodollars the gateway's daily spend is counted in.
func picos(usd float64) int64 { return int64(usd * 1e12) }

// TestGatewaySpendMonitor: a gateway_spend monitor reads the spend the gateway's daily cap
// counts (added here through the rate-limit store, on two shards): within its threshold it is
// ok, past it alerting, with one monitor.alerted; the next UTC day counts from 0 and resolves
// it. Each evaluation of it reads one BatchGetItem of the day's spend shards; another
// project's spend is never its value.
func TestGatewaySpendMonitor(t *testing.T) {
	c := apitest.NewClock(time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute))
	a := apitest.New(t, apitest.Options{Clock: c.Now, Config: func(cfg *config.Config) {
		cfg.GatewayLimits = ratelimit.Config{DailyUSD: 50}
	}})
	ctx := context.Background()
	var m api.Monitor
	a.MustDo(t, "POST", monitorsPath(a.A), a.A.Key, map[string]any{"name": "spend", "metric": "gateway_spend", "window": "1d",
		"comparison": "gt", "threshold": 2, "resolve_threshold": 1}).Decode(t, &m)
	assert.Zero(t, m.MinSamples, "min_samples does not apply to gateway_spend")
	var bs api.Monitor
	a.MustDo(t, "POST", monitorsPath(a.B), a.B.Key, map[string]any{"name": "B's spend", "metric": "gateway_spend", "window": "1d",
		"comparison": "gt", "threshold": 2}).Decode(t, &bs)

	usage := ddb.NewRateLimitStore(a.Table)
	require.NoError(t, usage.AddUsage(ctx, a.A.ProjectID, c.Now(), 3, 0, picos(1.5)))
	ev := a.Env.MonitorEvaluator()
	a.DDB.Reset()
	res, err := ev.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Changes, "no_data to ok, both: 0 spend (B's) is a value")
	t.Logf("one run of 2 gateway_spend monitors with 2 changes: %v", a.DDB.Counts())
	assert.Equal(t, map[string]int{"Query": 1, "BatchGetItem": 2, "UpdateItem": 2}, a.DDB.Counts(),
		"1 index Query, 1 BatchGetItem of the day's spend per monitor, 1 UpdateItem per change")
	var got api.Monitor
	a.MustDo(t, "GET", monitorsPath(a.A)+"/"+m.ID, a.A.Key, nil).Decode(t, &got)
	assert.Equal(t, api.MonitorOK, got.State)
	require.NotNil(t, got.Value)
	assert.InDelta(t, 1.5, *got.Value, 1e-9)
	a.MustDo(t, "GET", monitorsPath(a.B)+"/"+bs.ID, a.B.Key, nil).Decode(t, &got)
	assert.Equal(t, api.MonitorOK, got.State)
	require.NotNil(t, got.Value)
	assert.Zero(t, *got.Value, "A's spend is not B's")

	// Past the threshold: alerting, one event.
	require.NoError(t, usage.AddUsage(ctx, a.A.ProjectID, c.Now(), 5, 0, picos(1)))
	c.Add(time.Minute)
	a.DDB.Reset()
	res, err = ev.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Changes)
	assert.Equal(t, map[string]int{"Query": 1, "BatchGetItem": 2, "UpdateItem": 1}, a.DDB.Counts())
	a.MustDo(t, "GET", monitorsPath(a.A)+"/"+m.ID, a.A.Key, nil).Decode(t, &got)
	assert.Equal(t, api.MonitorAlerting, got.State)
	require.NotNil(t, got.Value)
	assert.InDelta(t, 2.5, *got.Value, 1e-9)

	a.DDB.Reset()
	res, err = ev.Run(ctx)
	require.NoError(t, err)
	assert.Zero(t, res.Changes+res.Reminders)
	assert.Equal(t, map[string]int{"Query": 1, "BatchGetItem": 2}, a.DDB.Counts(), "nothing changed: reads only")

	evs, bodies := monitorEvents(t, a, a.A)
	require.Len(t, evs, 1, "one alert")
	assert.Equal(t, api.EventMonitorAlerted, evs[0].Type)
	assert.Equal(t, api.MonitorGatewaySpend, bodies[0].Metric)
	assert.Equal(t, "1d", bodies[0].Window)
	require.NotNil(t, bodies[0].Value)
	assert.InDelta(t, 2.5, *bodies[0].Value, 1e-9)
	bEvents, _ := monitorEvents(t, a, a.B)
	assert.Empty(t, bEvents)

	// The next UTC day counts from 0: resolved.
	c.Add(24 * time.Hour)
	res, err = ev.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Changes)
	evs, _ = monitorEvents(t, a, a.A)
	require.Len(t, evs, 2)
	assert.Equal(t, api.EventMonitorResolved, evs[1].Type)
}

// TestGatewaySpendWithoutCap: without a daily cap the gateway counts no spend, so a
// gateway_spend monitor is no_data, and its evaluation reads nothing of it.
func TestGatewaySpendWithoutCap(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	var m api.Monitor
	a.MustDo(t, "POST", monitorsPath(a.A), a.A.Key, map[string]any{"name": "spend", "metric": "gateway_spend", "window": "1d",
		"comparison": "lt", "threshold": 1}).Decode(t, &m)
	assert.Equal(t, "1d", m.Window)
	res := a.Do(t, "PATCH", monitorsPath(a.A)+"/"+m.ID, a.A.Key, map[string]any{"window": "5m"})
	require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
	assert.Contains(t, string(res.Body), "its window is 1d")
	a.DDB.Reset()
	run, err := a.Env.MonitorEvaluator().Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, run.Monitors)
	assert.Zero(t, run.Changes, "still no_data")
	assert.Equal(t, map[string]int{"Query": 1}, a.DDB.Counts(), "the monitors' Query only")
	var got api.Monitor
	a.MustDo(t, "GET", monitorsPath(a.A)+"/"+m.ID, a.A.Key, nil).Decode(t, &got)
	assert.Equal(t, api.MonitorNoData, got.State)
}
