package trace

import (
	"bytes"
	"maps"
	"testing"
	"time"

	"github.com/plumehq/plume/shared/listindex"
)

func TestIndexDiff(t *testing.T) {
	at := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	cost := 0.5
	old := Summary{SpanID: "s1", Name: "chat", Kind: "llm", CreatedAt: at, StartedAt: at, Cost: &cost}
	updated := old
	updated.Cost = new(0.75)
	d := IndexDiff(SpanIndexKeys(old), SpanIndexKeys(updated))
	if len(d) != 4 {
		t.Fatalf("a change of cost within its band changes its cost key and its band key's number: %d entries", len(d))
	}
	for _, e := range d {
		p, err := listindex.Parse(e.Key)
		if err != nil || p.ID != "s1" || p.Dim != listindex.DimCost && p.Dim != listindex.DimCostBand {
			t.Fatalf("entry %+v: %+v %v", e, p, err)
		}
		want, got := 0.75, p.Of
		if e.Count < 0 {
			want = 0.5
		}
		if p.Dim == listindex.DimCost {
			got, _ = p.Value.Float()
		} else if b, _ := p.Value.Float(); !p.HasOf || int(b) != listindex.Band(0.5) {
			t.Fatalf("band key %+v", p)
		}
		if got != want {
			t.Fatalf("count %d on cost %v in %s", e.Count, got, p.Dim)
		}
	}
	updated.Cost = new(1.5) // band 0, from -1
	bands := map[float64]int32{}
	for _, e := range IndexDiff(SpanIndexKeys(old), SpanIndexKeys(updated)) {
		if p, _ := listindex.Parse(e.Key); p.Dim == listindex.DimCostBand {
			f, _ := p.Value.Float()
			bands[f] = e.Count
		}
	}
	if want := map[float64]int32{-1: -1, 0: 1}; !maps.Equal(bands, want) {
		t.Fatalf("a change of cost to another band moves its band key: %v, want %v", bands, want)
	}
	if len(IndexDiff(SpanIndexKeys(old), SpanIndexKeys(old))) != 0 {
		t.Fatal("an unchanged record changes nothing")
	}
	if n := len(IndexDiff(nil, SpanIndexKeys(old))); n != len(SpanIndexKeys(old)) {
		t.Fatalf("a new record adds each key: %d", n)
	}
}

func TestTagKeysBounded(t *testing.T) {
	tags := map[string]string{}
	for i := range 40 {
		tags[string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	tags["long"] = string(bytes.Repeat([]byte("x"), 300))
	keys := TraceIndexKeys(Trace{ID: "t", Tags: tags})
	var tagKeys, cut int
	for _, k := range keys {
		p, _ := listindex.Parse(k)
		if p.Dim == listindex.DimTag {
			tagKeys++
			if p.Value.Equal(TagsCut) {
				cut++
			}
		}
	}
	if tagKeys != maxIndexedTags+1 || cut != 1 {
		t.Fatalf("%d tag keys, %d cut markers", tagKeys, cut)
	}
}
