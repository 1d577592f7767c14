package otlp

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/bound/boundtest"
)

// TestNumbersProperty feeds edge and random numbers (±1e-300 to 1e300, ±Inf and NaN, which
// protobuf doubles can hold, -0, 2^63) as the cost (a double, and a string) and the token
// counts of a span through Map: every span that passes has its cost inside bound.Cost and
// satisfies every invariant of the span decoder (checkSpan), so no number can fail at the
// database; a span whose cost is over the bound is rejected with a reason naming it.
func TestNumbersProperty(t *testing.T) {
	values := []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1)}
	for _, text := range boundtest.Numbers(2, 300) {
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			values = append(values, f)
		}
	}
	for _, v := range values {
		for _, attrs := range []map[string]any{
			{"gen_ai.usage.cost": v, "gen_ai.request.model": "gpt-4o"},
			{"llm.cost.total": strconv.FormatFloat(v, 'g', -1, 64)},
			{"gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": v, "gen_ai.usage.output_tokens": int64(math.Max(math.Min(v, math.MaxInt64/2), math.MinInt64/2))},
		} {
			td, _ := oneSpan(t, attrs)
			spans, rejected, reasons := mapTraces(t, td)
			if rejected > 0 {
				require.Len(t, reasons, 1)
				assert.Contains(t, reasons[0], "cost", "%v: %v", v, attrs)
				assert.True(t, v > bound.Cost.Max, "%v rejected: %v", v, reasons)
				continue
			}
			require.Len(t, spans, 1)
			s := spans[0]
			checkSpan(t, s, testNow)
			if s.Cost != nil {
				assert.True(t, bound.Cost.Contains(*s.Cost), "%v: cost %v", v, *s.Cost)
			}
			assert.True(t, s.DurationMS == nil || bound.DurationMS.Contains(*s.DurationMS))
			if u := s.LLM; u != nil {
				assert.True(t, u.InputTokens >= 0 && u.InputTokens <= 4*bound.MaxTokens, "%v: %+v", v, *u)
			}
		}
	}
}
