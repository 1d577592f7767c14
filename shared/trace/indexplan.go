package trace

import (
	"errors"
	"maps"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/listindex"
	"github.com/plumehq/plume/shared/textcut"
)

// How a list query (GET /spans, /traces, /sessions without a direct look-up) is read from the
// list index (package listindex): PlanSpans, PlanTraces and PlanSessions choose one dimension
// and the key ranges of it whose keys, read in order, are the answer's candidates in the
// answer's order; the executor (indexquery.go) reads them, matches what the ranges do not
// decide and pages. docs/tracing.md ("List index: plans and cost") states the rules and the
// cost of each shape of query.

// IndexPlan is how one list query reads the index.
type IndexPlan struct {
	Kind listindex.Kind
	// From and To are the created_at window [From, To): the day partitions a scan reads. A
	// key created outside it is passed over (its created_at is in the key: no record is read).
	From, To time.Time
	// Dim is the dimension every range is of.
	Dim    listindex.Dim
	Ranges []PlanRange
	// Merge is set when the ranges are read together and merged by (created_at, id): the
	// values of an equality filter (several names, a tag and TagsCut), each a run of keys in
	// created order. Without it the plan has one range, read in key order.
	Merge bool
	// Desc reads the ranges backwards: newest first, or the sort key descending.
	Desc bool
	// Residual names the filters the ranges do not decide, which each record read is matched
	// on: api parameter names, "duration" or "cost" for a NaN bound, "tag:KEY" for a tag.
	Residual []string
	// Within are the number ranges (duration, cost) the plan's ranges do not bound. The
	// executor decides them on the index's own keys of their dimension, a day partition at a
	// time (withinSets), so a record out of them is passed over without being read.
	Within []WithinRange
}

// WithinRange is a number range a plan decides on the keys of its dimension: a record is in
// it when its key of Dim is in the range (nil values are in no range).
type WithinRange struct {
	Name string // "duration" or "cost"
	Dim  listindex.Dim
	listindex.KeyRange
}

// PlanRange is one range of keys of a plan.
type PlanRange struct {
	listindex.KeyRange
	// Value is the value of the plan's dimension that every key of the range has (Merge
	// plans), by which a cursor finds its place in each range.
	Value listindex.Value
	// Exact is set when every key of the range created in the window names a record that
	// matches the whole query but the plan's Within ranges: such keys (in them) are counted
	// (an offset skipped) without reading their records. A range that may hold other keys
	// (TagsCut, a cut name's keys, residual filters) is not exact: its records are read and
	// matched.
	Exact bool
	// InWithin is set when every key of the range is in the plan's Within ranges (a band
	// strictly inside a range): its keys are not decided on them.
	InWithin bool
}

// Exact reports whether every range of p is exact and p has no Within range: the page costs
// its keys, and reads only the records it answers.
func (p IndexPlan) Exact() bool {
	if len(p.Within) > 0 {
		return false
	}
	for _, r := range p.Ranges {
		if !r.Exact {
			return false
		}
	}
	return true
}

// errDirect is the error of planning a direct look-up (id, trace_id, session_id), which the
// time walk's code answers by its ids, not the index.
var errDirect = errors.New("trace: a direct look-up (id, trace_id or session_id) is read by id, not planned")

// PlanSpans is the plan of a span query. now is the end of the default window (no
// created_before) and, LookbackDays before it, its start (no created_after); bands says the
// index holds every record's duration and cost bands in the window (RangeBandsSince). An
// unknown sort key is CodeInvalid; a direct look-up is not planned (an error).
func PlanSpans(sq SpanQuery, now time.Time, bands bool) (IndexPlan, error) {
	from, to := windowOf(sq.Common, now)
	return planSpans(sq, from, to, bands)
}

// PlanTraces is the plan of a trace query, as PlanSpans.
func PlanTraces(tq TraceQuery, now time.Time, bands bool) (IndexPlan, error) {
	from, to := windowOf(tq.Common, now)
	return planTraces(tq, from, to, bands)
}

// PlanSessions is the plan of a session query, as PlanSpans.
func PlanSessions(sq SessionQuery, now time.Time, bands bool) (IndexPlan, error) {
	from, to := windowOf(sq.Common, now)
	return planSessions(sq, from, to, bands)
}

// windowOf is the created_at window of a query: [created_after, created_before), without
// created_before up to now, without created_after LookbackDays before its end (as the time
// walk reads). Both are rounded up to the microsecond, the index's resolution, which keeps the
// same records (stored times are whole microseconds).
func windowOf(c Common, now time.Time) (from, to time.Time) {
	to = now
	if c.CreatedBefore != nil {
		to = *c.CreatedBefore
	}
	from = to.AddDate(0, 0, -LookbackDays)
	if c.CreatedAfter != nil {
		from = *c.CreatedAfter
	}
	return ceilMicro(from), ceilMicro(to)
}

