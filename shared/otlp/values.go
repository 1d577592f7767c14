package otlp

import (
	"math"
	"strconv"
	"strings"

	"github.com/plumehq/plume/shared/trace"
)

// scalarText returns a string, integer, double or boolean value as text (strings with invalid
// UTF-8 repaired), "" for the other types.
func scalarText(v value) string {
	switch v.typ {
	case valueStr:
		return validUTF8(v.str)
	case valueInt:
		return strconv.FormatInt(v.Int(), 10)
	case valueDouble:
		return string(appendFloat(nil, v.Double()))
	case valueBool:
		return strconv.FormatBool(v.Bool())
	}
	return ""
}

// valueText returns v as text: a string as is (invalid UTF-8 repaired), any other value as its
// JSON text; "" for an empty value.
func valueText(v value) string {
	switch v.typ {
	case valueEmpty:
		return ""
	case valueStr:
		return validUTF8(v.str)
	}
	return string(appendValue(nil, v, 1))
}

// valueFloat reads a finite number: a double, an integer or a string holding a number.
func valueFloat(v value) (float64, bool) {
	var f float64
	switch v.typ {
	case valueDouble:
		f = v.Double()
	case valueInt:
		f = float64(v.Int())
	case valueStr:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(v.str), 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// valueCount reads a token count: a non-negative integer of at most trace.MaxTokens, also as an
// integral double or a string holding one.
func valueCount(v value) (int64, bool) {
	var n int64
	switch v.typ {
	case valueInt:
		n = v.Int()
	case valueDouble, valueStr:
		f, ok := valueFloat(v)
		if !ok || f != math.Trunc(f) || f < 0 || f > trace.MaxTokens {
			return 0, false
		}
		n = int64(f)
	default:
		return 0, false
	}
	if n < 0 || n > trace.MaxTokens {
		return 0, false
	}
	return n, true
}
