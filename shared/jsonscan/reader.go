package jsonscan

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Reader is a validating reader of JSON text. It accepts exactly what encoding/json accepts
// (RFC 8259, nesting depth at most MaxDepth, any bytes >= 0x20 in strings), and returns values
// as slices of its data, so a document is read in one pass without copying. Plume uses it
// instead of encoding/json on the hot path of span ingestion: encoding/json scans every byte
// twice (validation, then decoding) through a state machine, and its one-pass decode into a
// struct of the span wire fields alone takes about twice as long as all of trace.DecodeBatch;
// this reader skips string contents eight bytes at a time (specialMask).
//
// A Reader reads step by step: Next and NextMember walk the elements of the object or array
// that Enter opened, SkipValue validates and skips one value. Its position (Pos) is always an
// index of the data it was made with (NewReader).
//
// Inside, the methods that walk values (value, object, array, str, num, lit) take the index
// to read at and return the index after what they read, keeping the position in a register;
// pos is the position of the exported methods, which are built on them.
type Reader struct {
	data  []byte
	pos   int
	depth int
	// While recordGaps is set, ws appends to gaps the offsets [start, end) of each run of
	// whitespace it skips (RecordGaps).
	recordGaps bool
	gaps       []int
}

// MaxDepth is the deepest nesting of objects and arrays a Reader accepts: encoding/json's limit.
const MaxDepth = 10000

// NewReader returns a reader of data, at its start.
func NewReader(data []byte) Reader { return Reader{data: data} }

// A SyntaxError is a violation of the JSON syntax, found at byte Offset of the reader's data.
// Its message is the one encoding/json gives, with the offset.
type SyntaxError struct {
	Msg    string
	Offset int
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset) }

// Pos returns the reader's position: an index of its data.
func (r *Reader) Pos() int { return r.pos }

// Fail returns a *SyntaxError with msg at the reader's position.
func (r *Reader) Fail(msg string) error { return r.fail(msg) }

func (r *Reader) fail(msg string) error { return &SyntaxError{Msg: msg, Offset: r.pos} }

func (r *Reader) failChar(context string) error {
	if r.pos >= len(r.data) {
		return r.fail("unexpected end of JSON input")
	}
	return r.fail(fmt.Sprintf("invalid character %q %s", r.data[r.pos], context))
}

// failAt is fail at index i (which becomes the position).
func (r *Reader) failAt(i int, msg string) error {
	r.pos = i
	return r.fail(msg)
}

// failCharAt is failChar at index i (which becomes the position).
func (r *Reader) failCharAt(i int, context string) error {
	r.pos = i
	return r.failChar(context)
}

// ws returns the index of the first byte at or after i that is not whitespace.
func (r *Reader) ws(i int) int {
	if i < len(r.data) && r.data[i] > ' ' {
		return i // the common case: no whitespace
	}
	return r.wsRun(i)
}

func (r *Reader) wsRun(i int) int {
	d, start := r.data, i
	for i < len(d) && isSpace[d[i]] {
		i++
	}
	if r.recordGaps && i > start {
		r.gaps = append(r.gaps, start, i)
	}
	return i
}

var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// SkipSpace moves the position past whitespace.
func (r *Reader) SkipSpace() { r.pos = r.ws(r.pos) }

// End skips whitespace and reports a *SyntaxError unless that reaches the end of the data: it
// ends a document whose top-level value has been read.
func (r *Reader) End() error {
	if r.SkipSpace(); r.pos != len(r.data) {
		return r.fail("invalid character after top-level value")
	}
	return nil
}

// RecordGaps makes the reader record the runs of whitespace it skips from now on, until
// StopGaps, which returns them.
func (r *Reader) RecordGaps() { r.gaps, r.recordGaps = r.gaps[:0], true }

// StopGaps stops recording whitespace and returns the runs recorded since RecordGaps, as pairs
// of indexes of the data [start, end): all the insignificant whitespace of the values read
// meanwhile (and of the whitespace after a key's colon), so that such a value can be compacted
// by copying what lies between the gaps (CompactGaps). The slice is the reader's buffer,
// overwritten after the next RecordGaps.
func (r *Reader) StopGaps() []int {
	r.recordGaps = false
	return r.gaps
}

