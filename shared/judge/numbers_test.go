package judge_test

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/bound/boundtest"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
)

// numbers are the edge and random values of boundtest as float64s, with ±Inf and NaN (which
// the JSON decoder never makes, but a caller might).
func numbers(seed uint64) []float64 {
	values := []float64{math.Inf(1), math.Inf(-1), math.NaN()}
	for _, text := range boundtest.Numbers(seed, 300) {
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			values = append(values, f)
		}
	}
	return values
}

func p[T any](v T) *T { return &v }

// TestNumbersProperty feeds edge and random numbers through every numeric field of a judge, an
// evaluation and calibration feedback: what passes is inside shared/bound's rules (so it can
// be stored), and what fails is an errs.CodeInvalid error naming the field.
func TestNumbersProperty(t *testing.T) {
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for _, v := range numbers(3) {
		for _, f := range []struct {
			name string
			set  func(*judge.Spec)
		}{
			{"score_min", func(s *judge.Spec) { s.ScoreMin = p(v) }},
			{"score_max", func(s *judge.Spec) { s.ScoreMax = p(v) }},
			{"pass_threshold", func(s *judge.Spec) { s.PassThreshold = p(v) }},
			{"sample_rate", func(s *judge.Spec) { s.SampleRate = p(v) }},
			{"temperature", func(s *judge.Spec) { s.Temperature = p(v) }},
		} {
			s := judge.Spec{Name: p("j"), Template: p("t"), EvaluationType: p(judge.TypeScored), ScoreMin: p(-1e9), ScoreMax: p(1e9)}
			f.set(&s)
			j, err := judge.New(s, "p", "j1", "u", now)
			if err != nil {
				require.True(t, errs.Is(err, errs.CodeInvalid), "%s %v: %v", f.name, v, err)
				continue
			}
			assert.True(t, bound.Fraction.Contains(j.SampleRate), "%s %v", f.name, v)
			assert.True(t, bound.Temperature.Contains(j.Temperature), "%s %v", f.name, v)
			for _, x := range []*float64{j.ScoreMin, j.ScoreMax, j.PassThreshold} {
				assert.True(t, bound.Score.Contains(*x), "%s %v: %v", f.name, v, *x)
			}
		}

		j, err := judge.New(judge.Spec{Name: p("j"), Template: p("**Tone**: calm"), EvaluationType: p(judge.TypeScored),
			ScoreMin: p(-1e9), ScoreMax: p(1e9)}, "p", "j1", "u", now)
		require.NoError(t, err)
		for _, f := range []struct {
			name string
			in   judge.EvaluationInput
		}{
			{"score", judge.EvaluationInput{SpanID: "s", Score: p(v)}},
			{"confidence_score", judge.EvaluationInput{SpanID: "s", Score: p(1.0), Confidence: p(v)}},
			{"evaluation_duration_ms", judge.EvaluationInput{SpanID: "s", Score: p(1.0), DurationMS: p(v)}},
			{"criteria_scores", judge.EvaluationInput{SpanID: "s", Score: p(1.0), CriteriaScores: map[string]judge.CriterionScore{"tone": {Score: p(v)}}}},
		} {
			evs, err := judge.BuildEvaluations(j, []judge.EvaluationInput{f.in}, now)
			if err != nil {
				require.True(t, errs.Is(err, errs.CodeInvalid), "%s %v: %v", f.name, v, err)
				assert.Contains(t, err.Error(), f.name)
				continue
			}
			ev := evs[0]
			assert.True(t, bound.Score.Contains(*ev.Score), "%s %v: %v", f.name, v, *ev.Score)
			assert.True(t, ev.Confidence == nil || bound.Confidence.Contains(*ev.Confidence), "%s %v", f.name, v)
			assert.True(t, ev.DurationMS == nil || bound.DurationMS.Contains(*ev.DurationMS), "%s %v", f.name, v)
			for _, c := range ev.CriteriaScores {
				assert.True(t, bound.Score.Contains(*c.Score), "%s %v: %v", f.name, v, *c.Score)
			}
		}

		for _, c := range []judge.Calibration{
			{ExpectedScore: p(v)},
			{CriteriaFeedback: map[string]judge.CriterionFeedback{"tone": {ExpectedScore: p(v)}}},
		} {
			if err := judge.CheckCalibration(j, c); err != nil {
				require.True(t, errs.Is(err, errs.CodeInvalid), "%v: %v", v, err)
				continue
			}
			assert.True(t, boundtest.Storable(v) && (v == 0 || math.Abs(v) >= bound.Floor), "expected_score %v passed", v)
		}
	}
}