func ceilMicro(t time.Time) time.Time {
	t = t.UTC()
	if c := t.Truncate(time.Microsecond); c.Before(t) {
		return c.Add(time.Microsecond)
	}
	return t.Truncate(time.Microsecond)
}

// The sort keys of the lists (api.SpanList.Sorts, ...) and the dimension of each. A sort on
// DimCreated (sessions' created_at) is the default order.
var sortDims = map[listindex.Kind]map[string]listindex.Dim{
	listindex.Spans: {
		"started_at": listindex.DimStarted, "name": listindex.DimName, "status": listindex.DimStatus,
		"duration_ms": listindex.DimDuration, "cost": listindex.DimCost, "kind": listindex.DimKind,
	},
	listindex.Traces: {
		"started_at": listindex.DimStarted, "name": listindex.DimName, "status": listindex.DimStatus,
		"span_count": listindex.DimSpanCount, "duration_ms": listindex.DimDuration, "cost": listindex.DimCost,
	},
	listindex.Sessions: {
		"created_at": listindex.DimCreated, "name": listindex.DimName, "trace_count": listindex.DimTraceCount,
		"cost": listindex.DimCost, "duration": listindex.DimDuration,
	},
}

// The ranks of equality filters: without sort_by a plan reads the filter of the lowest rank
// the query has, the others are residual. A fixed order of how few records each usually
// selects: an error code or a name picks out a kind of call; a parent its few children; a tag
// a slice of the traffic; has_error=true or status the failures; root spans one per trace; a
// kind or has_error=false most of the project.
const (
	rankErrorCodes = iota
	rankNames
	rankParent
	rankTag
	rankTagCut // a tag too long to be indexed: only the TagsCut marker's keys
	rankStatus
	rankHasError
	rankRoot
	rankKind
	rankNoError
)

// filter is one filter of a query as a plan sees it: the values of a dimension it selects
// (an equality filter), or a number range (duration, cost) only a sort on its dimension reads.
type filter struct {
	name   string
	rank   int
	dim    listindex.Dim
	values []planValue
	// lo and hi bound a number range (nil: open).
	lo, hi *float64
}

// planValue is a value of an equality filter's dimension; exact when every record with that
// value matches the filter (no cut value shares its keys).
type planValue struct {
	v     listindex.Value
	exact bool
}

func eq(name string, rank int, dim listindex.Dim, values ...planValue) filter {
	return filter{name: name, rank: rank, dim: dim, values: values}
}

func exactValue(v listindex.Value) planValue { return planValue{v, true} }

// cutValues are the values of a filter on a field the summary cuts to bound bytes (a span's
// name, error code): each value as the summary would hold it. A value the summary may hold cut
// (textcut.Cut keeps at least bound-3 bytes) is not exact: its keys may be a longer value's.
func cutValues(values []string, bound int) []planValue {
	var out []planValue
	for _, s := range values {
		short, _ := textcut.Cut(s, bound)
		out = addValue(out, planValue{listindex.String(short), len(short) <= bound-utf8.UTFMax})
	}
	return out
}

// addValue adds v to values once; a value given twice is exact only if both are.
func addValue(values []planValue, v planValue) []planValue {
	for i, w := range values {
		if w.v.Equal(v.v) {
			values[i].exact = w.exact && v.exact
			return values
		}
	}
	return append(values, v)
}

// tagFilters are the equality filters of tags: a tag's own keys (when it can be indexed) and
// the TagsCut marker's, whose records must be matched in full. Tags that can be indexed come
// first (by key), as the marker alone reads every record whose tags were cut.
func tagFilters(tags map[string]string) []filter {
	var out []filter
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		v := tags[k]
		f := eq("tag:"+k, rankTag, listindex.DimTag, planValue{TagsCut, false})
		if len(k)+len(v) <= maxIndexedTagBytes {
			f.values = []planValue{exactValue(listindex.TagValue(k, v)), {TagsCut, false}}
		} else {
			f.rank = rankTagCut
		}
		out = append(out, f)
	}
	return out
}

// commonFilters are the filters every list shares, names aside (their values differ by kind).
func commonFilters(c Common) []filter {
	out := tagFilters(c.Tags)
	if c.HasError != nil {
		rank := rankNoError
		if *c.HasError {
			rank = rankHasError
		}
		out = append(out, eq("has_error", rank, listindex.DimError, exactValue(listindex.Bool(*c.HasError))))
	}
	if c.DurationMin != nil || c.DurationMax != nil {
		out = append(out, filter{name: "duration", dim: listindex.DimDuration, lo: c.DurationMin, hi: c.DurationMax})
	}
	if c.CostMin != nil || c.CostMax != nil {
		out = append(out, filter{name: "cost", dim: listindex.DimCost, lo: c.CostMin, hi: c.CostMax})
	}
	return out
}