// Enter consumes the '{' or '[' at the position, which the caller has checked is there.
func (r *Reader) Enter() error {
	r.depth++
	if r.depth > MaxDepth {
		return r.fail("exceeded max nesting depth")
	}
	r.pos++
	return nil
}

// Next moves to the next element of the open object or array; it reports false after
// consuming the closing delimiter. first is true before the first element.
func (r *Reader) Next(closing byte, first bool) (bool, error) {
	d := r.data
	i := r.ws(r.pos)
	if i >= len(d) {
		return false, r.failAt(i, "unexpected end of JSON input")
	}
	if d[i] == closing {
		r.pos = i + 1
		r.depth--
		return false, nil
	}
	if !first {
		if d[i] != ',' {
			return false, r.failCharAt(i, "after element")
		}
		i = r.ws(i + 1)
	}
	r.pos = i
	return true, nil
}

// NextMember is Next for an object, followed by reading the key, the colon and the whitespace
// after it, which leaves r.pos on the value. The key is decoded when it has escapes, else it
// is a slice of data. (One call instead of two: it runs for every member.)
func (r *Reader) NextMember(first bool) (key []byte, more bool, err error) {
	d := r.data
	i := r.ws(r.pos)
	if i >= len(d) {
		return nil, false, r.failAt(i, "unexpected end of JSON input")
	}
	if d[i] == '}' {
		r.pos = i + 1
		r.depth--
		return nil, false, nil
	}
	if !first {
		if d[i] != ',' {
			return nil, false, r.failCharAt(i, "after element")
		}
		i = r.ws(i + 1)
	}
	if i >= len(d) || d[i] != '"' {
		return nil, false, r.failCharAt(i, "looking for beginning of object key string")
	}
	end, escaped, err := r.str(i)
	if err != nil {
		return nil, false, err
	}
	key = d[i+1 : end-1]
	i = r.ws(end)
	if i >= len(d) || d[i] != ':' {
		return nil, false, r.failCharAt(i, "after object key")
	}
	r.pos = r.ws(i + 1)
	if escaped {
		key = []byte(Unescape(key))
	}
	return key, true, nil
}

// SkipValue validates and skips one value (and the whitespace before it).
func (r *Reader) SkipValue() error {
	i, err := r.value(r.pos)
	if err == nil {
		r.pos = i
	}
	return err
}

// value validates the value at or after index i (whitespace first) and returns the index after
// it. On an error, r.pos is where it was found.
func (r *Reader) value(i int) (int, error) {
	d := r.data
	if i = r.ws(i); i >= len(d) {
		return i, r.failAt(i, "unexpected end of JSON input")
	}
	switch c := d[i]; c {
	case '"':
		end, _, err := r.str(i)
		return end, err
	case '{':
		return r.object(i)
	case '[':
		return r.array(i)
	case 't':
		return r.lit(i, "true")
	case 'f':
		return r.lit(i, "false")
	case 'n':
		return r.lit(i, "null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return r.num(i)
		}
		return i, r.failCharAt(i, "looking for beginning of value")
	}
}

// object reads the object whose '{' is at index i.
func (r *Reader) object(i int) (int, error) {
	if r.depth++; r.depth > MaxDepth {
		return i, r.failAt(i, "exceeded max nesting depth")
	}
	d := r.data
	if i = r.ws(i + 1); i < len(d) && d[i] == '}' {
		r.depth--
		return i + 1, nil
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return i, r.failCharAt(i, "looking for beginning of object key string")
		}
		end, _, err := r.str(i)
		if err != nil {
			return end, err
		}
		if i = r.ws(end); i >= len(d) || d[i] != ':' {
			return i, r.failCharAt(i, "after object key")
		}
		if i, err = r.value(i + 1); err != nil {
			return i, err
		}
		if i = r.ws(i); i >= len(d) {
			return i, r.failAt(i, "unexpected end of JSON input")
		}
		switch d[i] {
		case ',':
			i = r.ws(i + 1)
		case '}':
			r.depth--
			return i + 1, nil
		default:
			return i, r.failCharAt(i, "after element")
		}
	}
}

