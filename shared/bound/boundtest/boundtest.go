// Package boundtest generates the numbers that the property tests of every decoder feed
// through it, to prove that no number that passes validation is outside shared/bound's rules
// (and so none can fail at the database).
package boundtest

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// Edges are JSON number texts at and around every limit: DynamoDB's (1e-130, 9.99e125), the
// ranges' (1e9, 1e12, 1e6, 1), the floor (1e-12), float noise, -0, 2^63, and exponents that
// parse as ±Inf (1e999).
var Edges = []string{
	"0", "-0", "0.0", "-0.0", "1", "-1", "1e-7", "1E-7", "1e-12", "9e-13", "1.2e-12", "-1e-12", "-9e-13",
	"1e-17", "-1e-17", "0.30000000000000004", "0.00017939999999999997", "1.2345678901234567e-11",
	"1e-129", "1e-130", "1e-131", "1e-200", "1e-300", "-1e-300", "4.9e-324", "1e-400",
	"0.5", "0.7", "2", "10", "1e6", "1000000.000001", "1e9", "1000000000.0000001", "1.0000001e9",
	"1e12", "1.0000000001e12", "1e15", "9.99e125", "9e125", "1e126", "1e200", "1e300",
	"1.7976931348623157e308", "1e308", "1e999", "-1e999", "9223372036854775808", "-9223372036854775808",
	"18446744073709551616", "1099511627776", "-1e9", "-1e200",
}

// Random returns n JSON number texts from a fixed seed: magnitudes from 1e-300 to 1e300,
// either sign, in the shortest form or with 17 digits, and integers up to 2^64.
func Random(seed uint64, n int) []string {
	rng := rand.New(rand.NewPCG(seed, 11))
	out := make([]string, 0, n)
	for range n {
		var x float64
		switch rng.IntN(4) {
		case 0: // near the ranges: 1e-15 to 1e15
			x = math.Pow(10, rng.Float64()*30-15) * (1 + rng.Float64())
		case 1:
			x = float64(rng.Uint64() >> rng.IntN(64))
		default:
			x = math.Pow(10, rng.Float64()*600-300) * (1 + rng.Float64())
		}
		if rng.IntN(3) == 0 {
			x = -x
		}
		if math.IsInf(x, 0) {
			x = math.MaxFloat64
		}
		prec := -1
		if rng.IntN(2) == 0 {
			prec = 17
		}
		out = append(out, strconv.FormatFloat(x, 'g', prec, 64))
	}
	return out
}

// Numbers is Edges and Random(seed, n).
func Numbers(seed uint64, n int) []string {
	return append(append([]string(nil), Edges...), Random(seed, n)...)
}

// Storable reports whether DynamoDB stores x (0, or a magnitude from 1e-130 to 9.99e125).
func Storable(x float64) bool {
	a := math.Abs(x)
	return x == 0 || a >= 1e-130 && a < 9.99e125
}
