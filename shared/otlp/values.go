package otlp

import (
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// maxTokens bounds a token count, as trace.DecodeBatch does (larger values are ignored).
const maxTokens = 1 << 40

// scalarText returns a string, integer, double or boolean value as text (strings with invalid
// UTF-8 repaired), "" for the other types.
func scalarText(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return validUTF8(v.Str())
	case pcommon.ValueTypeInt:
		return strconv.FormatInt(v.Int(), 10)
	case pcommon.ValueTypeDouble:
		return string(appendFloat(nil, v.Double()))
	case pcommon.ValueTypeBool:
		return strconv.FormatBool(v.Bool())
	}
	return ""
}

// valueText returns v as text: a string as is (invalid UTF-8 repaired), any other value as its
// JSON text; "" for an empty value.
func valueText(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeEmpty:
		return ""
	case pcommon.ValueTypeStr:
		return validUTF8(v.Str())
	}
	return string(appendValue(nil, v, 1))
}

// valueFloat reads a finite number: a double, an integer or a string holding a number.
func valueFloat(v pcommon.Value) (float64, bool) {
	var f float64
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		f = v.Double()
	case pcommon.ValueTypeInt:
		f = float64(v.Int())
	case pcommon.ValueTypeStr:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(v.Str()), 64); err != nil {
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

// valueCount reads a token count: a non-negative integer of at most maxTokens, also as an
// integral double or a string holding one.
func valueCount(v pcommon.Value) (int64, bool) {
	var n int64
	switch v.Type() {
	case pcommon.ValueTypeInt:
		n = v.Int()
	case pcommon.ValueTypeDouble, pcommon.ValueTypeStr:
		f, ok := valueFloat(v)
		if !ok || f != math.Trunc(f) || f < 0 || f > maxTokens {
			return 0, false
		}
		n = int64(f)
	default:
		return 0, false
	}
	if n < 0 || n > maxTokens {
		return 0, false
	}
	return n, true
}
