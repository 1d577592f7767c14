package bound

import (
	"fmt"
	"math"

	"github.com/plumehq/plume/api"
)

// Floor is the smallest nonzero magnitude stored: a nonzero value below it is rounded to 0
// (measured values) or rejected (chosen values). See the package documentation.
const Floor = 1e-12

// CostGrid is the step costs are rounded to: one picodollar.
const CostGrid = 1e-12

// A Range is the set of values a kind of number may take: from Min to Max, and 0 or a
// magnitude of at least Floor. The zero Range accepts nothing but 0.
type Range struct {
	Min, Max float64
	// Measured rounds a nonzero value below Floor in magnitude to 0 instead of rejecting it.
	Measured bool
	// Grid, when set, is the step the value is rounded to (Cost).
	Grid float64
}

// The ranges of Plume's numbers (package documentation).
var (
	Cost        = Range{Min: 0, Max: 1e9, Measured: true, Grid: CostGrid}
	DurationMS  = Range{Min: 0, Max: 1e12, Measured: true}
	Confidence  = Range{Min: 0, Max: 1, Measured: true}
	Score       = Range{Min: -1e9, Max: 1e9}
	Fraction    = Range{Min: 0, Max: 1}
	Temperature = Range{Min: 0, Max: 2}
	Price       = Range{Min: 0, Max: 1e6}
)

// MaxTokens bounds a token count (an integer; no floor applies): api.MaxTokenCount.
const MaxTokens = api.MaxTokenCount

// Check returns x as stored (rounded, -0 as 0) or an error naming what is wrong with it:
// "1e+200 is not between 0 and 1e+09". The caller prefixes the field's name. Check does not
// allocate unless it fails.
func (r Range) Check(x float64) (float64, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%v is not a finite number", x)
	}
	if r.Measured && math.Abs(x) < Floor {
		return 0, nil // float noise, and -0
	}
	if !(x >= r.Min && x <= r.Max) {
		return 0, fmt.Errorf("%v is not between %v and %v", x, r.Min, r.Max)
	}
	if x == 0 {
		return 0, nil // -0
	}
	if math.Abs(x) < Floor {
		return 0, fmt.Errorf("%v is nonzero and smaller in magnitude than %v", x, Floor)
	}
	if r.Grid > 0 {
		x = Round(x, r.Grid)
	}
	return x, nil
}

// Contains reports whether x is a value Check returns: finite, in range, 0 or at least Floor
// in magnitude, on the grid. Tests use it to prove that no decoder lets another value through.
func (r Range) Contains(x float64) bool {
	if math.IsNaN(x) || !(x >= r.Min && x <= r.Max) || math.Signbit(x) && x == 0 {
		return false
	}
	if x != 0 && math.Abs(x) < Floor {
		return false
	}
	return r.Grid == 0 || Round(x, r.Grid) == x
}

// Round rounds x to a multiple of grid (a negative power of ten such as CostGrid), half away
// from zero: below 2^52 steps the result is the float64 nearest to k*grid, whose shortest
// decimal form (what DynamoDB receives) has no digit below grid. Past 2^52 steps x is
// returned as it is: its shortest form has at most 17 significant digits, so for CostGrid none
// below 1e-13. Stores round the sums of costs they add with it (their float noise).
func Round(x, grid float64) float64 {
	steps := 1 / grid
	if math.Abs(x)*steps >= 1<<52 || math.IsNaN(x) {
		return x
	}
	r := math.Round(x*steps) / steps
	if r == 0 {
		return 0 // not -0
	}
	return r
}
