package trace

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/bound/boundtest"
	"github.com/plumehq/plume/shared/errs"
)

// TestNumbersProperty feeds edge and random numbers (±1e-300 to 1e300, 1e999, -0, 2^63, and
// NaN, which is not JSON) as cost and duration_ms through DecodeBatch and DecodeTraces, and
// as token counts through the span attributes: every value that passes is inside
// shared/bound's rule (and the span satisfies Check), so no number can fail at the database.
func TestNumbersProperty(t *testing.T) {
	for _, text := range boundtest.Numbers(1, 400) {
		for _, field := range []string{"cost", "duration_ms"} {
			r := bound.Cost
			if field == "duration_ms" {
				r = bound.DurationMS
			}
			span := spanJSON(map[string]any{field: json.RawMessage(text),
				"attributes": map[string]any{"model": "m", "inputTokens": json.RawMessage(text), "usage": map[string]any{"output_tokens": json.RawMessage(text)}}})
			spans, rejected, err := DecodeBatch([]byte("["+span+"]"), testProject, testNow)
			if err != nil {
				require.True(t, errs.Is(err, errs.CodeInvalid), "%s %s: %v", field, text, err)
				require.Len(t, rejected, 1, "%s %s", field, text)
				assert.Contains(t, rejected[0].Error, field)
				continue
			}
			require.Len(t, spans, 1)
			s := spans[0]
			require.NoError(t, s.Check(testNow), "%s %s", field, text)
			v := s.Cost
			if field == "duration_ms" {
				v = s.DurationMS
			}
			require.NotNil(t, v, "%s %s", field, text)
			assert.True(t, r.Contains(*v), "%s %s stored as %v", field, text, *v)
			assert.True(t, boundtest.Storable(*v), "%s %s stored as %v", field, text, *v)
			if u := s.LLM; u != nil {
				assert.True(t, u.InputTokens >= 0 && u.InputTokens <= bound.MaxTokens, "tokens %s: %d", text, u.InputTokens)
				assert.True(t, u.OutputTokens >= 0 && u.OutputTokens <= bound.MaxTokens, "tokens %s: %d", text, u.OutputTokens)
			}

			body := `[{"session_id":"s","name":"t","started_at":1732212345,"` + field + `":` + text + `}]`
			traces, err := DecodeTraces([]byte(body), testNow)
			if err != nil {
				require.True(t, errs.Is(err, errs.CodeInvalid), "%s %s: %v", field, text, err)
				continue
			}
			w := traces[0].Cost
			if field == "duration_ms" {
				w = traces[0].DurationMS
			}
			require.NotNil(t, w)
			assert.True(t, r.Contains(*w), "trace %s %s stored as %v", field, text, *w)
		}
	}
	// NaN is not JSON: the body is refused as a whole.
	_, _, err := DecodeBatch([]byte(`[{"trace_id":"`+baseTrace+`","name":"n","started_at":1732212345,"cost":NaN}]`), testProject, testNow)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not valid JSON")
	_, err = DecodeTraces([]byte(`[{"session_id":"s","name":"t","started_at":1732212345,"cost":NaN}]`), testNow)
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.CodeInvalid))
}
