package monitors_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/monitor"
)

// monitorEvents reads tenant's monitor events from the event log, oldest first, with their
// bodies.
func monitorEvents(t *testing.T, a *apitest.API, tenant apitest.Tenant) ([]api.Event, []api.MonitorEvent) {
	t.Helper()
	a.DrainStream(t)
	var evs []api.Event
	res := a.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/events?types="+api.EventMonitorAlerted+","+api.EventMonitorResolved+"&limit=200", tenant.Key, nil)
	require.NoError(t, json.Unmarshal(res.Body, &evs))
	bodies := make([]api.MonitorEvent, len(evs))
	for i := range evs {
		require.NoError(t, json.Unmarshal(evs[len(evs)-1-i].Data, &bodies[i]))
	}
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	return evs, bodies
}

// TestReminderThroughEvaluation: a monitor still alerting is notified again once its reminder
// interval (5m) has passed since the last notification, once, and not at the evaluations in
// between: evaluated every minute for 11 minutes with the clock injected, it raises
// monitor.alerted at the change and reminders at 5 and 10 minutes, 3 events in all, each
// logged once however often the stream is read.
func TestReminderThroughEvaluation(t *testing.T) {
	c := apitest.NewClock(time.Now().UTC().Truncate(time.Minute).Add(-15 * time.Minute))
	a := apitest.New(t, apitest.Options{Clock: c.Now})
	ctx := context.Background()
	var m api.Monitor
	a.MustDo(t, "POST", monitorsPath(a.A), a.A.Key, map[string]any{"name": "errors", "metric": "error_rate", "window": "1h",
		"comparison": "gt", "threshold": 0.3, "reminder": "5m"}).Decode(t, &m)
	sendTraces(t, a, a.A, c.Now(), 20, 10)
	a.DrainStream(t)
	ev := a.Env.MonitorEvaluator()

	start := c.Now()
	var reminders []time.Duration
	for minute := range 11 {
		res, err := ev.Run(ctx)
		require.NoError(t, err)
		if minute == 0 {
			assert.Equal(t, 1, res.Changes, "the alert")
		} else {
			assert.Zero(t, res.Changes, "minute %d: still alerting", minute)
		}
		if res.Reminders > 0 {
			reminders = append(reminders, c.Now().Sub(start))
		}
		c.Add(time.Minute)
	}
	assert.Equal(t, []time.Duration{5 * time.Minute, 10 * time.Minute}, reminders, "a reminder every 5 minutes, not every minute")

	evs, bodies := monitorEvents(t, a, a.A)
	a.ReplayEvents(t)
	again, _ := monitorEvents(t, a, a.A)
	assert.Equal(t, evs, again, "reading the stream again logs nothing more")
	require.Len(t, evs, 3)
	for i, want := range []struct {
		at       time.Duration
		reminder bool
	}{{0, false}, {5 * time.Minute, true}, {10 * time.Minute, true}} {
		assert.Equal(t, api.EventMonitorAlerted, evs[i].Type)
		assert.Equal(t, start.Add(want.at), evs[i].Time, "event %d", i)
		assert.Equal(t, want.reminder, bodies[i].Reminder, "event %d", i)
		assert.Equal(t, m.ID, bodies[i].MonitorID)
	}
	var got api.Monitor
	a.MustDo(t, "GET", monitorsPath(a.A)+"/"+m.ID, a.A.Key, nil).Decode(t, &got)
	require.Len(t, got.History, 3, "the change and two reminders")
	assert.True(t, got.History[1].Reminder && got.History[2].Reminder)
}

