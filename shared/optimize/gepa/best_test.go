package gepa_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/optimize/gepa"
)

func TestBestHonoursTheIntentsThresholds(t *testing.T) {
	at := func(v float64) *float64 { return &v }
	tone := func(min *float64) []optimize.Intent {
		return []optimize.Intent{{JudgeID: "tone", Weight: 1, MinThreshold: min}}
	}
	tests := []struct {
		name    string
		overall [][]float64 // member × example
		tone    [][]float64 // member × example; nil: no tone score
		intents []optimize.Intent
		want    string
		ok      bool
	}{
		{
			name:    "no threshold: the best mean",
			overall: [][]float64{{0.5, 0.5}, {0.9, 0.9}, {0.7, 0.7}},
			tone:    [][]float64{{0.9, 0.9}, {0.6, 0.6}, {0.85, 0.85}},
			want:    "c1", ok: true,
		},
		{
			name:    "an intent without a threshold is no guardrail",
			overall: [][]float64{{0.5, 0.5}, {0.9, 0.9}, {0.7, 0.7}},
			tone:    [][]float64{{0.9, 0.9}, {0.6, 0.6}, {0.85, 0.85}},
			intents: tone(nil),
			want:    "c1", ok: true,
		},
		{
			name:    "the best breaks a threshold: the best that meets them",
			overall: [][]float64{{0.5, 0.5}, {0.9, 0.9}, {0.7, 0.7}},
			tone:    [][]float64{{0.9, 0.9}, {0.6, 0.6}, {0.85, 0.85}},
			intents: tone(at(0.85)),
			want:    "c2", ok: true,
		},
		{
			name:    "only the baseline meets them",
			overall: [][]float64{{0.5, 0.5}, {0.9, 0.9}, {0.7, 0.7}},
			tone:    [][]float64{{0.9, 0.9}, {0.6, 0.6}, {0.85, 0.85}},
			intents: tone(at(0.875)),
			want:    "c0", ok: true,
		},
		{
			name:    "none meets them, not even the baseline",
			overall: [][]float64{{0.5, 0.5}, {0.9, 0.9}, {0.7, 0.7}},
			tone:    [][]float64{{0.9, 0.9}, {0.6, 0.6}, {0.85, 0.85}},
			intents: tone(at(0.95)),
		},
		{
			name:    "the mean per intent counts, not each example",
			overall: [][]float64{{0.5, 0.5}, {0.9, 0.9}},
			tone:    [][]float64{{0.5, 0.5}, {1, 0.5}},
			intents: tone(at(0.75)),
			want:    "c1", ok: true,
		},
		{
			name:    "a threshold no example has a score for is not met",
			overall: [][]float64{{0.5, 0.5}, {0.9, 0.9}},
			intents: tone(at(0.1)),
		},
		{
			name:    "a tie goes to the elder",
			overall: [][]float64{{0.75, 0.5}, {0.5, 0.75}},
			want:    "c0", ok: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := matrixState(tt.overall)
			st.Config.Intents = tt.intents
			for c, row := range tt.tone {
				for e, v := range row {
					id := st.Validation[e].ID
					s := st.Pool[c].Scores[id]
					s.Intents = map[string]float64{"tone": v}
					st.Pool[c].Scores[id] = s
				}
			}

			got, ok := gepa.Best(st)

			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got.Content)
		})
	}
}
