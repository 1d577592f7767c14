package dashboard

import (
	"math"
	"strconv"
	"strings"
)

// parseNumber reads a number field of a form: a finite decimal number ("0.5", "2", "1e3").
// strconv.ParseFloat also takes "NaN" and "Inf", which no field means and which the API's JSON
// cannot carry, so they are refused here, as a typo is, with the field's own message.
func parseNumber(text string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}
