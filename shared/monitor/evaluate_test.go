package monitor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/rollup"
)

func ptr(v float64) *float64 { return &v }

// TestNext: thresholds both ways, hysteresis, and too few samples.
func TestNext(t *testing.T) {
	gt := Monitor{Comparison: api.MonitorGT, Threshold: 0.1, ResolveThreshold: 0.05, MinSamples: 10}
	lt := Monitor{Comparison: api.MonitorLT, Threshold: 0.8, ResolveThreshold: 0.9, MinSamples: 1}
	alerting := func(m Monitor) Monitor { m.State = api.MonitorAlerting; return m }
	tests := []struct {
		name    string
		m       Monitor
		value   *float64
		samples int64
		want    string
	}{
		{"gt within", gt, ptr(0.1), 10, api.MonitorOK},
		{"gt beyond", gt, ptr(0.11), 10, api.MonitorAlerting},
		{"gt beyond, too few samples", gt, ptr(0.5), 9, api.MonitorNoData},
		{"no value", gt, nil, 0, api.MonitorNoData},
		{"gt alerting, between the thresholds: still alerting", alerting(gt), ptr(0.07), 10, api.MonitorAlerting},
		{"gt alerting, at the resolve threshold: resolved", alerting(gt), ptr(0.05), 10, api.MonitorOK},
		{"gt alerting, too few samples", alerting(gt), ptr(0.5), 3, api.MonitorNoData},
		{"lt within", lt, ptr(0.8), 1, api.MonitorOK},
		{"lt beyond", lt, ptr(0.79), 1, api.MonitorAlerting},
		{"lt alerting, between: still alerting", alerting(lt), ptr(0.85), 1, api.MonitorAlerting},
		{"lt alerting, back: resolved", alerting(lt), ptr(0.95), 1, api.MonitorOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Next(tt.m, tt.value, tt.samples))
		})
	}
}

// TestAdvance: a change is written once, a reminder only after Reminder, nothing otherwise;
// the history keeps the newest HistoryLen entries.
func TestAdvance(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	m := Monitor{Comparison: api.MonitorGT, Threshold: 1, ResolveThreshold: 1, MinSamples: 1, Reminder: time.Hour, State: api.MonitorOK}

	a, ok := Advance(m, ptr(2), 5, t0)
	assert.True(t, ok)
	assert.Equal(t, api.MonitorAlerting, a.State)
	assert.EqualValues(t, 1, a.Seq)
	assert.Equal(t, t0, a.NotifiedAt)
	assert.Equal(t, []api.MonitorStateChange{{From: api.MonitorOK, To: api.MonitorAlerting, At: t0, Value: ptr(2), Samples: 5}}, a.History)
	assert.Empty(t, m.History, "the monitor read is not changed")

	_, ok = Advance(a, ptr(3), 5, t0.Add(59*time.Minute))
	assert.False(t, ok, "still alerting before the reminder: nothing to write")

	r, ok := Advance(a, ptr(3), 5, t0.Add(time.Hour))
	assert.True(t, ok)
	assert.True(t, r.History[1].Reminder)
	assert.Equal(t, t0, r.StateSince, "a reminder is no state change")
	assert.Equal(t, t0.Add(time.Hour), r.NotifiedAt)

	a.Reminder = 0
	_, ok = Advance(a, ptr(3), 5, t0.Add(48*time.Hour))
	assert.False(t, ok, "no reminders")

	for i := range HistoryLen + 5 {
		state := []float64{0, 2}[i%2]
		a, ok = Advance(a, ptr(state), 5, t0.Add(time.Duration(i)*time.Minute))
		assert.True(t, ok)
	}
	assert.Len(t, a.History, HistoryLen)
	assert.Equal(t, t0.Add(time.Duration(HistoryLen+4)*time.Minute), a.History[HistoryLen-1].At)
}

// TestMeasure: each metric of counters, and its samples.
func TestMeasure(t *testing.T) {
	c := rollup.NewCounters()
	c.Traces, c.ErrorTraces, c.Spans, c.ErrorSpans, c.Cost, c.LLMCalls = 10, 2, 40, 1, 1.5, 12
	c.FeedbackUp, c.FeedbackDown = 3, 1
	c.Judges["j1"] = &rollup.JudgeCounters{Evaluations: 4, Passed: 3}
	c.Judges["j2"] = &rollup.JudgeCounters{Evaluations: 6, Passed: 1}
	tests := []struct {
		metric  string
		filters api.MonitorFilters
		value   *float64
		samples int64
	}{
		{api.MonitorErrorRate, api.MonitorFilters{}, ptr(0.2), 10},
		{api.MonitorErrorRate, api.MonitorFilters{Model: "gpt-4o"}, ptr(1.0 / 40), 40},
		{api.MonitorCost, api.MonitorFilters{}, ptr(1.5), 40},
		{api.MonitorLLMCalls, api.MonitorFilters{}, ptr(12), 40},
		{api.MonitorJudgePassRate, api.MonitorFilters{}, ptr(0.4), 10},
		{api.MonitorJudgePassRate, api.MonitorFilters{JudgeID: "j1"}, ptr(0.75), 4},
		{api.MonitorNegativeFeedbackRate, api.MonitorFilters{}, ptr(0.25), 4},
		{api.MonitorLatencyP95, api.MonitorFilters{}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.metric, func(t *testing.T) {
			v, n := measure(Monitor{Metric: tt.metric, Filters: tt.filters}, c)
			assert.Equal(t, tt.value, v)
			assert.Equal(t, tt.samples, n)
		})
	}
}
