package listindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Kind is the record type a partition indexes.
type Kind string

// The kinds of records, as they name partitions.
const (
	Spans    Kind = "spans"
	Traces   Kind = "traces"
	Sessions Kind = "sessions"
)

// Dim is an order of a kind's records: its keys sort by one value, then created_at, then id.
type Dim byte

// The dimensions. Not every kind has every one (Dims).
const (
	DimCreated      Dim = 1 + iota // no value: created_at, id (the default order)
	DimStarted                     // started_at (traces: nil first)
	DimName                        // name (sessions: nil first)
	DimStatus                      // status
	DimDuration                    // duration_ms (spans, traces) or duration (sessions); nil first
	DimCost                        // cost (spans: nil first)
	DimKind                        // span kind
	DimSpanCount                   // a trace's span_count
	DimTraceCount                  // a session's trace_count
	DimErrorCode                   // a span's error code; spans without one have no entry
	DimParent                      // a span's parent span id, "" for a root
	DimTag                         // one entry per tag: TagValue(key, value)
	DimError                       // has_error: false, then true
	DimDurationBand                // a duration's band (Band); no entry without a duration
	DimCostBand                    // a cost's band (Band); no entry without a cost
)

var dimNames = map[Dim]string{
	DimCreated: "created_at", DimStarted: "started_at", DimName: "name", DimStatus: "status",
	DimDuration: "duration", DimCost: "cost", DimKind: "kind", DimSpanCount: "span_count",
	DimTraceCount: "trace_count", DimErrorCode: "error_code", DimParent: "parent", DimTag: "tag",
	DimError: "has_error", DimDurationBand: "duration_band", DimCostBand: "cost_band",
}

func (d Dim) String() string {
	if n, ok := dimNames[d]; ok {
		return n
	}
	return fmt.Sprintf("dim(%d)", byte(d))
}

// Bands: a duration or cost is indexed twice, under its value (DimDuration, DimCost: a sort
// on it, its ranges in its order) and under its band (DimDurationBand, DimCostBand), the power
// of 4 it falls in, whose keys sort by created_at, then id. A list filtered by a range and
// ordered by time reads the bands the range covers merged by created_at: every key of a band
// strictly inside the range is a match, and only the records of the two bands at its ends are
// checked, so the work follows the page, not how many records of the day are in the range.
const (
	BandZero = -21 // the band of 0 (and of any number not above it)
	BandMin  = -20 // 4^-20, about 9.1e-13: the band of smaller positive numbers too
	BandMax  = 20  // 4^20, about 1.1e12: the band of larger numbers too
)

// Band is the band of v: BandZero for v <= 0, else the floor of its base-4 logarithm, within
// [BandMin, BandMax]. A band b in between holds the numbers in [4^b, 4^(b+1)).
func Band(v float64) int {
	switch {
	case !(v > 0):
		return BandZero
	case math.IsInf(v, 1):
		return BandMax
	}
	_, exp := math.Frexp(v) // v = f * 2^exp with f in [0.5, 1): floor(log2 v) = exp-1
	return min(max((exp-1)>>1, BandMin), BandMax)
}

// BandValue is the value of band b's keys.
func BandValue(b int) Value { return Number(float64(b)) }

// BandKey is the entry of a record whose duration or cost is v in band dimension d: the key of
// v's band, created_at and id (Key), followed by v itself, so that a range's read decides a key
// of a band at the range's ends by the key alone (Parsed.Of), without reading the record. The
// number follows the id, so a band's keys still sort by created_at, then id.
func BandKey(d Dim, v float64, created time.Time, id string) []byte {
	return append(Key(d, BandValue(Band(v)), created, id), Number(v).enc...)
}

// Value is a sort value in its order-preserving encoding: nil sorts before false, false before
// true, booleans before numbers, numbers before times, times before strings. A dimension holds
// values of one type (and nil), so only the order within a type matters to a list.
type Value struct{ enc []byte }

// Type tags of encoded values.
const (
	tagNil    = 0x00
	tagFalse  = 0x01
	tagTrue   = 0x02
	tagNumber = 0x10
	tagTime   = 0x20
	tagString = 0x30
)

// Nil is the value of an absent field.
func Nil() Value { return Value{enc: []byte{tagNil}} }

// Bool is a boolean value.
func Bool(b bool) Value {
	if b {
		return Value{enc: []byte{tagTrue}}
	}
	return Value{enc: []byte{tagFalse}}
}

// Number is a number (counts are numbers too: float64 holds them exactly below 2^53).
func Number(f float64) Value {
	if f == 0 {
		f = 0 // -0 sorts as 0
	}
	bits := math.Float64bits(f)
	if bits&(1<<63) != 0 {
		bits = ^bits // negative: reverse their order, below the positives
	} else {
		bits |= 1 << 63
	}
	enc := make([]byte, 9)
	enc[0] = tagNumber
	binary.BigEndian.PutUint64(enc[1:], bits)
	return Value{enc: enc}
}

// OptNumber is Number, or Nil for nil.
func OptNumber(f *float64) Value {
	if f == nil {
		return Nil()
	}
	return Number(*f)
}

// Time is a time, to the microsecond.
func Time(t time.Time) Value {
	enc := make([]byte, 9)
	enc[0] = tagTime
	binary.BigEndian.PutUint64(enc[1:], micros(t))
	return Value{enc: enc}
}

