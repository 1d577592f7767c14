package tracing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// TestFitMetrics: the metrics of the largest window (2,160 hourly buckets) with 100 models and
// 100 prompts of the longest names in every bucket would take some 75 MB; the answer cuts
// every list to the most entries that fit api.MaxAnswerBytes and says how many, and keeps every
// other counter. An answer that fits is unchanged.
func TestFitMetrics(t *testing.T) {
	values := func() api.MetricsValues {
		v := api.MetricsValues{Spans: 1, LLMCalls: 100, Models: []api.ModelMetrics{}, Prompts: []api.PromptMetrics{}, Judges: []api.JudgeMetrics{}}
		for i := range 100 {
			v.Models = append(v.Models, api.ModelMetrics{Model: fmt.Sprintf("%03d", i) + strings.Repeat("m", 61), Calls: int64(100 - i), Cost: 1.5})
			v.Prompts = append(v.Prompts, api.PromptMetrics{Prompt: fmt.Sprintf("%03d", i) + strings.Repeat("p", 125), Spans: int64(100 - i)})
		}
		return v
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := api.Metrics{From: start, To: start.Add(2160 * time.Hour), Bucket: api.BucketHour, Totals: values()}
	for i := range 2160 {
		m.Buckets = append(m.Buckets, api.MetricsBucket{Start: start.Add(time.Duration(i) * time.Hour), MetricsValues: values()})
	}
	limit := api.MaxAnswerBytes - 1
	whole := encodedLen(m)
	require.Greater(t, whole, 20*limit)

	fit := fitMetrics(m, limit)
	require.NotNil(t, fit.ListsCut)
	k := *fit.ListsCut
	assert.LessOrEqual(t, encodedLen(fit), limit)
	assert.Greater(t, encodedLen(cutLists(m, k+1)), limit, "the most entries that fit")
	assert.Len(t, fit.Buckets, 2160, "every bucket")
	assert.Len(t, fit.Totals.Models, k)
	assert.Equal(t, m.Totals.Models[:k], fit.Totals.Models, "the first entries")
	assert.Equal(t, m.Buckets[7].Spans, fit.Buckets[7].Spans)
	assert.Len(t, m.Buckets[0].Models, 100, "m is not changed")
	t.Logf("%d bytes whole, %d cut to %d entries per list", whole, encodedLen(fit), k)

	small := api.Metrics{Buckets: m.Buckets[:2], Totals: api.MetricsValues{Models: m.Totals.Models[:3]}}
	assert.Equal(t, small, fitMetrics(small, limit), "an answer that fits is unchanged")
}
