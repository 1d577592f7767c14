package otlp

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/plumehq/plume/shared/jsonscan"
)

// jsonReader reads OTLP/JSON token by token exactly as the Collector's pdata codec
// (ptrace.JSONUnmarshaler) does: pdata reads with json-iterator's Iterator (ConfigFastest),
// whose rules are not encoding/json's, and Plume must accept exactly the bodies pdata accepts
// and read them as it does. What that means, beyond JSON:
//
//   - Reading is stateless: an object member is read by readMember, which takes '{', ',' or
//     '}' wherever it stands (and null for an empty object), an array element likewise
//     (readElement); the body's end is not checked once the request object is read.
//   - A member named "" ends its object: pdata's loops stop at an empty name.
//   - Strings are read as they are (invalid UTF-8 kept), control characters refused only
//     before the first escape; ids and bytes are read up to the next quote, escapes not
//     decoded; null reads as an empty string except for ids and bytes.
//   - Numbers follow json-iterator's integer and float readers: an integer that overflows
//     past its first wrap may be read modulo 2^64, leading zeros end an integer, skipped
//     numbers are checked by the rules of json-iterator's Skip.
//
// Every error is final (pdata keeps reading after an error, but the body is refused), so the
// reader stops at the first one; running out of input is an error wherever it happens.
//
// json-iterator: https://github.com/json-iterator/go (v1.1.12: iter*.go)
type jsonReader struct {
	data    []byte
	pos     int
	err     error
	scratch []byte // the value of the last string read that had escapes
}

// errJSONEnd is the error of a body that ends early.
var errJSONEnd = errors.New("unexpected end of JSON input")

// maxSkipDepth is json-iterator's bound on the nesting of values it skips.
const maxSkipDepth = 10000

// fail records the first error, at the current position.
func (r *jsonReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s at offset %d", fmt.Sprintf(format, args...), r.pos)
	}
}

// tooDeep records errTooDeep: a value nested deeper than the decoders read.
func (r *jsonReader) tooDeep() {
	if r.err == nil {
		r.err = errTooDeep
	}
}

// ok reports whether no error happened.
func (r *jsonReader) ok() bool { return r.err == nil }

// next returns the next byte that is not white space and moves past it; 0 (an error) at the
// end.
func (r *jsonReader) next() byte {
	for i := r.pos; i < len(r.data); i++ {
		switch c := r.data[i]; c {
		case ' ', '\n', '\t', '\r':
			continue
		default:
			r.pos = i + 1
			return c
		}
	}
	r.pos = len(r.data)
	if r.err == nil {
		r.err = errJSONEnd
	}
	return 0
}

// byte1 returns the next byte and moves past it; 0 (an error) at the end.
func (r *jsonReader) byte1() byte {
	if r.pos >= len(r.data) {
		if r.err == nil {
			r.err = errJSONEnd
		}
		return 0
	}
	c := r.data[r.pos]
	r.pos++
	return c
}

// unread steps back over the byte just read.
func (r *jsonReader) unread() {
	if r.err == nil {
		r.pos--
	}
}

// peek returns the next byte that is not white space without moving past it.
func (r *jsonReader) peek() byte {
	c := r.next()
	r.unread()
	return c
}

// literal reads the rest of a literal (rest of "null", "true" or "false").
func (r *jsonReader) literal(rest string) {
	for i := 0; i < len(rest); i++ {
		if r.byte1() != rest[i] {
			r.fail("expected %q", rest)
			return
		}
	}
}

// readMember reads up to the value of an object's next member and returns its name, or
// false at the end of the object (or at a member named "", as pdata's loops stop there). The
// name is valid until the next string is read.
func (r *jsonReader) readMember() ([]byte, bool) {
	switch c := r.next(); c {
	case 'n':
		r.literal("ull")
		return nil, false
	case '{':
		if c = r.next(); c == '}' {
			return nil, false
		}
		if c != '"' {
			r.fail("expected \" after {, found %q", c)
			return nil, false
		}
		r.unread()
	case ',':
	case '}':
		return nil, false
	default:
		r.fail("expected { or , or } or null, found %q", c)
		return nil, false
	}
	name := r.readString()
	if c := r.next(); c != ':' {
		r.fail("expected : after an object member's name, found %q", c)
	}
	return name, r.ok() && len(name) > 0
}

