package bound_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/bound"
)

func TestRangeCheck(t *testing.T) {
	tests := []struct {
		name    string
		r       bound.Range
		in      float64
		want    float64
		wantErr string
	}{
		{"cost", bound.Cost, 0.5, 0.5, ""},
		{"cost max", bound.Cost, 1e9, 1e9, ""},
		{"cost over", bound.Cost, 1e9 * (1 + 1e-15), 0, "not between"},
		{"cost 1e126", bound.Cost, 1e126, 0, "not between"},
		{"cost negative", bound.Cost, -1, 0, "not between"},
		{"cost tiny", bound.Cost, 1e-200, 0, ""},
		{"cost tiny negative", bound.Cost, -1e-17, 0, ""},
		{"cost -0", bound.Cost, math.Copysign(0, -1), 0, ""},
		{"cost rounded to the grid", bound.Cost, 0.00017939999999999997, 0.0001794, ""},
		{"cost below the floor", bound.Cost, 9e-13, 0, ""},
		{"cost half a step", bound.Cost, 1.6e-12, 2e-12, ""},
		{"cost inf", bound.Cost, math.Inf(1), 0, "finite"},
		{"cost nan", bound.Cost, math.NaN(), 0, "finite"},
		{"duration", bound.DurationMS, 1e12, 1e12, ""},
		{"duration over", bound.DurationMS, 1e200, 0, "not between"},
		{"duration tiny", bound.DurationMS, 1e-7, 1e-7, ""},
		{"duration below floor", bound.DurationMS, 1e-13, 0, ""},
		{"score negative", bound.Score, -1e9, -1e9, ""},
		{"score over", bound.Score, 1e200, 0, "not between"},
		{"score tiny", bound.Score, 1e-200, 0, "smaller in magnitude"},
		{"score tiny negative", bound.Score, -1e-13, 0, "smaller in magnitude"},
		{"score -0", bound.Score, math.Copysign(0, -1), 0, ""},
		{"confidence tiny", bound.Confidence, 1e-300, 0, ""},
		{"confidence over", bound.Confidence, 1.5, 0, "not between"},
		{"price tiny", bound.Price, 1e-200, 0, "smaller in magnitude"},
		{"price max", bound.Price, 1e6, 1e6, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.r.Check(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.False(t, got == 0 && math.Signbit(got), "never -0")
			assert.True(t, tt.r.Contains(got))
		})
	}
}

// TestCheckProperty feeds random numbers from ±1e-300 to 1e300 (and the edges) through every
// range: what Check accepts is in the range, and its shortest decimal form is storable (a
// magnitude from 1e-130 to 9.99e125, or 0); a cost has no digit below 1e-13.
func TestCheckProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	values := []float64{0, math.Copysign(0, -1), 1e-7, 1 << 63, math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-130, 9.99e125, 1e126}
	for range 2000 {
		exp := rng.Float64()*600 - 300
		x := math.Pow(10, exp) * (1 + rng.Float64())
		if rng.IntN(2) == 0 {
			x = -x
		}
		values = append(values, x)
	}
	ranges := map[string]bound.Range{"cost": bound.Cost, "duration": bound.DurationMS, "confidence": bound.Confidence,
		"score": bound.Score, "fraction": bound.Fraction, "temperature": bound.Temperature, "price": bound.Price}
	for name, r := range ranges {
		for _, x := range values {
			got, err := r.Check(x)
			if err != nil {
				continue
			}
			require.True(t, r.Contains(got), "%s: %v -> %v", name, x, got)
			require.True(t, Storable(got), "%s: %v -> %v", name, x, got)
			if r.Grid > 0 {
				require.LessOrEqual(t, fractionDigits(got), 13, "%s: %v -> %v", name, x, got)
			}
		}
	}
}

// Storable reports whether DynamoDB stores x: 0, or a magnitude from 1e-130 to 9.99e125.
func Storable(x float64) bool {
	a := math.Abs(x)
	return x == 0 || a >= 1e-130 && a < 9.99e125
}

// fractionDigits is the number of digits after the point of x's shortest decimal form.
func fractionDigits(x float64) int {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

func TestRoundSumsStayOnTheGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 2))
	for range 1000 {
		a, _ := bound.Cost.Check(rng.Float64() * math.Pow(10, float64(rng.IntN(12)-3)))
		b, _ := bound.Cost.Check(rng.Float64() * math.Pow(10, float64(rng.IntN(12)-3)))
		d := bound.Round(a-b, bound.CostGrid)
		assert.LessOrEqual(t, fractionDigits(d), 13, "%v - %v = %v", a, b, d)
	}
}

func TestCheckDoesNotAllocate(t *testing.T) {
	n := testing.AllocsPerRun(100, func() { _, _ = bound.Cost.Check(0.00017939999999999997) })
	assert.Zero(t, n)
}
