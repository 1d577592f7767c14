package trace

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/jsonscan"
)

func TestParseTime(t *testing.T) {
	tests := []struct {
		raw  string // a JSON value
		want string // RFC 3339 in UTC, or "error: <message part>"
	}{
		// Python: float epoch seconds
		{`1732212345.123456`, "2024-11-21T18:05:45.123456Z"},
		{`1732212345`, "2024-11-21T18:05:45Z"},
		{`1732212345.0`, "2024-11-21T18:05:45Z"},
		{`1732212345.5`, "2024-11-21T18:05:45.5Z"},
		{`1732212345.1234564`, "2024-11-21T18:05:45.123456Z"},
		{`1732212345.1234565`, "2024-11-21T18:05:45.123457Z"},
		{`1732212345.99999999`, "2024-11-21T18:05:46Z"},
		{`1.732212345123456e9`, "2024-11-21T18:05:45.123456Z"},
		{`1.732212345123456E+9`, "2024-11-21T18:05:45.123456Z"},
		{`17322123451234.56e-4`, "2024-11-21T18:05:45.123456Z"},
		// milliseconds, microseconds, nanoseconds
		{`1732212345123`, "2024-11-21T18:05:45.123Z"},
		{`1732212345123.456`, "2024-11-21T18:05:45.123456Z"},
		{`1732212345123456`, "2024-11-21T18:05:45.123456Z"},
		{`1732212345123456789`, "2024-11-21T18:05:45.123457Z"},
		{`1.732212345123456789e18`, "2024-11-21T18:05:45.123457Z"},
		// the unit boundaries: above 1e11 is ms, above 1e14 µs, above 1e17 ns. At a boundary the
		// smaller unit applies, which is the year 5138: out of range.
		{`100000000000`, "error: epoch 100000000000 is out of range"},
		{`100000000001`, "1973-03-03T09:46:40.001Z"},
		{`100000000000000`, "error: out of range"},
		{`100000000000001`, "1973-03-03T09:46:40.000001Z"},
		{`100000000000000000`, "error: out of range"},
		{`100000000000001000`, "1973-03-03T09:46:40.000001Z"},
		{`1e11`, "error: out of range"},
		{`8999999999999999999`, "2255-03-14T16:00:00Z"},
		// numeric strings
		{`"1732212345.123456"`, "2024-11-21T18:05:45.123456Z"},
		{`" 1732212345123 "`, "2024-11-21T18:05:45.123Z"},
		// TypeScript and other ISO 8601 forms
		{`"2024-11-21T18:05:45.123Z"`, "2024-11-21T18:05:45.123Z"},
		{`"2024-11-21T18:05:45Z"`, "2024-11-21T18:05:45Z"},
		{`"2024-11-21T20:05:45.123+02:00"`, "2024-11-21T18:05:45.123Z"},
		{`"2024-11-21T13:05:45.123-05:00"`, "2024-11-21T18:05:45.123Z"},
		{`"2024-11-21T20:05:45+0200"`, "2024-11-21T18:05:45Z"},
		{`"2024-11-21T20:05:45+02"`, "2024-11-21T18:05:45Z"},
		{`"2024-11-21T18:05:45.123456+00:00"`, "2024-11-21T18:05:45.123456Z"},
		{`"2024-11-21T18:05:45.123456"`, "2024-11-21T18:05:45.123456Z"},
		{`"2024-11-21 18:05:45.123456+00:00"`, "2024-11-21T18:05:45.123456Z"},
		{`"2024-11-21 18:05:45"`, "2024-11-21T18:05:45Z"},
		{`"2024-11-21t18:05:45z"`, "2024-11-21T18:05:45Z"},
		{`"2024-11-21T18:05Z"`, "2024-11-21T18:05:00Z"},
		{`"2024-11-21T18:05:45.1234565Z"`, "2024-11-21T18:05:45.123457Z"},
		{`"2024-11-21T18:05:45.123456789123Z"`, "2024-11-21T18:05:45.123457Z"},
		{`"2024-11-22T00:30:00+06:30"`, "2024-11-21T18:00:00Z"},
		{`"2024-02-29T00:00:00Z"`, "2024-02-29T00:00:00Z"},
		{`"2024\u002d11-21T18:05:45Z"`, "2024-11-21T18:05:45Z"},
		// errors
		{`"yesterday"`, "error: is not an ISO 8601 time"},
		{`""`, "error: is not an ISO 8601 time"},
		{`"2024-11-21"`, "error: is not an ISO 8601 time"},
		{`"2024-13-01T00:00:00Z"`, "error: is not an ISO 8601 time"},
		{`"2023-02-29T00:00:00Z"`, "error: is not an ISO 8601 time"},
		{`"2024-11-21T24:00:00Z"`, "error: is not an ISO 8601 time"},
		{`"2024-11-21T18:60:00Z"`, "error: is not an ISO 8601 time"},
		{`"2024-11-21T18:05:60Z"`, "error: is not an ISO 8601 time"},
		{`"2024-11-21T18:05:45.Z"`, "error: is not an ISO 8601 time"},
		{`"2024-11-21T18:05:45+24:00"`, "error: is not an ISO 8601 time"},
		{`"2024-11-21T18:05:45+02:0"`, "error: is not an ISO 8601 time"},
		{`"2024-11-21T18:05:45 UTC"`, "error: is not an ISO 8601 time"},
		{`"2024-11-21T18:05:4"`, "error: is not an ISO 8601 time"},
		{`"Thu, 21 Nov 2024 18:05:45 GMT"`, "error: is not an ISO 8601 time"},
		{`"NaN"`, "error: is not an ISO 8601 time"},
		{`"Infinity"`, "error: is not an ISO 8601 time"},
		{`"0x1p30"`, "error: is not an ISO 8601 time"},
		{`"1_732_212_345"`, "error: is not an ISO 8601 time"},
		{`-1732212345`, "error: out of range"},
		{`1e400`, "error: out of range"},
		{`9.1e18`, "error: out of range"},
		{`9e9`, "2255-03-14T16:00:00Z"},
		{`9000000001`, "error: out of range"},
		{`1e-400`, "1970-01-01T00:00:00Z"},
		{`0`, "1970-01-01T00:00:00Z"},
		{`true`, "error: must be an ISO 8601 string or a Unix epoch number, got a boolean"},
		{`{}`, "error: got an object"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := parseTime([]byte(tt.raw))
			if msg, ok := strings.CutPrefix(tt.want, "error: "); ok {
				require.Error(t, err)
				assert.Contains(t, err.Error(), msg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, utc(tt.want), got)
			assert.Equal(t, time.UTC, got.Location())
		})
	}
}

// spanWithAttributes decodes a span of the given kind and attributes.
// FuzzPlainEpochSeconds holds the fast path of parseEpoch to its general conversion.
func FuzzPlainEpochSeconds(f *testing.F) {
	for _, s := range []string{
		"1732212345.123456", "1732212345", "0", "8999999999.9999999999", "9000000000", "999999999.1",
		"1732212345.1234567891234", "1732212345e0", "-1732212345.5", "1732212345123", "0.000000001",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !jsonscan.IsNumber([]byte(text)) {
			return
		}
		ns, ok := plainEpochSeconds([]byte(text))
		if !ok {
			return
		}
		want, err := parseAnyEpoch([]byte(text))
		if err != nil || !time.Unix(0, ns).Equal(want) {
			t.Fatalf("%s: fast path %d, general path %v (%v)", text, ns, want.UnixNano(), err)
		}
	})
}
