package optimize_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/optimize"
)

func TestVerdictOf(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		e    judge.Evaluation
		want float64
	}{
		{"binary pass", judge.Evaluation{EvaluationType: judge.TypeBinary, Result: true}, 1},
		{"binary fail", judge.Evaluation{EvaluationType: judge.TypeBinary, Result: false}, 0},
		{"scored in range", judge.Evaluation{EvaluationType: judge.TypeScored, Score: f(7), ScoreMin: f(0), ScoreMax: f(10)}, 0.7},
		{"scored from an offset range", judge.Evaluation{EvaluationType: judge.TypeScored, Score: f(3), ScoreMin: f(1), ScoreMax: f(5)}, 0.5},
		{"scored at the minimum", judge.Evaluation{EvaluationType: judge.TypeScored, Score: f(1), ScoreMin: f(1), ScoreMax: f(5), Result: true}, 0},
		{"scored above the range", judge.Evaluation{EvaluationType: judge.TypeScored, Score: f(12), ScoreMin: f(0), ScoreMax: f(10)}, 1},
		{"scored below the range", judge.Evaluation{EvaluationType: judge.TypeScored, Score: f(-2), ScoreMin: f(0), ScoreMax: f(10)}, 0},
		{"scored without a score", judge.Evaluation{EvaluationType: judge.TypeScored, Result: true, ScoreMin: f(0), ScoreMax: f(10)}, 1},
		{"scored without a range", judge.Evaluation{EvaluationType: judge.TypeScored, Score: f(4), Result: false}, 0},
		{"scored with an empty range", judge.Evaluation{EvaluationType: judge.TypeScored, Score: f(4), ScoreMin: f(4), ScoreMax: f(4), Result: true}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.e.Reason = "because"
			v := optimize.VerdictOf(tt.e)
			assert.InDelta(t, tt.want, v.Score, 1e-12)
			assert.Equal(t, "because", v.Reason)
		})
	}
}
