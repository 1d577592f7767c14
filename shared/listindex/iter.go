package listindex

import (
	"bytes"
	"context"
)

// KeyRange is the keys from Lo (included) to Hi (excluded); a nil Hi has no end.
type KeyRange struct {
	Lo, Hi []byte
}

// DimRange is every key of dimension d.
func DimRange(d Dim) KeyRange { return KeyRange{Lo: []byte{byte(d)}, Hi: []byte{byte(d) + 1}} }

// ValueRange is every key of dimension d with value v.
func ValueRange(d Dim, v Value) KeyRange {
	p := Prefix(d, v)
	return KeyRange{Lo: p, Hi: prefixEnd(p)}
}

// prefixEnd is the first key after every key that starts with p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no end
}

// Iter yields the live keys of a range (those whose counts add up to more than zero), in key
// order or reversed. Next fetches what it needs (ctx bounds it) and returns false at the end or
// on an error, which Err then returns. Key is valid until the next call of Next.
type Iter interface {
	Next(ctx context.Context) bool
	Key() []byte
	Err() error
}

// SingleValue reports whether every key of r has one dimension and value (a value's range, or a
// window of it), so that its keys are in created order and the ranges of successive days follow
// each other (Concat). DimCreated's keys have no value: its ranges always are.
func SingleValue(r KeyRange) bool {
	if len(r.Lo) > 0 && Dim(r.Lo[0]) == DimCreated && len(r.Hi) > 0 && Dim(r.Hi[0]) <= DimCreated+1 {
		return true
	}
	if len(r.Lo) < 2 {
		return false
	}
	n, err := valueLen(r.Lo[1:])
	if err != nil || len(r.Lo) < 1+n {
		return false
	}
	p := r.Lo[:1+n]
	return r.Hi != nil && (bytes.HasPrefix(r.Hi, p) || bytes.Equal(r.Hi, prefixEnd(p)))
}
