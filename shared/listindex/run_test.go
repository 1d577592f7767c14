package listindex

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// countingSource is a run in memory that counts its reads.
type countingSource struct {
	b     Bytes
	reads int
}

func (s *countingSource) ReadAt(ctx context.Context, off, n int64) ([]byte, error) {
	s.reads++
	return s.b.ReadAt(ctx, off, n)
}

func randomKey(r *rand.Rand) []byte {
	d := Dim(1 + r.IntN(3))
	var v Value
	switch r.IntN(3) {
	case 0:
		v = Nil()
	case 1:
		v = Number(float64(r.IntN(20)) / 4)
	default:
		v = String(fmt.Sprintf("name-%d", r.IntN(8)))
	}
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(50)) * time.Second)
	return Key(d, v, at, fmt.Sprintf("id-%03d", r.IntN(300)))
}

// TestScanEqualsBruteForce builds random runs of +1/-1 entries (and some that cancel across
// runs, as updates do), and compares every scan, both ways, over random ranges, with the keys
// whose counts add up to more than zero.
func TestScanEqualsBruteForce(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		totals := map[string]int32{}
		var runs []*Run
		var sources []*countingSource
		for range 1 + r.IntN(6) {
			var es []Entry
			for range r.IntN(400) {
				k := randomKey(r)
				c := int32(1)
				if totals[string(k)] > 0 && r.IntN(3) == 0 {
					c = -1 // taken back
				}
				totals[string(k)] += c
				es = append(es, Entry{Key: k, Count: c})
			}
			src := &countingSource{b: encodeRun(es, 64+r.IntN(2048))}
			run, err := OpenRun(ctx, src, int64(len(src.b)))
			if err != nil {
				t.Fatal(err)
			}
			runs, sources = append(runs, run), append(sources, src)
		}
		var live [][]byte
		for k, c := range totals {
			if c > 0 {
				live = append(live, []byte(k))
			}
		}
		slices.SortFunc(live, bytes.Compare)
		for range 20 {
			rng := KeyRange{Lo: randomKey(r), Hi: randomKey(r)}
			switch r.IntN(4) {
			case 0:
				rng = DimRange(Dim(1 + r.IntN(3)))
			case 1:
				rng = ValueRange(DimName, String(fmt.Sprintf("name-%d", r.IntN(8))))
			case 2:
				rng.Hi = nil
			}
			var want [][]byte
			for _, k := range live {
				if bytes.Compare(k, rng.Lo) >= 0 && (rng.Hi == nil || bytes.Compare(k, rng.Hi) < 0) {
					want = append(want, k)
				}
			}
			for _, desc := range []bool{false, true} {
				var got [][]byte
				it := Scan(runs, rng, desc)
				for it.Next(ctx) {
					got = append(got, bytes.Clone(it.Key()))
				}
				if it.Err() != nil {
					t.Fatal(it.Err())
				}
				exp := slices.Clone(want)
				if desc {
					slices.Reverse(exp)
				}
				if !slices.EqualFunc(got, exp, bytes.Equal) {
					t.Fatalf("seed %d range %x..%x desc %v: %d keys, want %d", seed, rng.Lo, rng.Hi, desc, len(got), len(exp))
				}
			}
		}
		compacted, err := Compact(ctx, runs)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range compacted {
			if totals[string(e.Key)] != e.Count || e.Count == 0 {
				t.Fatalf("seed %d: compacted %x count %d, want %d", seed, e.Key, e.Count, totals[string(e.Key)])
			}
		}
		nonzero := 0
		for _, c := range totals {
			if c != 0 {
				nonzero++
			}
		}
		if len(compacted) != nonzero {
			t.Fatalf("seed %d: compaction kept %d keys, want %d", seed, len(compacted), nonzero)
		}
	}
}

// TestShortPageReadsLittle: the first keys of a large run cost one read past the open, whichever
// end they are at; a long walk reads blocks in growing spans.
func TestShortPageReadsLittle(t *testing.T) {
	ctx := context.Background()
	var es []Entry
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for i := range 200_000 {
		es = append(es, Entry{Key: Key(DimCost, Number(float64(i)), at, fmt.Sprintf("span-%06d", i)), Count: 1})
	}
	src := &countingSource{b: EncodeRun(es)}
	t.Logf("200,000 entries: %d bytes (%.1f per entry)", len(src.b), float64(len(src.b))/200_000)
	for _, desc := range []bool{false, true} {
		src.reads = 0
		run, err := OpenRun(ctx, src, int64(len(src.b)))
		if err != nil {
			t.Fatal(err)
		}
		it := Scan([]*Run{run}, DimRange(DimCost), desc)
		for range 50 {
			if !it.Next(ctx) {
				t.Fatal(it.Err())
			}
		}
		want := 2 // the tail, then one block
		if desc {
			want = 1 // the tail holds the last blocks
		}
		if src.reads != want {
			t.Fatalf("desc %v: 50 keys took %d reads, want %d", desc, src.reads, want)
		}
		n := 50
		for it.Next(ctx) {
			n++
		}
		if n != 200_000 || src.reads > 12 {
			t.Fatalf("desc %v: a walk of %d keys took %d reads", desc, n, src.reads)
		}
	}
}

