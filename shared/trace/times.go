package trace

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/jsonscan"
)

// MinSpanTime is the earliest time a span may start or end: anything earlier is a client clock
// or unit error.
var MinSpanTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// MaxFutureSkew is how far after the server's clock a span time may be.
const MaxFutureSkew = 24 * time.Hour

// CheckTime reports why t cannot be the time of a span received at now: before MinSpanTime or
// more than MaxFutureSkew after now. name is the field, which the error starts with.
func CheckTime(name string, t, now time.Time) error {
	if t.Before(MinSpanTime) {
		return fmt.Errorf("%s: %s is before 2000-01-01", name, t.Format(time.RFC3339Nano))
	}
	if t.After(now.Add(MaxFutureSkew)) {
		return fmt.Errorf("%s: %s is more than a day in the future", name, t.Format(time.RFC3339Nano))
	}
	return nil
}

// timeField parses raw with parseTime and checks the range.
func timeField(name string, raw []byte, now time.Time) (time.Time, error) {
	t, err := parseTime(raw)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %v", name, err)
	}
	if err := CheckTime(name, t, now); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// parseTime reads a span time from a raw JSON value. Accepted:
//
//   - ISO 8601 / RFC 3339 strings: 2024-11-21T18:05:45.123Z, with an offset (+02:00, +0200,
//     +02), without a zone (UTC), with a space or lowercase t instead of T, with 0 to 9
//     fractional digits (more are ignored) and without seconds (2024-11-21T18:05Z).
//   - Unix epochs as JSON numbers (1732212345.123456, 1732212345) or strings holding one.
//     The unit is guessed from the magnitude v: v > 1e17 is nanoseconds, v > 1e14
//     microseconds, v > 1e11 milliseconds, else seconds. (1e11 s is the year 5138 and 1e11 ms
//     is 1973, so no time this service accepts is ambiguous.) The decimal text is converted
//     exactly, not through a float.
//
// The result is in UTC, rounded to the microsecond. Range checks are the caller's.
func parseTime(raw []byte) (time.Time, error) {
	if len(raw) == 0 {
		return time.Time{}, fmt.Errorf("missing")
	}
	var t time.Time
	var err error
	switch c := raw[0]; {
	case c == '"':
		s, _ := stringValue(raw)
		if text := strings.TrimSpace(s); jsonscan.IsNumber([]byte(text)) {
			t, err = parseEpoch([]byte(text))
		} else {
			t, err = parseISO(s)
		}
	case c == '-' || '0' <= c && c <= '9':
		t, err = parseEpoch(raw)
	default:
		return time.Time{}, fmt.Errorf("must be an ISO 8601 string or a Unix epoch number, got %s", jsonKind(raw))
	}
	if err != nil {
		return time.Time{}, err
	}
	return t.Round(time.Microsecond).UTC(), nil
}

// maxEpochSeconds bounds the epochs parseEpoch converts (the year 2255, which keeps
// nanoseconds within int64).
const maxEpochSeconds = 9e9

// parseEpoch converts a JSON number text to a time, with the unit heuristic of parseTime.
func parseEpoch(text []byte) (time.Time, error) {
	if ns, ok := plainEpochSeconds(text); ok {
		return time.Unix(0, ns).UTC(), nil
	}
	return parseAnyEpoch(text)
}

