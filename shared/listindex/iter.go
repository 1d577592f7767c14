package listindex

import "context"

// KeyRange is the keys from Lo (included) to Hi (excluded); a nil Hi is the end of Lo's
// dimension.
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
