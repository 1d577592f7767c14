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

// TestDeletedMonitorEventAfterItsAlert: deleting an alerting monitor raises monitor.resolved
// (state deleted, from alerting), dated after the alert it ends even when the
// stream's time of the deletion is rounded down before it (DynamoDB Local rounds to the
// minute, AWS to the second); deleting it again or reading the stream again raises the same id.
func TestDeletedMonitorEventAfterItsAlert(t *testing.T) {
	client, _, name := ddbtest.NewStreamTable(t)
	store := NewMonitorStore(NewTable(client, name))
	ctx := context.Background()
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	m := monitor.Monitor{ID: "mon_1", ProjectID: "p1", Name: "errors", Metric: api.MonitorErrorRate, Window: 5 * time.Minute,
		Comparison: api.MonitorGT, Threshold: 0.2, ResolveThreshold: 0.1, MinSamples: 1, Reminder: time.Hour,
		State: api.MonitorNoData, StateSince: t0, CreatedAt: t0, UpdatedAt: t0}
	require.NoError(t, store.CreateMonitor(ctx, m))
	value, alertAt := 0.5, t0.Add(2*time.Minute+30*time.Second)
	next, ok := monitor.Advance(m, &value, 10, alertAt)
	require.True(t, ok)
	done, err := store.RecordState(ctx, m, next)
	require.NoError(t, err)
	require.True(t, done)
	require.NoError(t, store.DeleteMonitor(ctx, "p1", "mon_1"))

	records := streamSoFar(t, client, name)
	require.Equal(t, "REMOVE", records[len(records)-1].EventName)
	records[len(records)-1].At = alertAt.Truncate(time.Minute) // the deletion, as a rounding stream dates it
	events, err := EventsOf(records)
	require.NoError(t, err)
	require.Len(t, events, 2)
	assert.Equal(t, api.EventMonitorAlerted, events[0].Type)
	assert.Equal(t, api.EventMonitorResolved, events[1].Type)
	assert.Equal(t, alertAt, events[0].Time)
	assert.True(t, events[1].Time.After(events[0].Time), "the end (%s) is dated after the alert (%s)", events[1].Time, events[0].Time)
	var b api.MonitorEvent
	require.NoError(t, json.Unmarshal(events[1].Data, &b))
	assert.Equal(t, api.MonitorStateDeleted, b.State)
	assert.Equal(t, api.MonitorAlerting, b.From)

	later := alertAt.Add(3 * time.Minute)
	records[len(records)-1].At = later // a stream that dates it after: its time
	again, err := EventsOf(records)
	require.NoError(t, err)
	assert.Equal(t, later, again[1].Time)
	assert.Equal(t, events[1].ID, again[1].ID, "one id, whatever time the record says")
}
