package trace

// This file turns the raw JSON values of a span (slices of the request body, validated by
// jsonscan) into Go values: strings that share the body's memory, numbers, UUIDs.

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/jsonscan"
	"github.com/plumehq/plume/shared/textcut"
)

// spanText makes the Go strings of one span. Those that appear in src as they are (no
// escapes, valid UTF-8) are substrings of text, which is src itself when DecodeBatch reads a
// batch (no copy), else a copy of src made on first use. The others are decoded into their own
// copies, and so is every string when src is nil (the zero value).
type spanText struct {
	src  []byte
	text string // string(src), once a string needed it
	tags *tagArena
}

// str returns string(raw): a substring of t.text when raw is a slice of t.src.
func (t *spanText) str(raw []byte) string {
	// A slice of src keeps the capacity up to the end of src's array, so the difference of
	// the capacities is its offset in src; comparing addresses rules out a raw from elsewhere.
	off := cap(t.src) - cap(raw)
	if len(raw) == 0 || off < 0 || off+len(raw) > len(t.src) || &t.src[off] != &raw[0] {
		return string(raw)
	}
	if t.text == "" {
		t.text = string(t.src)
	}
	return t.text[off : off+len(raw)]
}

// stringValue decodes a raw JSON string value (with its quotes) that the reader has
// validated. It reports false when raw is not a string.
func (t *spanText) stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	if i := jsonscan.IndexEscapeOrNonASCII(s); i == len(s) || bytes.IndexByte(s[i:], '\\') < 0 && utf8.Valid(s[i:]) {
		return t.str(s), true // as it is in the JSON text
	}
	return jsonscan.Unescape(s), true
}

// stringValue is spanText.stringValue for a value outside any span's text.
func stringValue(raw []byte) (string, bool) {
	var t spanText
	return t.stringValue(raw)
}

// numberText returns the JSON number text of raw: raw itself, or the contents of a string
// holding a number (surrounding spaces allowed).
func numberText(raw []byte) ([]byte, bool) {
	if len(raw) > 0 && raw[0] == '"' {
		s, ok := stringValue(raw)
		if !ok {
			return nil, false
		}
		raw = []byte(strings.TrimSpace(s))
	}
	return raw, jsonscan.IsNumber(raw)
}

// integerValue reads an integral number, or a string holding one, of at most 2^53.
func integerValue(raw []byte) (int64, bool) {
	if n, ok := plainCount(raw); ok {
		return n, true
	}
	return anyIntegerValue(raw)
}

// anyIntegerValue is integerValue for any value.
func anyIntegerValue(raw []byte) (int64, bool) {
	text, ok := numberText(raw)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// plainCount reads the usual integers, 0 or up to 15 digits without a leading zero (below
// 2^53), as integerValue does, without parsing a float. It reports false for any other text.
func plainCount(raw []byte) (int64, bool) {
	if len(raw) == 0 || len(raw) > 15 || raw[0] == '0' && len(raw) > 1 {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// normalizeUUID returns s as a lowercase hyphenated UUID. It accepts the forms uuid.Parse
// does: hyphenated, 32 hex digits, {hyphenated} and urn:uuid:hyphenated, in any case.
func normalizeUUID(s string) (string, bool) {
	if isCanonicalUUID(s) {
		return s, true // the usual case: keep the decoded string
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// isCanonicalUUID reports whether s is a UUID as stored: lowercase and hyphenated.
func isCanonicalUUID(s string) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	// The digits, eight at a time: the words at 9, 14 and 19 have a hyphen as their byte 4,
	// which is replaced by a digit.
	const hyphen = 0xff << 32
	return isLowerHex8(load64(s, 0)) && isLowerHex8(load64(s, 9)&^hyphen|'0'<<32) &&
		isLowerHex8(load64(s, 14)&^hyphen|'0'<<32) && isLowerHex8(load64(s, 19)&^hyphen|'0'<<32) &&
		isLowerHex8(load64(s, 24)) && isLowerHex8(load64(s, 28))
}

// isLowerHex8 reports whether the eight bytes of x are all in [0-9a-f].
func isLowerHex8(x uint64) bool {
	// Adding 0x80-n to each byte below 0x80 sets its bit 7 exactly when it is >= n: no carries.
	digit := (x + ones*(0x80-'0')) &^ (x + ones*(0x80-'9'-1))
	letter := (x + ones*(0x80-'a')) &^ (x + ones*(0x80-'f'-1))
	return x&highs == 0 && (digit|letter)&highs == highs
}

// jsonKind names the JSON type of a raw value for error messages.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// truncate is a value quoted in a span's rejection reason: textcut.Quote of 64 bytes.
func truncate(b []byte) string { return textcut.Quote(string(b), 64) }
