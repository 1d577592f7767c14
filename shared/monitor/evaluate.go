package monitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/rollup"
)

// Measure reads m's metric over its window ending at now from r: the buckets whose start is
// in [end - Window, end), end the end of now's bucket (the current bucket, still filling, is
// the window's last). One read of at most Window/step items, whatever the traffic. value is
// nil when the metric is a ratio or a percentile of no samples; samples are what the metric
// is of (traces, spans, evaluations, pieces of feedback: docs/monitors.md).
func Measure(ctx context.Context, r rollup.Reader, m Monitor, now time.Time) (value *float64, samples int64, err error) {
	g := m.grain()
	end := now.UTC().Truncate(g.Step()).Add(g.Step())
	stored, err := r.Rollups(ctx, m.ProjectID, m.dim(), g, end.Add(-m.Window), end)
	if err != nil {
		return nil, 0, fmt.Errorf("read the rollups of monitor %s: %w", m.ID, err)
	}
	c := rollup.NewCounters()
	for _, b := range stored {
		c.Merge(b)
	}
	value, samples = measure(m, c)
	return value, samples, nil
}

// measure is m's metric of the counters c.
func measure(m Monitor, c *rollup.Counters) (*float64, int64) {
	ratio := func(n, of int64) (*float64, int64) {
		if of <= 0 {
			return nil, 0
		}
		v := float64(n) / float64(of)
		return &v, of
	}
	sum := func(v float64, samples int64) (*float64, int64) { return &v, samples }
	filtered := spanFiltered(m.Filters)
	switch m.Metric {
	case api.MonitorErrorRate:
		if filtered {
			return ratio(c.ErrorSpans, c.Spans)
		}
		return ratio(c.ErrorTraces, c.Traces)
	case api.MonitorCost:
		return sum(c.Cost, c.Spans)
	case api.MonitorLLMCalls:
		return sum(float64(c.LLMCalls), c.Spans)
	case api.MonitorLatencyP95:
		s := c.TraceLatency
		if filtered {
			s = c.SpanLatency
		}
		p95, ok := s.Quantile(0.95)
		if !ok {
			return nil, 0
		}
		return &p95, s.Count()
	case api.MonitorJudgePassRate:
		var passed, evals int64
		for id, j := range c.Judges {
			if m.Filters.JudgeID == "" || id == m.Filters.JudgeID {
				passed, evals = passed+j.Passed, evals+j.Evaluations
			}
		}
		return ratio(passed, evals)
	case api.MonitorNegativeFeedbackRate:
		return ratio(c.FeedbackDown, c.FeedbackUp+c.FeedbackDown)
	}
	return nil, 0
}

// Next is m's state after a measure of value over samples, with hysteresis: an alerting
// monitor stays alerting while its value is beyond ResolveThreshold; another alerts when its
// value is beyond Threshold. Too few samples (fewer than MinSamples, or none for a ratio) is
// no_data.
func Next(m Monitor, value *float64, samples int64) string {
	if value == nil || samples < m.MinSamples {
		return api.MonitorNoData
	}
	beyond := func(limit float64) bool {
		if m.Comparison == api.MonitorLT {
			return *value < limit
		}
		return *value > limit
	}
	limit := m.Threshold
	if m.State == api.MonitorAlerting {
		limit = m.ResolveThreshold
	}
	if beyond(limit) {
		return api.MonitorAlerting
	}
	return api.MonitorOK
}

// Spend reads what the gateway's daily cap counts.
type Spend interface {
	// DaySpend is the project's gateway spend in US dollars of the UTC day of at, as the
	// daily cap counts it; counted is false when the deployment sets no daily cap (the
	// gateway then counts no spend).
	DaySpend(ctx context.Context, projectID string, at time.Time) (usd float64, counted bool, err error)
}

// MeasureSpend reads a gateway_spend monitor's value, the project's spend of now's UTC day:
// its window is that day, not buckets of the rollups. samples is 0 (0 spend is a value, and
// min_samples does not apply); value is nil when spend is nil or counts no spend, so the
// monitor is no_data.
func MeasureSpend(ctx context.Context, spend Spend, m Monitor, now time.Time) (value *float64, samples int64, err error) {
	if spend == nil {
		return nil, 0, nil
	}
	usd, counted, err := spend.DaySpend(ctx, m.ProjectID, now.UTC())
	if err != nil {
		return nil, 0, fmt.Errorf("read the gateway spend of monitor %s: %w", m.ID, err)
	}
	if !counted {
		return nil, 0, nil
	}
	return &usd, 0, nil
}