func TestOpenRunRefusesDamage(t *testing.T) {
	ctx := context.Background()
	b := EncodeRun([]Entry{{Key: Key(DimName, String("a"), time.Unix(1, 0), "x"), Count: 1}})
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 0x5a
		run, err := OpenRun(ctx, Bytes(bad), int64(len(bad)))
		if err != nil {
			continue
		}
		it := Scan([]*Run{run}, KeyRange{}, false)
		for it.Next(ctx) {
		}
		_ = it.Err() // damage in a block may decode to other keys; it must not panic
	}
	if _, err := OpenRun(ctx, Bytes(b[:5]), 5); err == nil {
		t.Fatal("a truncated run opened")
	}
}

func TestConcatOpensLazily(t *testing.T) {
	ctx := context.Background()
	opened := 0
	day := func(ids ...string) func(context.Context) (Iter, error) {
		return func(ctx context.Context) (Iter, error) {
			opened++
			var es []Entry
			for _, id := range ids {
				es = append(es, Entry{Key: Key(DimCreated, Nil(), time.Unix(1, 0), id), Count: 1})
			}
			run, err := OpenRun(ctx, Bytes(EncodeRun(es)), int64(len(EncodeRun(es))))
			if err != nil {
				return nil, err
			}
			return Scan([]*Run{run}, DimRange(DimCreated), true), nil
		}
	}
	it := Concat(day("c", "d"), day(), day("a", "b"))
	var got []string
	for len(got) < 2 && it.Next(ctx) {
		p, _ := Parse(it.Key())
		got = append(got, p.ID)
	}
	if opened != 1 || !slices.Equal(got, []string{"d", "c"}) {
		t.Fatalf("opened %d for %v", opened, got)
	}
	for it.Next(ctx) {
		p, _ := Parse(it.Key())
		got = append(got, p.ID)
	}
	if opened != 3 || !slices.Equal(got, []string{"d", "c", "b", "a"}) {
		t.Fatalf("opened %d for %v", opened, got)
	}
}

func TestSingleValue(t *testing.T) {
	at := time.Unix(100, 0)
	for _, tt := range []struct {
		r    KeyRange
		want bool
	}{
		{ValueRange(DimName, String("a")), true},
		{KeyRange{Lo: At(DimName, String("a"), at), Hi: At(DimName, String("a"), at.Add(time.Hour))}, true},
		{DimRange(DimCreated), true},
		{KeyRange{Lo: At(DimCreated, Nil(), at), Hi: At(DimCreated, Nil(), at.Add(time.Hour))}, true},
		{DimRange(DimCost), false},
		{KeyRange{Lo: Prefix(DimCost, Number(1)), Hi: Prefix(DimCost, Number(2))}, false},
	} {
		if got := SingleValue(tt.r); got != tt.want {
			t.Errorf("SingleValue(%x..%x) = %v", tt.r.Lo, tt.r.Hi, got)
		}
	}
}

func benchEntries(n int) []Entry {
	es := make([]Entry, n)
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for i := range es {
		id := fmt.Sprintf("%032x", i*7919)
		es[i] = Entry{Key: Key(DimCost, Number(float64(i%1000)/1000), at.Add(time.Duration(i)*time.Millisecond), id), Count: 1}
	}
	return es
}

// BenchmarkEncodeRun is the consumer's cost of a stream batch's run (1,000 records of about 10
// keys each).
func BenchmarkEncodeRun(b *testing.B) {
	es := benchEntries(10_000)
	b.ReportAllocs()
	for b.Loop() {
		EncodeRun(es)
	}
}

// BenchmarkScanPage is a page of 50 keys read from 8 runs of 100,000 entries each.
func BenchmarkScanPage(b *testing.B) {
	ctx := context.Background()
	var srcs []Bytes
	for range 8 {
		srcs = append(srcs, Bytes(EncodeRun(benchEntries(100_000))))
	}
	b.ReportAllocs()
	for b.Loop() {
		var runs []*Run
		for _, s := range srcs {
			r, err := OpenRun(ctx, s, int64(len(s)))
			if err != nil {
				b.Fatal(err)
			}
			runs = append(runs, r)
		}
		it := Scan(runs, DimRange(DimCost), true)
		for range 50 {
			it.Next(ctx)
		}
	}
}