// readElement reads up to an array's next element and reports whether there is one.
func (r *jsonReader) readElement() bool {
	switch c := r.next(); c {
	case 'n':
		r.literal("ull")
	case '[':
		if r.next() != ']' {
			r.unread()
			return r.ok()
		}
	case ']':
	case ',':
		return r.ok()
	default:
		r.fail("expected [ or , or ] or null, found %q", c)
	}
	return false
}

// readString reads a string (null is ""). The value is a part of the body, or of the
// reader's scratch buffer when it had escapes: valid until the next string is read.
func (r *jsonReader) readString() []byte {
	switch c := r.next(); c {
	case '"':
	case 'n':
		r.literal("ull")
		return nil
	default:
		r.fail("expected a string, found %q", c)
		return nil
	}
	start := r.pos
	i := jsonscan.NextSpecial(r.data, start)
	switch {
	case i == len(r.data) || r.data[i] == '\\':
		return r.readEscaped()
	case r.data[i] == '"':
		r.pos = i + 1
		return r.data[start:i]
	}
	r.fail("control character %d in a string", r.data[i])
	return nil
}

// readEscaped reads the rest of a string that has escapes, from its first byte: control
// characters are taken as they are here.
func (r *jsonReader) readEscaped() []byte {
	s := r.scratch[:0]
	for r.ok() {
		i := jsonscan.NextSpecial(r.data, r.pos)
		s = append(s, r.data[r.pos:i]...)
		r.pos = i
		switch c := r.byte1(); c {
		case '"':
			r.scratch = s
			return s
		case '\\':
			s = r.escape(r.byte1(), s)
		default: // a control character, or 0 at the end of the input (an error)
			s = append(s, c)
		}
	}
	r.scratch = s
	return nil
}

// escape appends the character of the escape sequence that starts with c (after the
// backslash), as json-iterator decodes it: a lone surrogate becomes U+FFFD.
func (r *jsonReader) escape(c byte, s []byte) []byte {
	switch c {
	case 'u':
		u := r.hex4()
		if !r.ok() {
			return s
		}
		if !utf16.IsSurrogate(u) {
			return utf8.AppendRune(s, u)
		}
		if c = r.byte1(); !r.ok() {
			return s
		}
		if c != '\\' {
			r.unread()
			return utf8.AppendRune(s, u)
		}
		if c = r.byte1(); !r.ok() {
			return s
		}
		if c != 'u' {
			return r.escape(c, utf8.AppendRune(s, u))
		}
		u2 := r.hex4()
		if !r.ok() {
			return s
		}
		if pair := utf16.DecodeRune(u, u2); pair != utf8.RuneError {
			return utf8.AppendRune(s, pair)
		}
		return utf8.AppendRune(utf8.AppendRune(s, u), u2)
	case '"', '\\', '/':
		return append(s, c)
	case 'b':
		return append(s, '\b')
	case 'f':
		return append(s, '\f')
	case 'n':
		return append(s, '\n')
	case 'r':
		return append(s, '\r')
	case 't':
		return append(s, '\t')
	}
	r.fail("invalid escape \\%c", c)
	return s
}

// hex4 reads the four hex digits of a \u escape.
func (r *jsonReader) hex4() rune {
	var u rune
	for range 4 {
		c := r.byte1()
		if !r.ok() {
			return 0
		}
		switch {
		case '0' <= c && c <= '9':
			u = u*16 + rune(c-'0')
		case 'a' <= c && c <= 'f':
			u = u*16 + rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			u = u*16 + rune(c-'A'+10)
		default:
			r.fail("invalid hex digit %q", c)
			return 0
		}
	}
	return u
}

