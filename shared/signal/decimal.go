package signal

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Numerical values are kept to valueDecimals decimal places and at most maxMagnitude in
// absolute value. The aggregates are sums of values and of their squares, added by DynamoDB,
// whose numbers hold 38 significant digits: squares then have at most 2 x valueDecimals
// decimals and 18 integer digits, so sums over 10^8 entities still fit, and every aggregate is
// exact rather than a float's approximation.
const (
	valueDecimals = 6
	maxMagnitude  = 1e9
)

// decimalText is the shortest decimal text of v rounded to valueDecimals places.
func decimalText(v float64) string {
	s := strconv.FormatFloat(v, 'f', valueDecimals, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

// rat parses a decimal text written by this package (or DynamoDB); empty is zero.
func rat(s string) *big.Rat {
	r := new(big.Rat)
	if s == "" {
		return r
	}
	if _, ok := r.SetString(s); !ok {
		return new(big.Rat)
	}
	return r
}

// ratText writes r, a sum of values with at most 2 x valueDecimals decimal places, exactly.
func ratText(r *big.Rat) string {
	s := r.FloatString(2 * valueDecimals)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

// square is the exact square of a decimal text.
func square(s string) string {
	r := rat(s)
	return ratText(r.Mul(r, r))
}

// sub is a - b, exactly.
func sub(a, b string) string { return ratText(new(big.Rat).Sub(rat(a), rat(b))) }

// float is the float64 nearest to a decimal text.
func float(s string) float64 {
	f, _ := rat(s).Float64()
	return f
}

// finite reports whether v is a number a signal may hold.
func finite(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) <= maxMagnitude
}
