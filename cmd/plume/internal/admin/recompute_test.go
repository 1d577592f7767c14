package admin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/trace"
)

func TestDifferences(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	t1 := t0.Add(time.Microsecond)
	inZone := t0.In(time.FixedZone("CET", 3600))
	base := trace.Totals{Count: 3, Errors: 1, Cost: 0.3, Start: &t0, End: &t1}
	with := func(change func(*trace.Totals)) trace.Totals {
		t := base
		change(&t)
		return t
	}
	tests := []struct {
		name     string
		kind     aggregateKind
		computed trace.Totals
		want     []string // the fields that differ
	}{
		{"same", traceKind, base, nil},
		{"cost below the grid", traceKind, with(func(t *trace.Totals) { t.Cost = 0.1 + 0.2 }), nil},
		{"same time in another zone", traceKind, with(func(t *trace.Totals) { t.Start = &inZone }), nil},
		{"span count", traceKind, with(func(t *trace.Totals) { t.Count = 2 }), []string{"span_count"}},
		{"trace count", sessionKind, with(func(t *trace.Totals) { t.Count = 2 }), []string{"trace_count"}},
		{"errors and cost", traceKind, with(func(t *trace.Totals) { t.Errors, t.Cost = 0, 0.3000001 }), []string{"error_count", "cost"}},
		{"a microsecond later", traceKind, with(func(t *trace.Totals) { t.Start = &t1 }), []string{"started_at"}},
		{"no end", sessionKind, with(func(t *trace.Totals) { t.End = nil }), []string{"ended_at"}},
		{"everything", traceKind, trace.Totals{}, []string{"span_count", "error_count", "cost", "started_at", "ended_at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs := tt.kind.differences(base, tt.computed)
			var got []string
			for _, d := range diffs {
				got = append(got, d.Field)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, trace.Recount{Stored: base, Computed: tt.computed}.Exact(), len(diffs) == 0, "differences agree with Exact")
		})
	}
}

func TestFormatValue(t *testing.T) {
	at := time.Date(2026, 3, 14, 10, 26, 53, 589_793_000, time.FixedZone("CET", 3600))
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"count", 3, "3"},
		{"cost", 0.000_012_5, "0.0000125"},
		{"whole cost", 9.0, "9"},
		{"time", &at, "2026-03-14T09:26:53.589793Z"},
		{"no time", (*time.Time)(nil), "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, formatValue(tt.v))
		})
	}
}