// array reads the array whose '[' is at index i.
func (r *Reader) array(i int) (int, error) {
	if r.depth++; r.depth > MaxDepth {
		return i, r.failAt(i, "exceeded max nesting depth")
	}
	d := r.data
	if i = r.ws(i + 1); i < len(d) && d[i] == ']' {
		r.depth--
		return i + 1, nil
	}
	for {
		var err error
		if i, err = r.value(i); err != nil {
			return i, err
		}
		if i = r.ws(i); i >= len(d) {
			return i, r.failAt(i, "unexpected end of JSON input")
		}
		switch d[i] {
		case ',':
			i++
		case ']':
			r.depth--
			return i + 1, nil
		default:
			return i, r.failCharAt(i, "after element")
		}
	}
}

// lit reads the literal word (true, false or null) at index i.
func (r *Reader) lit(i int, word string) (int, error) {
	d := r.data
	if len(d)-i >= len(word) && string(d[i:i+len(word)]) == word {
		return i + len(word), nil
	}
	for j := 0; j < len(word); j++ { // where it goes wrong, for the message
		if i+j >= len(d) || d[i+j] != word[j] {
			return i + j, r.failCharAt(i+j, "in literal "+word)
		}
	}
	return i + len(word), nil
}

// num reads a number at index i: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *Reader) num(i int) (int, error) {
	d := r.data
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = skipDigits(d, i+1)
	default:
		return i, r.failCharAt(i, "in numeric literal")
	}
	if i < len(d) && d[i] == '.' {
		j := skipDigits(d, i+1)
		if j == i+1 {
			return j, r.failCharAt(j, "after decimal point in numeric literal")
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := skipDigits(d, i)
		if j == i {
			return j, r.failCharAt(j, "in exponent of numeric literal")
		}
		i = j
	}
	return i, nil
}

// number validates the number at r.pos.
func (r *Reader) number() error {
	i, err := r.num(r.pos)
	r.pos = i
	return err
}

func skipDigits(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialMask flags (bit 7 of the byte) the bytes of x that are '"', '\\' or a control
// character (< 0x20). Bytes above the lowest flagged one may be flagged falsely (a borrow), the
// lowest one never is: x is loaded little-endian, so it is the first special byte in memory.
func specialMask(x uint64) uint64 {
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return ((q-ones)&^q | (b-ones)&^b | (x-ones*0x20)&^x) & highs
}

// NextSpecial returns the index of the first byte of d[i:] that ends the plain part of a JSON
// string ('"', '\\' or a control character), or len(d); it reads eight bytes at a time.
func NextSpecial(d []byte, i int) int {
	for ; i+8 <= len(d); i += 8 {
		if m := specialMask(binary.LittleEndian.Uint64(d[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(d); i++ {
		if c := d[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// str validates the string whose opening quote is at index i and returns the index after its
// closing quote and whether it has escapes.
func (r *Reader) str(i int) (end int, escaped bool, err error) {
	// The hottest loop of the reader, up to the end of the usual string, which has no escapes.
	// Everything else is left to strRest.
	d := r.data
	for i++; i+8 <= len(d); i += 8 {
		if m := specialMask(binary.LittleEndian.Uint64(d[i : i+8])); m != 0 {
			if i += bits.TrailingZeros64(m) >> 3; d[i] == '"' {
				return i + 1, false, nil
			}
			break
		}
	}
	return r.strRest(i)
}

// strRest is str from index i on, where no special byte precedes i in the string.
func (r *Reader) strRest(i int) (end int, escaped bool, err error) {
	d := r.data
	for {
		if i = NextSpecial(d, i); i >= len(d) {
			return i, false, r.failAt(i, "unexpected end of JSON input")
		}
		switch c := d[i]; {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(d) {
				return i + 1, false, r.failAt(i+1, "unexpected end of JSON input")
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(d) || !isHex(d[j]) {
						return j, false, r.failCharAt(j, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return i + 1, false, r.failCharAt(i+1, "in string escape code")
			}
		default: // c < 0x20
			return i, false, r.failCharAt(i, "in string literal")
		}
	}
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