// Evaluator evaluates every project's monitors from the rollups, and gateway_spend monitors
// from the gateway's daily spend counters.
type Evaluator struct {
	Store   Store
	Rollups rollup.Reader
	// Spend reads the gateway's daily spend; nil: none is counted (gateway_spend monitors are
	// no_data).
	Spend Spend
	Now   func() time.Time
	// Concurrency bounds the monitors evaluated at once (0: 8).
	Concurrency int
}

// Result counts what a run did.
type Result struct {
	Monitors int // evaluated
	Changes  int // state changes recorded
	// Reminders recorded; Lost are changes another run recorded first (the conditional
	// write refused).
	Reminders, Lost int
	// Paused are the monitors skipped, paused: not measured, nothing written.
	Paused int
}

// Run evaluates every monitor once: one index Query of the monitors, then per monitor one
// Query of its window's rollups (a gateway_spend monitor: one Spend.DaySpend, one
// BatchGetItem of the day's spend counters), and a conditional write only when its state changes or a
// reminder is due. A paused monitor is skipped (no read, no write). A monitor that fails does
// not stop the others; their errors are returned together.
func (e *Evaluator) Run(ctx context.Context) (Result, error) {
	listed, err := e.Store.AllMonitors(ctx)
	if err != nil {
		return Result{}, err
	}
	all := slices.DeleteFunc(listed, func(m Monitor) bool { return m.Paused })
	paused := len(listed) - len(all)
	now := e.Now().UTC().Truncate(time.Microsecond)
	outcomes := make([]outcome, len(all))
	g, gctx := errgroup.WithContext(context.WithoutCancel(ctx))
	limit := e.Concurrency
	if limit <= 0 {
		limit = 8
	}
	g.SetLimit(limit)
	for i, m := range all {
		g.Go(func() error {
			outcomes[i] = e.evaluate(gctx, m, now)
			return nil
		})
	}
	_ = g.Wait()
	res := Result{Monitors: len(all), Paused: paused}
	var failed []error
	for _, o := range outcomes {
		switch {
		case o.err != nil:
			failed = append(failed, o.err)
		case o.lost:
			res.Lost++
		case o.reminder:
			res.Reminders++
		case o.changed:
			res.Changes++
		}
	}
	return res, errors.Join(failed...)
}

type outcome struct {
	changed, reminder, lost bool
	err                     error
}

// evaluate measures m and records its change or reminder, if any.
func (e *Evaluator) evaluate(ctx context.Context, m Monitor, now time.Time) outcome {
	var value *float64
	var samples int64
	var err error
	if m.Metric == api.MonitorGatewaySpend {
		value, samples, err = MeasureSpend(ctx, e.Spend, m, now)
	} else {
		value, samples, err = Measure(ctx, e.Rollups, m, now)
	}
	if err != nil {
		return outcome{err: err}
	}
	next, ok := Advance(m, value, samples, now)
	if !ok {
		return outcome{}
	}
	done, err := e.Store.RecordState(ctx, m, next)
	if err != nil {
		return outcome{err: fmt.Errorf("record the state of monitor %s: %w", m.ID, err)}
	}
	if !done {
		return outcome{lost: true}
	}
	reminder := next.State == m.State
	slog.InfoContext(ctx, "monitor", "project_id", m.ProjectID, "monitor_id", m.ID, "from", m.State, "to", next.State, "reminder", reminder)
	return outcome{changed: !reminder, reminder: reminder}
}

// Advance is m after a measure at now, and whether anything is to be written: a state change,
// or a reminder of an alert on for Reminder since the last notification.
func Advance(m Monitor, value *float64, samples int64, now time.Time) (Monitor, bool) {
	state := Next(m, value, samples)
	change := api.MonitorStateChange{From: m.State, To: state, At: now, Value: value, Samples: samples}
	switch {
	case state != m.State:
		m.StateSince = now
		if state == api.MonitorAlerting {
			m.NotifiedAt = now
		}
	case state == api.MonitorAlerting && m.Reminder > 0 && !now.Before(m.NotifiedAt.Add(m.Reminder)):
		change.Reminder = true
		m.NotifiedAt = now
	default:
		return m, false
	}
	m.State, m.Value, m.Samples = state, value, samples
	m.History = append(slices.Clone(m.History), change)
	if len(m.History) > HistoryLen {
		m.History = m.History[len(m.History)-HistoryLen:]
	}
	m.Seq++
	return m, true
}
