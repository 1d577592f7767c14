package monitor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// spendOf is a Spend of fixed answers, recording the days asked for.
type spendOf struct {
	usd     float64
	counted bool
	err     error
	asked   []time.Time
}

func (s *spendOf) DaySpend(_ context.Context, _ string, at time.Time) (float64, bool, error) {
	s.asked = append(s.asked, at)
	return s.usd, s.counted, s.err
}

// TestValidateGatewaySpend: its window is 1d, nothing else; it takes no filter; min_samples
// does not apply (stored as 0).
func TestValidateGatewaySpend(t *testing.T) {
	spend := func(window time.Duration, f api.MonitorFilters) *Monitor {
		return &Monitor{Name: "spend", Metric: api.MonitorGatewaySpend, Window: window, Filters: f,
			Comparison: api.MonitorGT, Threshold: 10, ResolveThreshold: 10, MinSamples: 5}
	}
	m := spend(24*time.Hour, api.MonitorFilters{})
	require.NoError(t, Validate(m))
	assert.Zero(t, m.MinSamples, "min_samples does not apply to gateway_spend")

	for _, w := range []time.Duration{5 * time.Minute, time.Hour, 48 * time.Hour} {
		err := Validate(spend(w, api.MonitorFilters{}))
		require.True(t, errs.Is(err, errs.CodeInvalid), "window %s: %v", w, err)
		assert.Contains(t, err.Error(), "per day", "the refusal says why")
		assert.Contains(t, err.Error(), "its window is 1d")
	}
	err := Validate(spend(24*time.Hour, api.MonitorFilters{Model: "gpt-4o"}))
	assert.True(t, errs.Is(err, errs.CodeInvalid), "%v", err)

	other := &Monitor{Name: "cost", Metric: api.MonitorCost, Window: 24 * time.Hour, Comparison: api.MonitorGT, MinSamples: 5}
	require.NoError(t, Validate(other))
	assert.EqualValues(t, 5, other.MinSamples, "other metrics keep min_samples")
}

// TestMeasureSpend: the day's spend is the value, 0 included (no samples needed); no cap (or
// no Spend) is no value, so no_data; an error is returned.
func TestMeasureSpend(t *testing.T) {
	now := time.Date(2026, 12, 3, 1, 30, 0, 0, time.FixedZone("x", 3600))
	m := Monitor{ID: "mon_1", ProjectID: "p1", Metric: api.MonitorGatewaySpend, Comparison: api.MonitorGT, Threshold: 2, ResolveThreshold: 2}

	s := &spendOf{usd: 2.5, counted: true}
	v, n, err := MeasureSpend(context.Background(), s, m, now)
	require.NoError(t, err)
	assert.Equal(t, ptr(2.5), v)
	assert.Equal(t, []time.Time{now.UTC()}, s.asked, "one read, of now in UTC")
	assert.Equal(t, api.MonitorAlerting, Next(m, v, n))

	v, n, err = MeasureSpend(context.Background(), &spendOf{counted: true}, m, now)
	require.NoError(t, err)
	assert.Equal(t, ptr(0), v)
	assert.Equal(t, api.MonitorOK, Next(m, v, n), "0 spend is a value")

	v, n, err = MeasureSpend(context.Background(), &spendOf{}, m, now)
	require.NoError(t, err)
	assert.Nil(t, v)
	assert.Equal(t, api.MonitorNoData, Next(m, v, n), "no daily cap: nothing counted")

	v, _, err = MeasureSpend(context.Background(), nil, m, now)
	require.NoError(t, err)
	assert.Nil(t, v)

	_, _, err = MeasureSpend(context.Background(), &spendOf{err: errors.New("boom")}, m, now)
	assert.ErrorContains(t, err, "boom")
}
