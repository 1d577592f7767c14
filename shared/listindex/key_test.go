package listindex

import (
	"bytes"
	"cmp"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// rec is a value with the tie-breaks of the lists' order (shared/trace.page).
type rec struct {
	v       any // nil, float64 or string
	created time.Time
	id      string
}

func (r rec) key() []byte {
	var v Value
	switch x := r.v.(type) {
	case nil:
		v = Nil()
	case float64:
		v = Number(x)
	case string:
		v = String(x)
	}
	return Key(DimCost, v, r.created, r.id)
}

// compareRecs is the lists' ascending order: value (nil first), created_at, id.
func compareRecs(a, b rec) int {
	r := 0
	switch {
	case a.v == nil && b.v == nil:
	case a.v == nil:
		return -1
	case b.v == nil:
		return 1
	default:
		switch x := a.v.(type) {
		case float64:
			r = cmp.Compare(x, b.v.(float64))
		case string:
			r = strings.Compare(x, b.v.(string))
		}
	}
	if r == 0 {
		r = a.created.Compare(b.created)
	}
	if r == 0 {
		r = strings.Compare(a.id, b.id)
	}
	return r
}

func FuzzKeyOrder(f *testing.F) {
	f.Add(1.5, -2.0, "a", "a\x00", int64(5), int64(5), "x", "x\x00y", false)
	f.Add(0.0, math.Copysign(0, -1), "", "\x00", int64(-1), int64(1), "", "\xff", true)
	f.Add(math.Inf(1), 1e300, "ab", "a", int64(1e15), int64(-1e15), "id", "id", false)
	f.Fuzz(func(t *testing.T, fa, fb float64, sa, sb string, ca, cb int64, ia, ib string, strs bool) {
		if math.IsNaN(fa) || math.IsNaN(fb) {
			return
		}
		a := rec{v: fa, created: time.UnixMicro(ca).UTC(), id: ia}
		b := rec{v: fb, created: time.UnixMicro(cb).UTC(), id: ib}
		if strs {
			a.v, b.v = sa, sb
		}
		if fa == 1 { // and nil values
			a.v = nil
		}
		want := compareRecs(a, b)
		if want == 0 && !bytes.Equal(a.key(), b.key()) && !(a.v == 0.0 && b.v == 0.0) {
			t.Fatalf("equal records, different keys: %+v %+v", a, b)
		}
		if got := bytes.Compare(a.key(), b.key()); got != want {
			t.Fatalf("order of %+v and %+v: keys %d, lists %d", a, b, got, want)
		}
		for _, r := range []rec{a, b} {
			p, err := Parse(r.key())
			if err != nil {
				t.Fatal(err)
			}
			if p.Dim != DimCost || !p.Created.Equal(r.created) || p.ID != r.id || !bytes.HasPrefix(r.key(), Prefix(DimCost, p.Value)) {
				t.Fatalf("parse %+v: %+v", r, p)
			}
			switch x := r.v.(type) {
			case float64:
				if f, ok := p.Value.Float(); !ok || f != x {
					t.Fatalf("number %v read back as %v", x, f)
				}
			case string:
				if s, ok := p.Value.Str(); !ok || s != x {
					t.Fatalf("string %q read back as %q", x, s)
				}
			case nil:
				if !p.Value.IsNil() {
					t.Fatal("nil read back as a value")
				}
			}
		}
	})
}

func TestPrefixAndWindow(t *testing.T) {
	day := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	in := Key(DimName, String("a"), day.Add(time.Hour), "s1")
	other := Key(DimName, String("ab"), day.Add(time.Hour), "s1")
	if !bytes.HasPrefix(in, Prefix(DimName, String("a"))) || bytes.HasPrefix(other, Prefix(DimName, String("a"))) {
		t.Fatal("a value's prefix holds its keys and only them")
	}
	if bytes.Compare(At(DimName, String("a"), day), in) > 0 || bytes.Compare(At(DimName, String("a"), day.Add(2*time.Hour)), in) <= 0 {
		t.Fatal("At bounds a value's window")
	}
	if bytes.Compare(TagValue("a", "b=c").enc, TagValue("a=b", "c").enc) == 0 {
		t.Fatal("tag values must not collide")
	}
}

func TestRanges(t *testing.T) {
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	in := func(r KeyRange, k []byte) bool {
		return bytes.Compare(k, r.Lo) >= 0 && (r.Hi == nil || bytes.Compare(k, r.Hi) < 0)
	}
	k := Key(DimName, String("a"), at, "x")
	if !in(ValueRange(DimName, String("a")), k) || in(ValueRange(DimName, String("b")), k) || !in(DimRange(DimName), k) || in(DimRange(DimStatus), k) {
		t.Fatal("ranges hold their keys and only them")
	}
}

// TestBand: a band b holds [4^b, 4^(b+1)), 0 has its own, the ends hold what is beyond them,
// and bands keep the numbers' order.
func TestBand(t *testing.T) {
	for _, c := range []struct {
		v    float64
		band int
	}{
		{0, BandZero}, {-1, BandZero}, {math.NaN(), BandZero},
		{1, 0}, {3.999, 0}, {4, 1}, {15.9, 1}, {16, 2}, {0.25, -1}, {0.2499, -2}, {0.0625, -2},
		{math.Pow(4, BandMin), BandMin}, {1e-300, BandMin}, {math.SmallestNonzeroFloat64, BandMin},
		{math.Pow(4, BandMax), BandMax}, {1e300, BandMax}, {math.Inf(1), BandMax},
	} {
		if got := Band(c.v); got != c.band {
			t.Errorf("Band(%v) = %d, want %d", c.v, got, c.band)
		}
	}
	r := rand.New(rand.NewPCG(4, 4))
	for range 10_000 {
		a, b := math.Exp(r.NormFloat64()*20), math.Exp(r.NormFloat64()*20)
		if a > b {
			a, b = b, a
		}
		if Band(a) > Band(b) {
			t.Fatalf("Band(%v) = %d above Band(%v) = %d", a, Band(a), b, Band(b))
		}
		if b := Band(a); b > BandMin && b < BandMax && (a < math.Pow(4, float64(b)) || a >= math.Pow(4, float64(b+1))) {
			t.Fatalf("%v is not in band %d", a, b)
		}
	}
}

// TestBandKey: a band key reads back with the number it was written for, sorts with its band's
// keys by created_at, then id, whatever the number, and After a record's key of its band (a
// cursor) passes over its band key too; a number after any other key is refused.
func TestBandKey(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	k := BandKey(DimCostBand, 0.021, t0, "s1")
	p, err := Parse(k)
	if err != nil || p.Dim != DimCostBand || p.ID != "s1" || !p.Created.Equal(t0) || !p.HasOf || p.Of != 0.021 {
		t.Fatalf("Parse(BandKey) = %+v, %v", p, err)
	}
	if b, _ := p.Value.Float(); int(b) != Band(0.021) {
		t.Fatalf("band %v, want %d", b, Band(0.021))
	}
	if p, err := Parse(Key(DimCostBand, BandValue(Band(0.021)), t0, "s1")); err != nil || p.HasOf {
		t.Fatalf("a band key without its number: %+v, %v", p, err)
	}
	// 0.03 and 0.02 share a band: their keys sort by created_at, then id, not by the number.
	keys := [][]byte{BandKey(DimCostBand, 0.03, t0, "a"), BandKey(DimCostBand, 0.02, t0, "b"), BandKey(DimCostBand, 0.03, t0.Add(time.Microsecond), "a")}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			t.Fatalf("key %d does not sort before key %d", i-1, i)
		}
	}
	plain := Key(DimCostBand, BandValue(Band(0.03)), t0, "a")
	if after := After(plain); bytes.Compare(after, keys[0]) <= 0 || bytes.Compare(after, keys[1]) > 0 {
		t.Fatal("After a record's key passes over its band key, and no other record's")
	}
	for _, bad := range [][]byte{
		append(Key(DimCost, Number(1), t0, "a"), Number(1).enc...), // a number after a key of another dimension
		append(bytes.Clone(plain), Number(1).enc[:5]...),           // cut short
		append(bytes.Clone(plain), String("x").enc...),             // not a number
	} {
		if _, err := Parse(bad); err == nil {
			t.Fatalf("Parse(%x) accepted", bad)
		}
	}
}
