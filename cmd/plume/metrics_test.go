package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestMetricsCommand: `plume metrics` shows the project's counters per bucket from the rollups,
// text and json, with its filters; bad flags are usage errors.
func TestMetricsCommand(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	at := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Hour).Add(10 * time.Minute)
	var spans []map[string]any
	for i, kind := range []string{"llm", "tool", "llm"} {
		spans = append(spans, map[string]any{"id": uuid.NewString(), "trace_id": "4bf92f35-77b3-4da6-a3ce-929d0e0e4736",
			"name": fmt.Sprintf("step %d", i), "kind": kind, "cost": 0.5, "duration_ms": 100 * (i + 1),
			"started_at": float64(at.Add(time.Duration(i)*time.Minute).UnixMicro()) / 1e6, "tags": map[string]string{"env": "prod"}})
	}
	h.api.MustDo(t, "POST", "/spans", h.api.A.Key, spans)
	h.api.DrainStream(t)

	var m api.Metrics
	h.okJSON(&m, "metrics", "--last", "1d", "--bucket", "hour")
	assert.Equal(t, int64(3), m.Totals.Spans)
	require.NotNil(t, m.Totals.Traces)
	assert.Equal(t, int64(1), *m.Totals.Traces)
	assert.InDelta(t, 1.5, m.Totals.Cost, 1e-12)
	assert.Len(t, m.Buckets, int(m.To.Sub(m.From)/time.Hour), "every hour of the window, the current one included")
	assert.GreaterOrEqual(t, len(m.Buckets), 24)

	h.okJSON(&m, "metrics", "--last", "3h", "--span-kind", "llm")
	assert.Equal(t, int64(2), m.Totals.Spans)
	assert.Nil(t, m.Totals.Traces, "a span filter leaves the trace counters out")
	h.okJSON(&m, "metrics", "--bucket", "day", "--from", at.Add(-time.Hour).Format(time.RFC3339), "--tag", "env:prod")
	assert.Equal(t, int64(3), m.Totals.Spans)

	out := h.ok("metrics", "--last", "3h")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.GreaterOrEqual(t, len(lines), 1+3+1, "a header, the hours and the totals:\n%s", out)
	assert.Contains(t, lines[0], "START")
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "total"), "%s", out)

	for _, args := range [][]string{
		{"metrics", "--last", "a while"},
		{"metrics", "--last", "1h", "--from", at.Format(time.RFC3339)},
		{"metrics", "--tag", "env"},
		{"metrics", "--from", "yesterday"},
	} {
		r := h.run(args...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", args, r)
	}
	r := h.run("metrics", "--model", "a", "--span-kind", "llm")
	assert.Equal(t, exitUsage, r.code, "two filters are refused by the API: %s", r)
}
