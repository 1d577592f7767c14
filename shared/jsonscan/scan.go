package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MemberIter walks the members of an object that a Reader has already validated, without
// validating it again:
//
//	for it := jsonscan.Members(raw); it.Next(); { switch string(it.Key) { ... it.Value ... } }
//
// Keys are decoded when they have escapes, else they are slices of raw, as values are. On
// text that is not valid JSON it stops early or yields garbage, never reads outside raw.
type MemberIter struct {
	data       []byte
	pos        int // after the opening brace or the last member
	Key, Value []byte
}

// Members iterates the members of the valid JSON value raw, which yields nothing unless it is
// an object.
func Members(raw []byte) MemberIter {
	if len(raw) == 0 || raw[0] != '{' {
		return MemberIter{}
	}
	return MemberIter{data: raw, pos: 1}
}

// Next moves to the next member; it reports false after the last one.
func (it *MemberIter) Next() bool {
	d := it.data
	i := skipSpace(d, it.pos)
	if i < len(d) && d[i] == ',' {
		i = skipSpace(d, i+1)
	}
	if i >= len(d) || d[i] != '"' {
		return false // the closing brace
	}
	end := stringEnd(d, i)
	if it.Key = d[i+1 : end-1]; bytes.IndexByte(it.Key, '\\') >= 0 {
		it.Key = []byte(Unescape(it.Key))
	}
	i = skipSpace(d, skipSpace(d, end)+1) // the colon and the whitespace around it
	end = valueEnd(d, i)
	it.Value, it.pos = d[i:end], end
	return true
}

func skipSpace(d []byte, i int) int {
	for i < len(d) && isSpace[d[i]] {
		i++
	}
	return i
}

// valueEnd returns the index after the valid value that starts at d[i].
func valueEnd(d []byte, i int) int {
	if i >= len(d) {
		return i
	}
	switch d[i] {
	case '"':
		return stringEnd(d, i)
	case '{', '[':
		for depth := 0; i < len(d); {
			switch d[i] {
			case '"':
				i = stringEnd(d, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(d) && !isValueEnd[d[i]] { // a number, true, false or null
		i++
	}
	return i
}

var isValueEnd = [256]bool{',': true, '}': true, ']': true, ' ': true, '\t': true, '\n': true, '\r': true}

// Unescape decodes the contents of a valid JSON string (without its quotes) exactly as encoding/json does: escapes are
// resolved, invalid UTF-8 bytes and unpaired surrogates become U+FFFD.
func Unescape(s []byte) string {
	var b strings.Builder // String() does not copy
	b.Grow(len(s))
	for {
		i := IndexEscapeOrNonASCII(s)
		b.Write(s[:i])
		if s = s[i:]; len(s) == 0 {
			return b.String()
		}
		if s[0] != '\\' {
			r, size := utf8.DecodeRune(s)
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(s[:size])
			}
			s = s[size:]
			continue
		}
		if len(s) < 2 {
			return b.String() // not valid JSON: the reader never lets this through
		}
		switch c := s[1]; c {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if len(s) < 6 {
				return b.String()
			}
			rr := hex4(s[2:6])
			s = s[6:]
			if utf16.IsSurrogate(rr) {
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if dec := utf16.DecodeRune(rr, hex4(s[2:6])); dec != unicode.ReplacementChar {
						b.WriteRune(dec)
						s = s[6:]
						continue
					}
				}
				rr = unicode.ReplacementChar
			}
			b.WriteRune(rr)
			continue
		default: // '"', '\\', '/'
			b.WriteByte(c)
		}
		s = s[2:]
	}
}

// IndexEscapeOrNonASCII returns the index of the first '\\' or byte >= 0x80 of s, or len(s):
// the contents of a string before it are the string's value as they are.
func IndexEscapeOrNonASCII(s []byte) int {
	mask := func(x uint64) uint64 {
		b := x ^ (ones * '\\')
		return ((b-ones)&^b | x) & highs
	}
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if m := mask(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	if i < len(s) && len(s) >= 8 {
		// The last bytes, in the word that ends with them: the bytes before i, all checked,
		// cannot flag others by a borrow.
		before := 8 * (i - (len(s) - 8))
		if m := mask(binary.LittleEndian.Uint64(s[len(s)-8:])) >> before; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		return len(s)
	}
	for ; i < len(s); i++ {
		if s[i] == '\\' || s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// AppendCompact appends the valid JSON value src without insignificant whitespace, each
// invalid UTF-8 byte in strings replaced by U+FFFD (escapes are kept). For valid UTF-8 it
// appends what json.Compact writes.
func AppendCompact(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		case '"':
			end := stringEnd(src, i)
			dst = AppendValidUTF8(dst, src[i:end])
			i = end
		default: // a run of punctuation, numbers and literals
			j := i + 1
			for j < len(src) && !isSpaceOrQuote[src[j]] {
				j++
			}
			dst = append(dst, src[i:j]...)
			i = j
		}
	}
	return dst
}

var isSpaceOrQuote = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, '"': true}

// AppendValidUTF8 appends s, each invalid UTF-8 byte replaced by U+FFFD (as encoding/json
// decodes it).
func AppendValidUTF8(dst, s []byte) []byte {
	if utf8.Valid(s) {
		return append(dst, s...)
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[:size]...)
		}
		s = s[size:]
	}
	return dst
}

// stringEnd returns the index after the closing quote of the valid string starting at i.
func stringEnd(d []byte, i int) int {
	for i++; ; {
		if i = NextSpecial(d, i); i >= len(d) {
			return len(d)
		}
		if d[i] == '"' {
			return i + 1
		}
		i += 2 // an escape (control characters are not in valid strings)
	}
}

// IsNumber reports whether raw is a JSON number (RFC 8259 grammar, nothing around it).
func IsNumber(raw []byte) bool {
	if len(raw) == 0 || !(raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9') {
		return false
	}
	r := Reader{data: raw}
	return r.number() == nil && r.pos == len(raw)
}

// CompactGaps returns a copy of the valid JSON value raw without the whitespace runs gaps,
// which a Reader recorded (StopGaps; indexes of its data, raw starting at index start) while it
// read raw: all the insignificant whitespace of raw, and only it. It is AppendCompact by
// copying the runs between the gaps, for raw in valid UTF-8.
func CompactGaps(raw []byte, gaps []int, start int) []byte {
	n, prev := len(raw), start
	for i := 0; i+1 < len(gaps); i += 2 {
		if gaps[i] < prev || gaps[i+1] < gaps[i] || gaps[i+1] > start+len(raw) {
			return AppendCompact(make([]byte, 0, len(raw)), raw) // not raw's gaps: never happens
		}
		n -= gaps[i+1] - gaps[i]
		prev = gaps[i+1]
	}
	out := make([]byte, 0, n)
	prev = 0
	for i := 0; i+1 < len(gaps); i += 2 {
		out = append(out, raw[prev:gaps[i]-start]...)
		prev = gaps[i+1] - start
	}
	return append(out, raw[prev:]...)
}