// OptTime is Time, or Nil for nil.
func OptTime(t *time.Time) Value {
	if t == nil {
		return Nil()
	}
	return Time(*t)
}

// String is a string, in byte order.
func String(s string) Value { return Value{enc: appendString([]byte{tagString}, s)} }

// OptString is String, or Nil for nil.
func OptString(s *string) Value {
	if s == nil {
		return Nil()
	}
	return String(*s)
}

// TagValue is the value of a tag's entry in DimTag: the key's length first, so that no key
// and value can be taken for another ("a=b" + "c" against "a" + "b=c").
func TagValue(key, value string) Value {
	return String(fmt.Sprintf("%d:%s=%s", len(key), key, value))
}

// micros is t in microseconds since the epoch, with the sign bit flipped so that unsigned
// order is time order.
func micros(t time.Time) uint64 { return uint64(t.UnixMicro()) ^ 1<<63 }

// appendString appends s escaped (0x00 as 0x00 0xff) and terminated (0x00 0x01), which keeps
// byte order and lets a string be followed by more of the key.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, s[i])
		if s[i] == 0 {
			b = append(b, 0xff)
		}
	}
	return append(b, 0, 1)
}

// readString reads what appendString wrote at the start of b; n is the bytes it took.
func readString(b []byte) (s string, n int, err error) {
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case 0xff:
			out = append(out, 0)
			i++
		case 1:
			return string(out), i + 2, nil
		default:
			return "", 0, errBadKey
		}
	}
	return "", 0, errBadKey
}

var errBadKey = errors.New("listindex: malformed key")

// Prefix is the start of every key of dimension d with value v: the keys of one value are a
// contiguous range, in created order.
func Prefix(d Dim, v Value) []byte {
	return append([]byte{byte(d)}, v.enc...)
}

// Key is the entry of a record in dimension d: its value v, created_at and id. DimCreated has
// no value: pass Nil().
func Key(d Dim, v Value, created time.Time, id string) []byte {
	b := make([]byte, 0, 1+len(v.enc)+8+len(id)+2)
	b = append(b, byte(d))
	b = append(b, v.enc...)
	b = binary.BigEndian.AppendUint64(b, micros(created))
	return appendString(b, id)
}

// At is the first key of dimension d with value v created at or after t: with Prefix it
// bounds a window of one value.
func At(d Dim, v Value, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(Prefix(d, v), micros(t))
}

// Parsed is a key read back.
type Parsed struct {
	Dim     Dim
	Value   Value
	Created time.Time
	ID      string
	// Of is the number a band key was written for (BandKey); HasOf is false for the keys of
	// other dimensions, and for band keys written without it (Key).
	Of    float64
	HasOf bool
}

// Parse reads a key that Key or BandKey wrote.
func Parse(key []byte) (Parsed, error) {
	if len(key) < 2 {
		return Parsed{}, errBadKey
	}
	p := Parsed{Dim: Dim(key[0])}
	n, err := valueLen(key[1:])
	if err != nil {
		return Parsed{}, err
	}
	p.Value = Value{enc: bytes.Clone(key[1 : 1+n])}
	rest := key[1+n:]
	if len(rest) < 8 {
		return Parsed{}, errBadKey
	}
	p.Created = time.UnixMicro(int64(binary.BigEndian.Uint64(rest) ^ 1<<63)).UTC()
	id, m, err := readString(rest[8:])
	if err != nil {
		return Parsed{}, errBadKey
	}
	p.ID = id
	switch of := rest[8+m:]; {
	case len(of) == 0:
	case (p.Dim == DimDurationBand || p.Dim == DimCostBand) && len(of) == 9 && of[0] == tagNumber:
		p.Of, _ = Value{enc: of}.Float()
		p.HasOf = true
	default:
		return Parsed{}, errBadKey
	}
	return p, nil
}

// After is the first key after key and every key that starts with it: after a record's key
// of a value made by Key, its key made by BandKey too.
func After(key []byte) []byte { return prefixEnd(key) }

// valueLen is the length of the encoded value at the start of b.
func valueLen(b []byte) (int, error) {
	switch b[0] {
	case tagNil, tagFalse, tagTrue:
		return 1, nil
	case tagNumber, tagTime:
		if len(b) < 9 {
			return 0, errBadKey
		}
		return 9, nil
	case tagString:
		_, n, err := readString(b[1:])
		return 1 + n, err
	}
	return 0, errBadKey
}

// IsNil reports whether v is Nil.
func (v Value) IsNil() bool { return len(v.enc) == 1 && v.enc[0] == tagNil }

// Float is the number v holds (ok false for another type).
func (v Value) Float() (f float64, ok bool) {
	if len(v.enc) != 9 || v.enc[0] != tagNumber {
		return 0, false
	}
	bits := binary.BigEndian.Uint64(v.enc[1:])
	if bits&(1<<63) != 0 {
		bits &^= 1 << 63
	} else {
		bits = ^bits
	}
	return math.Float64frombits(bits), true
}

// Str is the string v holds (ok false for another type).
func (v Value) Str() (s string, ok bool) {
	if len(v.enc) == 0 || v.enc[0] != tagString {
		return "", false
	}
	s, _, err := readString(v.enc[1:])
	return s, err == nil
}

// Equal reports whether v and w are the same value.
func (v Value) Equal(w Value) bool { return bytes.Equal(v.enc, w.enc) }

// Entry is a key and its count in a run: +1 added, -1 taken back.
type Entry struct {
	Key   []byte
	Count int32
}