// readRaw reads a string up to the next quote, escapes not decoded, as pdata reads ids and
// bytes (null is refused).
func (r *jsonReader) readRaw() []byte {
	if c := r.next(); c != '"' {
		if r.ok() {
			r.fail("expected a string, found %q", c)
		}
		return nil
	}
	if i := bytes.IndexByte(r.data[r.pos:], '"'); i >= 0 {
		s := r.data[r.pos : r.pos+i]
		r.pos += i + 1
		return s
	}
	r.pos = len(r.data)
	r.fail("unterminated string")
	return nil
}

// readID reads a trace or span id of len(id) bytes in hex into id; an empty string is no id
// (all zero).
func (r *jsonReader) readID(id []byte) {
	clear(id)
	s := r.readRaw()
	if len(s) == 0 || !r.ok() {
		return
	}
	if len(s)/2 != len(id) {
		r.fail("id of %d hex digits, want %d", len(s), 2*len(id))
		return
	}
	if _, err := hex.Decode(id, s); err != nil {
		r.fail("id: %v", err)
	}
}

// readBytes reads a bytes value (standard base64) and appends it to b.
func (r *jsonReader) readBytes(b []byte) []byte {
	s := r.readRaw()
	if len(s) == 0 || !r.ok() {
		return b
	}
	n := len(b)
	b = append(b, make([]byte, base64.StdEncoding.DecodedLen(len(s)))...)
	m, err := base64.StdEncoding.Decode(b[n:], s)
	if err != nil {
		r.fail("bytes: %v", err)
	}
	return b[:n+m]
}

// isDigit reports whether c is a decimal digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// readUint reads an unsigned integer whose first byte c was read, of bits bits (32 or 64),
// as json-iterator's readUint32 and readUint64 do: a leading 0 is the whole number, digits
// end at the first other byte (a '.' there is an error), and overflow is caught only when a
// digit makes the value smaller.
func (r *jsonReader) readUint(c byte, bits int) uint64 {
	if !r.ok() {
		return 0
	}
	if !isDigit(c) {
		r.fail("expected a digit, found %q", c)
		return 0
	}
	value := uint64(c - '0')
	if value != 0 {
		safe, mask := uint64(math.MaxUint64)/10-1, uint64(math.MaxUint64)
		if bits == 32 {
			safe, mask = uint64(math.MaxUint32)/10-1, math.MaxUint32
		}
		for ; r.pos < len(r.data) && isDigit(r.data[r.pos]); r.pos++ {
			next := (value*10 + uint64(r.data[r.pos]-'0')) & mask
			if value > safe && next < value {
				r.fail("integer overflow")
				return 0
			}
			value = next
		}
		if r.pos == len(r.data) {
			r.fail("number at the end of the input")
			return 0
		}
	}
	if r.pos < len(r.data) && r.data[r.pos] == '.' {
		r.fail("a float where an integer is expected")
		return 0
	}
	return value
}

// readSigned reads a signed integer of bits bits (32 or 64) as json-iterator's ReadInt32
// and ReadInt64 do: a '-' directly followed by the digits.
func (r *jsonReader) readSigned(bits int) int64 {
	limit := uint64(1)<<(bits-1) - 1
	c := r.next()
	neg := c == '-'
	if neg {
		c, limit = r.byte1(), limit+1
	}
	v := r.readUint(c, bits)
	if v > limit {
		r.fail("integer overflow")
		return 0
	}
	if neg {
		return -int64(v)
	}
	return int64(v)
}

// The kinds of value json-iterator's WhatIsNext tells apart, as pdata's number readers use it.
const (
	jsonOther = iota
	jsonNumber
	jsonString
)

// kind returns the kind of the next value.
func (r *jsonReader) kind() int {
	switch c := r.peek(); {
	case c == '"':
		return jsonString
	case c == '-' || isDigit(c):
		return jsonNumber
	}
	return jsonOther
}

