package otlp

import (
	"github.com/plumehq/plume/shared/trace"

	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"
)

// maxValueDepth bounds the nesting of attribute values written as JSON. encoding/json (which
// reads attributes back, trace.Merge) refuses more than 10000 levels; no real attribute comes
// near this bound. A deeper value is written as the string tooDeep.
const maxValueDepth = 64

// tooDeep replaces a value nested deeper than maxValueDepth.
const tooDeep = "(nested too deep)"

// appendValue appends v as JSON: strings, numbers and booleans as themselves, bytes as a
// base64 string (as OTLP/JSON writes them), arrays and key-value lists as JSON arrays and
// objects (the first of duplicate keys kept), an empty value as null. Non-finite doubles become
// the strings "NaN", "Infinity" and "-Infinity" (their OTLP/JSON form). depth is v's nesting
// level (1 for an attribute value).
func appendValue(b []byte, v value, depth int) []byte {
	switch v.typ {
	case valueStr:
		return appendString(b, v.str)
	case valueInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case valueDouble:
		return appendFloat(b, v.Double())
	case valueBool:
		return strconv.AppendBool(b, v.Bool())
	case valueBytes:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, []byte(v.str))
		return append(b, '"')
	case valueSlice:
		if depth > maxValueDepth {
			return appendString(b, tooDeep)
		}
		b = append(b, '[')
		first := true
		for _, e := range v.list().all() {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendValue(b, e, depth+1)
		}
		return append(b, ']')
	case valueMap:
		if depth > maxValueDepth {
			return appendString(b, tooDeep)
		}
		return appendMap(b, v.list(), depth)
	}
	return append(b, "null"...)
}

// appendMap appends the members of a key-value list as a JSON object; of duplicate keys the
// first is kept (as get finds it). depth is the list's nesting level.
func appendMap(b []byte, l list, depth int) []byte {
	var seen keySet
	b = append(b, '{')
	first := true
	for k, v := range l.all() {
		if !seen.add(k) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
		b = appendValue(b, v, depth+1)
	}
	return append(b, '}')
}

// appendFloat appends f as encoding/json writes a float64 (trace.AppendJSONFloat); non-finite
// values, which JSON has no numbers for, as the strings OTLP/JSON writes them as.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return trace.AppendJSONFloat(b, f)
}

// appendString appends s as a JSON string, as the span encoder does.
func appendString(b []byte, s string) []byte { return trace.AppendJSONString(b, s) }

// validUTF8 returns s with each byte that is not valid UTF-8 replaced by U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return string(out)
}

// keySet records the keys of one JSON object to drop duplicates. A 256-bit filter of a cheap
// hash keeps the common case (few keys, no duplicate) free of string comparisons; past
// keySetSmall keys a map takes over, so that an object of many keys costs linear time. The
// zero value is an empty set. The first keys are held in the set itself: one on the stack
// takes no write barrier to record a key while the garbage collector runs.
type keySet struct {
	filter [4]uint64
	n      int // keys held in small
	small  [keySetSmall]string
	many   map[string]struct{}
}

// keySetSmall is how many keys keySet holds before it uses a map.
const keySetSmall = 32

// reset empties the set, keeping its memory.
func (k *keySet) reset() {
	k.filter = [4]uint64{}
	k.n = 0
	if k.many != nil {
		clear(k.many)
	}
}

// add adds key and reports whether it was new.
func (k *keySet) add(key string) bool {
	if k.n >= keySetSmall {
		if k.many == nil {
			k.many = make(map[string]struct{}, 2*keySetSmall)
		}
		if len(k.many) == 0 {
			for _, seen := range k.small {
				k.many[seen] = struct{}{}
			}
		}
		if _, seen := k.many[key]; seen {
			return false
		}
		k.many[key] = struct{}{}
		return true
	}
	h := uint64(len(key))
	if len(key) > 0 {
		h = h<<24 | uint64(key[0])<<16 | uint64(key[len(key)/2])<<8 | uint64(key[len(key)-1])
	}
	h = (h * 0x9E3779B97F4A7C15) >> 56
	word, bit := h>>6, uint64(1)<<(h&63)
	if k.filter[word]&bit != 0 {
		for _, seen := range k.small[:k.n] {
			if seen == key {
				return false
			}
		}
	}
	k.filter[word] |= bit
	k.small[k.n] = key
	k.n++
	return true
}