func planSpans(sq SpanQuery, from, to time.Time, bands bool) (IndexPlan, error) {
	if sq.ID != "" || sq.TraceID != "" || sq.SessionID != "" {
		return IndexPlan{}, errDirect
	}
	fs := commonFilters(sq.Common)
	if len(sq.Names) > 0 {
		fs = append(fs, eq("names", rankNames, listindex.DimName, cutValues(sq.Names, summaryNameBytes)...))
	}
	if len(sq.ErrorCodes) > 0 {
		fs = append(fs, eq("error_codes", rankErrorCodes, listindex.DimErrorCode, cutValues(sq.ErrorCodes, summaryErrorCodeBytes)...))
	}
	if sq.ParentSpanID != nil {
		rank := rankParent
		if *sq.ParentSpanID == "" {
			rank = rankRoot
		}
		fs = append(fs, eq("parent_span_id", rank, listindex.DimParent, exactValue(listindex.String(*sq.ParentSpanID))))
	}
	if sq.Kind != "" {
		fs = append(fs, eq("span_kind", rankKind, listindex.DimKind, exactValue(listindex.String(sq.Kind))))
	}
	return plan(listindex.Spans, sq.Common, from, to, fs, bands)
}

func planTraces(tq TraceQuery, from, to time.Time, bands bool) (IndexPlan, error) {
	if tq.ID != "" || tq.SessionID != "" {
		return IndexPlan{}, errDirect
	}
	fs := commonFilters(tq.Common)
	if len(tq.Names) > 0 {
		var values []planValue
		for _, n := range tq.Names {
			values = addValue(values, exactValue(listindex.String(n)))
		}
		fs = append(fs, eq("names", rankNames, listindex.DimName, values...))
	}
	if tq.Status != "" {
		fs = append(fs, eq("status", rankStatus, listindex.DimStatus, exactValue(listindex.String(tq.Status))))
	}
	return plan(listindex.Traces, tq.Common, from, to, fs, bands)
}

func planSessions(sq SessionQuery, from, to time.Time, bands bool) (IndexPlan, error) {
	if sq.ID != "" {
		return IndexPlan{}, errDirect
	}
	fs := commonFilters(sq.Common)
	if len(sq.Names) > 0 {
		var values []planValue
		for _, n := range sq.Names {
			if n == "" { // a session without a name matches "" (SessionQuery.match)
				values = addValue(values, exactValue(listindex.Nil()))
			}
			values = addValue(values, exactValue(listindex.String(n)))
		}
		fs = append(fs, eq("names", rankNames, listindex.DimName, values...))
	}
	return plan(listindex.Sessions, sq.Common, from, to, fs, bands)
}

// plan chooses how to read a query of kind with filters fs in the window [from, to):
//
//   - sort_by: the sort key's dimension, whole (or the part a duration or cost range on the
//     same dimension bounds), in the sort order; every other filter is residual.
//   - else the equality filter of the lowest rank: its values' ranges, each cut to the window
//     (listindex.At), merged by (created_at, id); the other filters are residual.
//   - else, when the only filter is a duration or cost range and the index has the bands of
//     the window's records (bands), the bands the range covers (bandRanges), merged by
//     (created_at, id); the range is a Within range for the bands at its bounds.
//   - else DimCreated over the window.
//
// Duration and cost ranges the read does not bound are Within ranges, never residual.
func plan(kind listindex.Kind, c Common, from, to time.Time, fs []filter, bands bool) (IndexPlan, error) {
	p := IndexPlan{Kind: kind, From: from, To: to, Desc: !c.Ascending, Dim: listindex.DimCreated}
	if c.SortBy != "" {
		dim, ok := sortDims[kind][c.SortBy]
		if !ok {
			return IndexPlan{}, errs.Invalid("sort_by must be one of %v, not %q", slices.Sorted(maps.Keys(sortDims[kind])), c.SortBy)
		}
		if dim != listindex.DimCreated {
			p.Dim = dim
			r := listindex.DimRange(dim)
			for _, f := range fs {
				if f.dim == dim && f.values == nil && numberRange(&r, dim, f.lo, f.hi) {
					fs = without(fs, f.name)
					break
				}
			}
			fs = p.takeWithin(fs)
			p.Ranges = []PlanRange{{KeyRange: r, Exact: len(fs) == 0}}
			p.Residual = names(fs)
			return p, nil
		}
	}
	if r, ok := bandRange(fs); ok && bands {
		p.takeWithin(fs) // the range: the bands at its bounds are decided on it
		p.Dim, p.Merge = bandDims[r.dim], true
		p.Ranges = bandRanges(r, from, to)
		return p, nil
	}
	fs = p.takeWithin(fs)
	var chosen *filter
	for i, f := range fs {
		if f.values != nil && (chosen == nil || f.rank < chosen.rank) {
			chosen = &fs[i]
		}
	}
	if chosen == nil {
		p.Ranges = []PlanRange{{
			KeyRange: listindex.KeyRange{Lo: listindex.At(p.Dim, listindex.Nil(), from), Hi: listindex.At(p.Dim, listindex.Nil(), to)},
			Value:    listindex.Nil(), Exact: len(fs) == 0,
		}}
		p.Residual = names(fs)
		return p, nil
	}
	residual := without(fs, chosen.name)
	p.Dim, p.Merge, p.Residual = chosen.dim, true, names(residual)
	for _, v := range chosen.values {
		p.Ranges = append(p.Ranges, PlanRange{
			KeyRange: listindex.KeyRange{Lo: listindex.At(chosen.dim, v.v, from), Hi: listindex.At(chosen.dim, v.v, to)},
			Value:    v.v, Exact: v.exact && len(residual) == 0,
		})
	}
	return p, nil
}