// readInt reads an integer field of bits bits as pdata does: a number, or a string holding
// one (strconv's syntax). signed tells an int32 or int64 from a uint32 or uint64.
func (r *jsonReader) readInt(bits int, signed bool) uint64 {
	switch r.kind() {
	case jsonNumber:
		if signed {
			return uint64(r.readSigned(bits))
		}
		return r.readUint(r.next(), bits)
	case jsonString:
		s := r.readString()
		if !r.ok() {
			return 0
		}
		var (
			v   uint64
			err error
		)
		if signed {
			var n int64
			n, err = strconv.ParseInt(string(s), 10, bits)
			v = uint64(n)
		} else {
			v, err = strconv.ParseUint(string(s), 10, bits)
		}
		if err != nil {
			r.fail("integer: %v", err)
		}
		return v
	}
	if r.ok() {
		r.fail("expected a number")
	}
	return 0
}

// readEnum reads an enum field as pdata does: a number (an int32), or one of names.
func (r *jsonReader) readEnum(names []string) int32 {
	switch r.kind() {
	case jsonNumber:
		return int32(r.readInt(32, true))
	case jsonString:
		s := r.readString()
		for i, name := range names {
			if string(s) == name {
				return int32(i)
			}
		}
		r.fail("unknown enum value %q", s)
		return 0
	}
	if r.ok() {
		r.fail("expected an enum value")
	}
	return 0
}

// readBool reads true or false.
func (r *jsonReader) readBool() bool {
	switch c := r.next(); c {
	case 't':
		r.literal("rue")
		return true
	case 'f':
		r.literal("alse")
		return false
	}
	r.fail("expected true or false")
	return false
}

// readDouble reads a double field as pdata does: a number (json-iterator's ReadFloat64), or a
// string holding one (strconv.ParseFloat's syntax: "NaN" and "Infinity" among others).
func (r *jsonReader) readDouble() float64 {
	switch r.kind() {
	case jsonNumber:
		f, _ := r.readFloat(64)
		return f
	case jsonString:
		s := r.readString()
		if !r.ok() {
			return 0
		}
		f, err := strconv.ParseFloat(string(s), 64)
		if err != nil {
			r.fail("double: %v", err)
		}
		return f
	}
	if r.ok() {
		r.fail("expected a number")
	}
	return 0
}

// Outcomes of readFloat's first check.
const (
	floatRead = iota
	floatEarly
)

// readFloat reads a number as json-iterator's ReadFloat64 (bits 64) or ReadFloat32 (32)
// does. Its fast path refuses an empty number, a leading dot and a leading zero followed by
// a digit, without moving (the second result is floatEarly); otherwise the run of number
// bytes is taken, checked and parsed with strconv.ParseFloat, whose value the fast path
// also finds when it succeeds.
func (r *jsonReader) readFloat(bits int) (float64, int) {
	neg := r.next() == '-'
	if !neg {
		r.unread()
	}
	if !r.ok() {
		return 0, floatRead
	}
	if r.pos < len(r.data) {
		switch c := r.data[r.pos]; c {
		case ',', ']', '}', ' ', '\t', '\n':
			r.fail("empty number")
			return 0, floatEarly
		case '.':
			r.fail("leading dot in a number")
			return 0, floatEarly
		case '0':
			if r.pos+1 < len(r.data) && isDigit(r.data[r.pos+1]) {
				r.fail("leading zero in a number")
				return 0, floatEarly
			}
		}
	}
	run := r.numberRun()
	if !r.ok() {
		return 0, floatRead
	}
	if msg := floatSyntax(run); msg != "" {
		r.fail("%s", msg)
		return 0, floatRead
	}
	f, err := strconv.ParseFloat(string(run), bits)
	if err != nil {
		r.fail("number: %v", err)
		return 0, floatRead
	}
	if neg {
		f = -f
	}
	return f, floatRead
}

