package ddb

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/monitor"
)

// TestEventsOfMonitorChanges: a monitor's creation, a change of its definition and its
// changes between no_data and ok raise nothing; entering alerting raises monitor.alerted, a
// reminder another (Reminder set), leaving alerting monitor.resolved; a write refused by its
// condition raises nothing; reading the stream again raises the same ids.
func TestEventsOfMonitorChanges(t *testing.T) {
	client, _, name := ddbtest.NewStreamTable(t)
	store := NewMonitorStore(NewTable(client, name))
	ctx := context.Background()
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	m := monitor.Monitor{ID: "mon_1", ProjectID: "p1", Name: "errors", Metric: api.MonitorErrorRate, Window: 5 * time.Minute,
		Comparison: api.MonitorGT, Threshold: 0.2, ResolveThreshold: 0.1, MinSamples: 1, Reminder: time.Hour, Notify: []string{"wh_x"},
		State: api.MonitorNoData, StateSince: t0, CreatedAt: t0, UpdatedAt: t0}
	require.NoError(t, store.CreateMonitor(ctx, m))
	m.Name = "errors!"
	require.NoError(t, store.UpdateDefinition(ctx, m))
	step := func(value float64, at time.Time) {
		t.Helper()
		next, ok := monitor.Advance(m, &value, 10, at)
		require.True(t, ok)
		done, err := store.RecordState(ctx, m, next)
		require.NoError(t, err)
		require.True(t, done)
		stale := m
		m = next
		done, err = store.RecordState(ctx, stale, next) // a run that read the old state
		require.NoError(t, err)
		require.False(t, done)
	}
	step(0, t0.Add(time.Minute))                                // no_data > ok: nothing
	step(0.5, t0.Add(2*time.Minute))                            // ok > alerting
	step(0.5, t0.Add(62*time.Minute))                           // a reminder
	step(0.05, t0.Add(63*time.Minute))                          // alerting > ok
	require.NoError(t, store.DeleteMonitor(ctx, "p1", "mon_1")) // nothing

	records := streamSoFar(t, client, name)
	events, err := EventsOf(records)
	require.NoError(t, err)
	require.Len(t, events, 3)
	var bodies []api.MonitorEvent
	for _, ev := range events {
		var b api.MonitorEvent
		require.NoError(t, json.Unmarshal(ev.Data, &b))
		bodies = append(bodies, b)
		assert.Equal(t, "p1", ev.ProjectID)
		assert.Equal(t, []string{"wh_x"}, b.Notify)
		assert.Equal(t, "errors!", b.Name, "the definition as changed")
	}
	assert.Equal(t, []string{api.EventMonitorAlerted, api.EventMonitorAlerted, api.EventMonitorResolved}, []string{events[0].Type, events[1].Type, events[2].Type})
	assert.False(t, bodies[0].Reminder)
	assert.True(t, bodies[1].Reminder)
	assert.Equal(t, api.MonitorOK, bodies[2].State)
	assert.Equal(t, api.MonitorAlerting, bodies[2].From)
	assert.Equal(t, t0.Add(2*time.Minute), events[0].Time)
	assert.Equal(t, t0.Add(62*time.Minute), events[1].Time)
	assert.NotEqual(t, events[0].ID, events[1].ID)

	again, err := EventsOf(records)
	require.NoError(t, err)
	assert.Equal(t, events, again, "the same events, with the same ids")
}