// parseAnyEpoch is parseEpoch for any number text.
func parseAnyEpoch(text []byte) (time.Time, error) {
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil && !isRangeErr(err) {
		return time.Time{}, fmt.Errorf("%q is not a number", truncate(text))
	}
	// digitsAfterPoint is log10 of the unit in nanoseconds (9 for seconds, 0 for nanoseconds).
	digitsAfterPoint, perSecond := 9, 1.0
	switch {
	case f > 1e17:
		digitsAfterPoint, perSecond = 0, 1e9
	case f > 1e14:
		digitsAfterPoint, perSecond = 3, 1e6
	case f > 1e11:
		digitsAfterPoint, perSecond = 6, 1e3
	}
	if secs := f / perSecond; !(secs >= 0 && secs <= maxEpochSeconds) {
		return time.Time{}, fmt.Errorf("epoch %s is out of range", truncate(text))
	}

	// Split the text into its digits (integer and fraction) and a decimal exponent.
	mant, exp := text, 0
	if i := bytes.IndexAny(text, "eE"); i >= 0 {
		mant = text[:i]
		e, err := strconv.Atoi(string(text[i+1:]))
		if err != nil {
			return time.Time{}, fmt.Errorf("epoch %s is out of range", truncate(text))
		}
		exp = e
	}
	intPart, fracPart := mant, []byte(nil)
	if i := bytes.IndexByte(mant, '.'); i >= 0 {
		intPart, fracPart = mant[:i], mant[i+1:]
	}
	nDigits := len(intPart) + len(fracPart)
	digit := func(i int) int64 {
		if i < len(intPart) {
			return int64(intPart[i] - '0')
		}
		return int64(fracPart[i-len(intPart)] - '0')
	}
	// The value in nanoseconds is the digits with the decimal point after `point` of them.
	point := len(intPart) + exp + digitsAfterPoint
	if point-nDigits > 19 { // >= 1e19 ns unless all digits are zero: out of range either way
		return time.Time{}, fmt.Errorf("epoch %s is out of range", truncate(text))
	}
	var ns int64
	for i := 0; i < point; i++ {
		var d int64
		if i < nDigits {
			d = digit(i)
		}
		if ns > (math.MaxInt64-d)/10 {
			return time.Time{}, fmt.Errorf("epoch %s is out of range", truncate(text))
		}
		ns = ns*10 + d
	}
	// Digits below the nanosecond are dropped: truncating there never changes the rounding to
	// the microsecond that parseTime does.
	return time.Unix(0, ns).UTC(), nil
}

// plainEpochSeconds converts the epochs the SDKs send, seconds below maxEpochSeconds as plain
// decimals (1732212345.123456), to nanoseconds as parseEpoch does, without parsing a float.
// It reports false for any other number text.
func plainEpochSeconds(text []byte) (int64, bool) {
	intPart, fracPart, _ := bytes.Cut(text, []byte("."))
	if len(intPart) == 0 || len(intPart) > 10 || len(intPart) == 10 && intPart[0] > '8' {
		return 0, false // not below 9e9 for sure
	}
	var ns int64
	for _, c := range intPart {
		if c < '0' || c > '9' {
			return 0, false
		}
		ns = ns*10 + int64(c-'0')
	}
	for i, c := range fracPart {
		if c < '0' || c > '9' {
			return 0, false
		}
		if i < 9 { // digits below the nanosecond are dropped, as parseEpoch does
			ns = ns*10 + int64(c-'0')
		}
	}
	for i := len(fracPart); i < 9; i++ {
		ns *= 10
	}
	return ns, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// parseISO parses the ISO 8601 forms of parseTime.
func parseISO(s string) (time.Time, error) {
	bad := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time or a Unix epoch", truncate([]byte(s)))
	}
	// YYYY-MM-DD?hh:mm
	if len(s) < 16 || s[4] != '-' || s[7] != '-' || !(s[10] == 'T' || s[10] == 't' || s[10] == ' ') || s[13] != ':' {
		return bad()
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return bad()
	}
	rest := s[16:]
	sec, nsec := 0, 0
	if len(rest) > 0 && rest[0] == ':' {
		if len(rest) < 3 {
			return bad()
		}
		var ok bool
		if sec, ok = digits(rest[1:3]); !ok {
			return bad()
		}
		rest = rest[3:]
		if len(rest) > 0 && rest[0] == '.' {
			i := 1
			for i < len(rest) && '0' <= rest[i] && rest[i] <= '9' {
				if i <= 9 {
					nsec = nsec*10 + int(rest[i]-'0')
				}
				i++
			}
			if i == 1 {
				return bad()
			}
			for n := i - 1; n < 9; n++ {
				nsec *= 10
			}
			rest = rest[i:]
		}
	}
	offset := 0
	switch {
	case rest == "" || rest == "Z" || rest == "z":
	case rest[0] == '+' || rest[0] == '-':
		var oh, om int
		var ok bool
		switch z := rest[1:]; {
		case len(z) == 2:
			oh, ok = digits(z)
		case len(z) == 4:
			oh, ok = digits(z[:2])
			if ok {
				om, ok = digits(z[2:])
			}
		case len(z) == 5 && z[2] == ':':
			oh, ok = digits(z[:2])
			if ok {
				om, ok = digits(z[3:])
			}
		}
		if !ok || oh > 23 || om > 59 {
			return bad()
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return bad()
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return bad()
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if t.Day() != day { // February 30 and the like
		return bad()
	}
	return t.Add(-time.Duration(offset) * time.Second), nil
}

// digits parses a short run of ASCII digits.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