// numberRun reads the bytes that may make a number (digits, '+', '-', '.', 'e', 'E'), as
// json-iterator's readNumberAsString does: an error when there are none or they reach the
// end of the input.
func (r *jsonReader) numberRun() []byte {
	start := r.pos
	for ; r.pos < len(r.data); r.pos++ {
		switch c := r.data[r.pos]; {
		case isDigit(c), c == '+', c == '-', c == '.', c == 'e', c == 'E':
			continue
		}
		break
	}
	switch {
	case r.pos == len(r.data):
		r.fail("number at the end of the input")
	case r.pos == start:
		r.fail("invalid number")
	}
	return r.data[start:r.pos]
}

// floatSyntax is json-iterator's validateFloat: what strconv accepts that it does not.
func floatSyntax(s []byte) string {
	if s[0] == '-' {
		return "-- is not valid"
	}
	for i, c := range s {
		if c != '.' {
			continue
		}
		if i == len(s)-1 {
			return "dot can not be last character"
		}
		if !isDigit(s[i+1]) {
			return "missing digit after dot"
		}
		break
	}
	return ""
}

// skip skips a value as json-iterator's Skip does, depth values deep in what it skips.
func (r *jsonReader) skip(depth int) {
	switch c := r.next(); c {
	case '"':
		r.unread()
		r.readString()
	case 'n':
		r.literal("ull")
	case 't':
		r.literal("rue")
	case 'f':
		r.literal("alse")
	case '0':
		r.unread()
		r.readFloat(32)
	case '-', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		r.skipNumber()
	case '[':
		r.skipArray(depth + 1)
	case '{':
		r.skipObject(depth + 1)
	default:
		if r.ok() {
			r.fail("unexpected %q", c)
		}
	}
}

// skipNumber skips a number whose first byte (not '0') was read, as json-iterator's
// skipNumber does: digits with at most one dot, each followed by a digit, and ended by one of
// ",]} \t\n\r" are taken as they are; anything else is read as a float64, and when that
// fails on its first check, as a big.Float.
func (r *jsonReader) skipNumber() {
	dot := false
	for i := r.pos; i < len(r.data); i++ {
		switch c := r.data[i]; {
		case isDigit(c):
			continue
		case c == '.':
			if dot {
				r.fail("more than one dot in a number")
				return
			}
			if i+1 == len(r.data) {
				break
			}
			if !isDigit(r.data[i+1]) {
				r.fail("missing digit after dot")
				return
			}
			dot = true
			continue
		case c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if i != r.pos {
				r.pos = i
				return
			}
		}
		break
	}
	r.unread()
	if _, how := r.readFloat(64); how != floatEarly {
		return
	}
	r.err = nil // json-iterator tries a big.Float next
	run := r.numberRun()
	if !r.ok() {
		return
	}
	if _, _, err := big.ParseFloat(string(run), 10, uint(max(64, len(run))), big.ToZero); err != nil {
		r.fail("number: %v", err)
	}
}

// skipArray skips an array whose '[' was read, depth values deep.
func (r *jsonReader) skipArray(depth int) {
	if depth > maxSkipDepth {
		r.fail("exceeded max depth")
		return
	}
	if r.next() == ']' {
		return
	}
	r.unread()
	for r.ok() {
		r.skip(depth)
		switch c := r.next(); c {
		case ',':
			continue
		case ']':
			return
		default:
			r.fail("expected , or ] in an array, found %q", c)
		}
	}
}

// skipObject skips an object whose '{' was read, depth values deep. Its first member's name
// must be a string; the next ones may be null, as json-iterator reads them.
func (r *jsonReader) skipObject(depth int) {
	if depth > maxSkipDepth {
		r.fail("exceeded max depth")
		return
	}
	switch c := r.next(); c {
	case '}':
		return
	case '"':
		r.unread()
	default:
		r.fail("expected \" after {, found %q", c)
		return
	}
	for r.ok() {
		r.readString()
		if c := r.next(); c != ':' {
			r.fail("expected : after an object member's name, found %q", c)
			return
		}
		r.skip(depth)
		switch c := r.next(); c {
		case ',':
			continue
		case '}':
			return
		default:
			r.fail("object not ended with }, found %q", c)
		}
	}
}
