package trace

import (
	"bytes"
	"maps"
	"slices"
	"time"

	"github.com/plumehq/plume/shared/listindex"
)

// The list index's keys of spans, traces and sessions (package listindex): what each record is
// found and ordered by. The values are those the lists sort and filter on (Queries), so that an
// index range in key order is the list's answer in its order.

// Tag entries are bounded: a record's first maxIndexedTags tags in key order whose key and value
// take at most maxIndexedTagBytes. A record with more, or longer, tags has one more entry, in
// DimTag with value Nil (TagsCut): a tag filter reads it too and matches those records in full.
const (
	maxIndexedTags     = 32
	maxIndexedTagBytes = 256
)

// TagsCut is the DimTag value of the entry of a record whose tags are not all indexed.
var TagsCut = listindex.Nil()

// SpanIndexKeys are the index keys of a span, from its summary. A summary's cut name, error
// code or tags are indexed as cut; a filter on them confirms with the full span (confirm).
func SpanIndexKeys(s Summary) [][]byte {
	key := func(d listindex.Dim, v listindex.Value) []byte { return listindex.Key(d, v, s.CreatedAt, s.SpanID) }
	keys := [][]byte{
		key(listindex.DimCreated, listindex.Nil()),
		key(listindex.DimStarted, listindex.Time(s.StartedAt)),
		key(listindex.DimName, listindex.String(s.Name)),
		key(listindex.DimStatus, listindex.String(s.Status)),
		key(listindex.DimDuration, listindex.OptNumber(s.DurationMS)),
		key(listindex.DimCost, listindex.OptNumber(s.Cost)),
		key(listindex.DimKind, listindex.String(s.Kind)),
		key(listindex.DimParent, listindex.String(s.ParentSpanID)),
		key(listindex.DimError, listindex.Bool(s.HasError)),
	}
	if s.ErrorCode != "" {
		keys = append(keys, key(listindex.DimErrorCode, listindex.String(s.ErrorCode)))
	}
	keys = append(keys, bandKeys(s.DurationMS, s.Cost, s.CreatedAt, s.SpanID)...)
	return append(keys, tagKeys(s.Tags, s.TagsCut, key)...)
}

// TraceIndexKeys are the index keys of a trace.
func TraceIndexKeys(t Trace) [][]byte {
	key := func(d listindex.Dim, v listindex.Value) []byte { return listindex.Key(d, v, t.CreatedAt, t.ID) }
	keys := [][]byte{
		key(listindex.DimCreated, listindex.Nil()),
		key(listindex.DimStarted, listindex.OptTime(t.StartedAt)),
		key(listindex.DimName, listindex.String(t.Name)),
		key(listindex.DimStatus, listindex.String(t.Status)),
		key(listindex.DimSpanCount, listindex.Number(float64(t.SpanCount))),
		key(listindex.DimDuration, listindex.OptNumber(t.DurationMS)),
		key(listindex.DimCost, listindex.Number(t.Cost)),
		key(listindex.DimError, listindex.Bool(t.ErrorCount > 0)),
	}
	keys = append(keys, bandKeys(t.DurationMS, &t.Cost, t.CreatedAt, t.ID)...)
	return append(keys, tagKeys(t.Tags, false, key)...)
}

// SessionIndexKeys are the index keys of a session.
func SessionIndexKeys(s Session) [][]byte {
	key := func(d listindex.Dim, v listindex.Value) []byte { return listindex.Key(d, v, s.CreatedAt, s.ID) }
	keys := [][]byte{
		key(listindex.DimCreated, listindex.Nil()),
		key(listindex.DimName, listindex.OptString(s.Name)),
		key(listindex.DimTraceCount, listindex.Number(float64(s.TraceCount))),
		key(listindex.DimCost, listindex.Number(s.Cost)),
		key(listindex.DimDuration, listindex.OptNumber(s.Duration)),
		key(listindex.DimError, listindex.Bool(s.ErrorCount > 0)),
	}
	keys = append(keys, bandKeys(s.Duration, &s.Cost, s.CreatedAt, s.ID)...)
	return append(keys, tagKeys(s.Tags, false, key)...)
}

// bandKeys are the keys of a record's duration and cost bands (listindex.BandKey: each with
// its number), for those it has.
func bandKeys(duration, cost *float64, created time.Time, id string) [][]byte {
	var keys [][]byte
	if duration != nil {
		keys = append(keys, listindex.BandKey(listindex.DimDurationBand, *duration, created, id))
	}
	if cost != nil {
		keys = append(keys, listindex.BandKey(listindex.DimCostBand, *cost, created, id))
	}
	return keys
}

// tagKeys are the DimTag keys of tags: the bounded ones, and TagsCut when some are not (or cut
// says the record's tags were cut before).
func tagKeys(tags map[string]string, cut bool, key func(listindex.Dim, listindex.Value) []byte) [][]byte {
	var keys [][]byte
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		v := tags[k]
		if len(keys) == maxIndexedTags || len(k)+len(v) > maxIndexedTagBytes {
			cut = true
			continue
		}
		keys = append(keys, key(listindex.DimTag, listindex.TagValue(k, v)))
	}
	if cut {
		keys = append(keys, key(listindex.DimTag, TagsCut))
	}
	return keys
}

// IndexDiff is the change from a record's keys old to its keys new: -1 for each key only old
// has, +1 for each only new has. A record created has no old keys; one deleted, no new.
func IndexDiff(old, new [][]byte) []listindex.Entry {
	var out []listindex.Entry
	for _, k := range old {
		if !slices.ContainsFunc(new, func(n []byte) bool { return bytes.Equal(n, k) }) {
			out = append(out, listindex.Entry{Key: k, Count: -1})
		}
	}
	for _, k := range new {
		if !slices.ContainsFunc(old, func(o []byte) bool { return bytes.Equal(o, k) }) {
			out = append(out, listindex.Entry{Key: k, Count: 1})
		}
	}
	return out
}
