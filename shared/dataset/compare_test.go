package dataset

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

func TestTallyOf(t *testing.T) {
	for value, want := range map[string]Tally{
		"true": {Booleans: 1, Passed: 1}, "false": {Booleans: 1}, "0.5": {Numbers: 1, Sum: 0.5}, "-3": {Numbers: 1, Sum: -3},
		`"yes"`: {}, `{"a":1}`: {}, "null": {},
	} {
		assert.Equal(t, want, TallyOf(json.RawMessage(value)), value)
	}
	a, b := Tally{Booleans: 2, Passed: 1, Numbers: 1, Sum: 4}, TallyOf(json.RawMessage("true"))
	assert.Equal(t, a, a.Add(b).Minus(b))
	assert.True(t, b.Minus(b).IsZero())
}

// TestCompareAggregates: evaluators line up by name across experiments, only the run asked,
// a pass rate wherever any experiment has booleans, no difference without both ends.
func TestCompareAggregates(t *testing.T) {
	got := CompareAggregates([][]Aggregate{
		{
			{EvaluatorID: "a1", EvaluatorName: "correct", Run: 1, Tally: Tally{Booleans: 4, Passed: 3}},
			{EvaluatorID: "a2", EvaluatorName: "score", Run: 1, Tally: Tally{Numbers: 2, Sum: 5}},
			{EvaluatorID: "a2", EvaluatorName: "score", Run: 2, Tally: Tally{Numbers: 1, Sum: 100}},
			{EvaluatorID: "a3", EvaluatorName: "gone", Run: 1}, // every evaluation replaced by text
		},
		{
			{EvaluatorID: "b1", EvaluatorName: "correct", Run: 1, Tally: Tally{Booleans: 2, Passed: 2, Numbers: 1, Sum: 1}},
			{EvaluatorID: "b3", EvaluatorName: "judge", Run: 1, Tally: Tally{Booleans: 1}},
		},
	}, 1)
	require.Len(t, got, 3)
	assert.Equal(t, []string{"correct", "judge", "score"}, []string{got[0].Name, got[1].Name, got[2].Name})
	assert.Equal(t, api.MeasurePassRate, got[0].Measure)
	assert.InDelta(t, 0.25, *got[0].Difference, 1e-12, "1 - 0.75")
	assert.Equal(t, 1.0, *got[0].Values[1].Mean, "the other measure is answered too")
	assert.Nil(t, got[1].Values[0])
	assert.Nil(t, got[1].Difference)
	assert.Equal(t, api.MeasureMean, got[2].Measure)
	assert.Equal(t, 2.5, *got[2].Values[0].Mean, "run 1 only")
	assert.Nil(t, got[2].Values[1])
	assert.Nil(t, got[2].Difference)
}