// TestDeleteWhileAlertingResolves: deleting an alerting monitor raises one monitor.resolved
// (state deleted, from alerting), so that its receivers close the alert no evaluation will
// resolve; deleting one that is ok or has no data raises nothing.
func TestDeleteWhileAlertingResolves(t *testing.T) {
	c := apitest.NewClock(time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute))
	a := apitest.New(t, apitest.Options{Clock: c.Now})
	ctx := context.Background()
	create := func(name string, threshold float64) api.Monitor {
		var m api.Monitor
		a.MustDo(t, "POST", monitorsPath(a.A), a.A.Key, map[string]any{"name": name, "metric": "error_rate", "window": "5m",
			"comparison": "gt", "threshold": threshold, "notify": []string{}}).Decode(t, &m)
		return m
	}
	alerting, ok, noData := create("alerting", 0.3), create("ok", 0.9), create("no data", 0.3)
	a.MustDo(t, "PATCH", monitorsPath(a.A)+"/"+noData.ID, a.A.Key, map[string]any{"min_samples": 1000})
	sendTraces(t, a, a.A, c.Now(), 20, 10)
	a.DrainStream(t)
	res, err := a.Env.MonitorEvaluator().Run(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, res.Changes, "one alerts, one is ok, one has too few samples")

	deletedAt := time.Now()
	for _, m := range []api.Monitor{alerting, ok, noData} {
		a.MustDo(t, "DELETE", monitorsPath(a.A)+"/"+m.ID, a.A.Key, nil)
	}
	evs, bodies := monitorEvents(t, a, a.A)
	a.ReplayEvents(t)
	again, _ := monitorEvents(t, a, a.A)
	assert.Equal(t, evs, again, "reading the stream again logs nothing more")
	require.Len(t, evs, 2, "the alert, and its end at the deletion; nothing for the others")
	assert.Equal(t, api.EventMonitorResolved, evs[1].Type)
	assert.Equal(t, api.MonitorEvent{MonitorID: alerting.ID, Name: "alerting", Metric: "error_rate", Window: "5m", Comparison: "gt",
		Threshold: 0.3, ResolveThreshold: 0.3, State: api.MonitorStateDeleted, From: api.MonitorAlerting, Value: bodies[0].Value,
		Samples: 20}, bodies[1])
	assert.WithinDuration(t, deletedAt, evs[1].Time, time.Minute, "the deletion's time, as the stream reports it")
	assert.NotEqual(t, evs[0].ID, evs[1].ID)
}

// TestPausedIsNotEvaluated: a paused monitor keeps its state and raises nothing (no reminder
// however long it is paused, no change however its metric moves); resumed, it is evaluated
// again at the next run, its overdue reminder sent once.
func TestPausedIsNotEvaluated(t *testing.T) {
	c := apitest.NewClock(time.Now().UTC().Truncate(time.Minute).Add(-15 * time.Minute))
	a := apitest.New(t, apitest.Options{Clock: c.Now})
	ctx := context.Background()
	var m api.Monitor
	a.MustDo(t, "POST", monitorsPath(a.A), a.A.Key, map[string]any{"name": "errors", "metric": "error_rate", "window": "1h",
		"comparison": "gt", "threshold": 0.3, "reminder": "5m"}).Decode(t, &m)
	sendTraces(t, a, a.A, c.Now(), 20, 10)
	a.DrainStream(t)
	ev := a.Env.MonitorEvaluator()
	res, err := ev.Run(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, res.Changes)

	var got api.Monitor
	a.MustDo(t, "PATCH", monitorsPath(a.A)+"/"+m.ID, a.A.Key, map[string]any{"paused": true}).Decode(t, &got)
	assert.True(t, got.Paused)
	assert.Equal(t, api.MonitorAlerting, got.State, "pausing keeps the state")
	for range 10 {
		c.Add(time.Minute)
		a.DDB.Reset()
		res, err := ev.Run(ctx)
		require.NoError(t, err)
		assert.Equal(t, monitor.Result{Paused: 1}, res, "nothing evaluated")
		assert.Equal(t, 1, a.DDB.Total(), "the index Query only: a paused monitor is not read")
	}
	evs, _ := monitorEvents(t, a, a.A)
	assert.Len(t, evs, 1, "the alert only: no reminder while paused")

	a.MustDo(t, "PATCH", monitorsPath(a.A)+"/"+m.ID, a.A.Key, map[string]any{"paused": false}).Decode(t, &got)
	assert.False(t, got.Paused)
	res, err = ev.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Reminders, "resumed: the overdue reminder, once")
	res, err = ev.Run(ctx)
	require.NoError(t, err)
	assert.Zero(t, res.Reminders+res.Changes)
	evs, _ = monitorEvents(t, a, a.A)
	assert.Len(t, evs, 2)
}