// bandDims are the band dimensions of the range dimensions.
var bandDims = map[listindex.Dim]listindex.Dim{listindex.DimDuration: listindex.DimDurationBand, listindex.DimCost: listindex.DimCostBand}

// bandRange is the range of a query in time order whose only filter is one duration or cost
// range (without a NaN bound), which its plan reads by the range's bands.
func bandRange(fs []filter) (filter, bool) {
	if len(fs) != 1 {
		return filter{}, false
	}
	f := fs[0]
	if r := listindex.DimRange(f.dim); f.values != nil || bandDims[f.dim] == 0 || !numberRange(&r, f.dim, f.lo, f.hi) {
		return filter{}, false
	}
	return f, true
}

// bandRanges are the bands the range f covers, each cut to the window [from, to) (a merge of
// runs of one value, in created order), all exact: nothing else is filtered. A band strictly
// inside the range holds only numbers in it (InWithin); one at a bound the range has may hold
// others, which the plan's Within range (f itself) decides by the number each key carries
// (listindex.BandKey; bandKeyWithin), or, for a key without it, on the range's keys of the
// value's dimension or on the records, whichever costs less (withinSets), so that a record out
// of it is passed over without being read.
func bandRanges(f filter, from, to time.Time) []PlanRange {
	if f.lo != nil && f.hi != nil && *f.lo > *f.hi {
		return nil
	}
	first, last := listindex.BandZero, listindex.BandMax
	if f.lo != nil {
		first = listindex.Band(*f.lo)
	}
	if f.hi != nil {
		last = listindex.Band(*f.hi)
	}
	dim := bandDims[f.dim]
	var out []PlanRange
	for b := first; b <= last; b++ { // BandZero, then BandMin up
		v := listindex.BandValue(b)
		out = append(out, PlanRange{
			KeyRange: listindex.KeyRange{Lo: listindex.At(dim, v, from), Hi: listindex.At(dim, v, to)},
			Value:    v,
			Exact:    true,
			InWithin: (b != first || f.lo == nil) && (b != last || f.hi == nil),
		})
	}
	return out
}

// takeWithin moves the number ranges of fs to p.Within and answers the other filters. A range
// with a NaN bound stays residual (it matches no record).
func (p *IndexPlan) takeWithin(fs []filter) []filter {
	var rest []filter
	for _, f := range fs {
		r := listindex.DimRange(f.dim)
		if f.values == nil && numberRange(&r, f.dim, f.lo, f.hi) {
			p.Within = append(p.Within, WithinRange{Name: f.name, Dim: f.dim, KeyRange: r})
			continue
		}
		rest = append(rest, f)
	}
	return rest
}

// numberRange narrows r, the whole of dimension dim, to the keys whose value is a number in
// [lo, hi] (nil: open); false when a bound is NaN (the range is then left residual, and
// matches nothing).
func numberRange(r *listindex.KeyRange, dim listindex.Dim, lo, hi *float64) bool {
	if lo != nil && math.IsNaN(*lo) || hi != nil && math.IsNaN(*hi) {
		return false
	}
	r.Lo = listindex.Prefix(dim, listindex.Number(math.Inf(-1))) // numbers only: nil values are out of any range
	if lo != nil {
		r.Lo = listindex.Prefix(dim, listindex.Number(*lo))
	}
	if hi != nil {
		r.Hi = listindex.ValueRange(dim, listindex.Number(*hi)).Hi
	}
	return true
}

func without(fs []filter, name string) []filter {
	return slices.DeleteFunc(slices.Clone(fs), func(f filter) bool { return f.name == name })
}

func names(fs []filter) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.name)
	}
	return out
}
