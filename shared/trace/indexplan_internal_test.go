package trace

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/listindex"
)

var planNow = time.Date(2026, 3, 31, 12, 30, 0, 500, time.UTC) // 500 ns: the window rounds up

// planWant is what a table test checks of a plan: its dimension, each range's value (the
// window's keys of it, or the whole dimension) and exactness, and the rest.
type planWant struct {
	dim      listindex.Dim
	ranges   []listindex.KeyRange
	exact    []bool
	merge    bool
	desc     bool
	residual []string
	within   []string
}

func TestPlans(t *testing.T) {
	from := time.Date(2026, 3, 1, 12, 30, 0, 1000, time.UTC) // planNow - 30 days, rounded up to the µs
	to := time.Date(2026, 3, 31, 12, 30, 0, 1000, time.UTC)
	after := time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)
	window := func(d listindex.Dim, v listindex.Value) listindex.KeyRange {
		return listindex.KeyRange{Lo: listindex.At(d, v, from), Hi: listindex.At(d, v, to)}
	}
	created := window(listindex.DimCreated, listindex.Nil())
	str := listindex.String
	long := strings.Repeat("n", summaryNameBytes) + "-long"
	code := strings.Repeat("c", summaryErrorCodeBytes-utf8.UTFMax+1) // may be a longer code cut
	bigTag := strings.Repeat("v", maxIndexedTagBytes)

	tests := []struct {
		name string
		q    any // SpanQuery, TraceQuery or SessionQuery
		want planWant
	}{
		{"spans: newest first", SpanQuery{},
			planWant{dim: listindex.DimCreated, ranges: []listindex.KeyRange{created}, exact: []bool{true}, desc: true}},
		{"spans: oldest first", SpanQuery{Common: Common{Ascending: true}},
			planWant{dim: listindex.DimCreated, ranges: []listindex.KeyRange{created}, exact: []bool{true}}},
		{"spans: created_after", SpanQuery{Common: Common{CreatedAfter: &after}},
			planWant{dim: listindex.DimCreated, ranges: []listindex.KeyRange{{Lo: listindex.At(listindex.DimCreated, listindex.Nil(), after), Hi: created.Hi}}, exact: []bool{true}, desc: true}},
		{"spans: by cost, the whole dimension", SpanQuery{Common: Common{SortBy: "cost", Ascending: true}},
			planWant{dim: listindex.DimCost, ranges: []listindex.KeyRange{listindex.DimRange(listindex.DimCost)}, exact: []bool{true}}},
		{"spans: by cost from a minimum: a part of it", SpanQuery{Common: Common{SortBy: "cost", CostMin: new(0.5)}},
			planWant{dim: listindex.DimCost, ranges: []listindex.KeyRange{{Lo: listindex.Prefix(listindex.DimCost, listindex.Number(0.5)), Hi: listindex.DimRange(listindex.DimCost).Hi}}, exact: []bool{true}, desc: true}},
		{"spans: by duration up to a maximum: numbers only", SpanQuery{Common: Common{SortBy: "duration_ms", DurationMax: new(9.0)}},
			planWant{dim: listindex.DimDuration, ranges: []listindex.KeyRange{{Lo: listindex.Prefix(listindex.DimDuration, listindex.Number(math.Inf(-1))), Hi: listindex.ValueRange(listindex.DimDuration, listindex.Number(9)).Hi}}, exact: []bool{true}, desc: true}},
		{"spans: by cost with a kind: residual", SpanQuery{Common: Common{SortBy: "cost"}, Kind: "llm"},
			planWant{dim: listindex.DimCost, ranges: []listindex.KeyRange{listindex.DimRange(listindex.DimCost)}, exact: []bool{false}, desc: true, residual: []string{"span_kind"}}},
		{"spans: by name with a duration range: decided on the keys", SpanQuery{Common: Common{SortBy: "name", DurationMin: new(1.0)}},
			planWant{dim: listindex.DimName, ranges: []listindex.KeyRange{listindex.DimRange(listindex.DimName)}, exact: []bool{true}, desc: true, within: []string{"duration"}}},
		{"spans: by cost with a duration range and a kind", SpanQuery{Common: Common{SortBy: "cost", CostMax: new(1.0), DurationMin: new(1.0)}, Kind: "llm"},
			planWant{dim: listindex.DimCost, ranges: []listindex.KeyRange{{Lo: listindex.Prefix(listindex.DimCost, listindex.Number(math.Inf(-1))), Hi: listindex.ValueRange(listindex.DimCost, listindex.Number(1)).Hi}}, exact: []bool{false}, desc: true, residual: []string{"span_kind"}, within: []string{"duration"}}},
		{"spans: a NaN bound stays residual", SpanQuery{Common: Common{CostMin: new(math.NaN())}},
			planWant{dim: listindex.DimCreated, ranges: []listindex.KeyRange{created}, exact: []bool{false}, desc: true, residual: []string{"cost"}}},
		{"spans: names merged", SpanQuery{Common: Common{Names: []string{"b", "a", "b"}}},
			planWant{dim: listindex.DimName, ranges: []listindex.KeyRange{window(listindex.DimName, str("b")), window(listindex.DimName, str("a"))}, exact: []bool{true, true}, merge: true, desc: true}},
		{"spans: a name longer than the summary's: its cut value, confirmed", SpanQuery{Common: Common{Names: []string{long}}},
			planWant{dim: listindex.DimName, ranges: []listindex.KeyRange{window(listindex.DimName, str(long[:summaryNameBytes]))}, exact: []bool{false}, merge: true, desc: true}},
		{"spans: an error code a longer one's cut may equal", SpanQuery{ErrorCodes: []string{code, "E1"}},
			planWant{dim: listindex.DimErrorCode, ranges: []listindex.KeyRange{window(listindex.DimErrorCode, str(code)), window(listindex.DimErrorCode, str("E1"))}, exact: []bool{false, true}, merge: true, desc: true}},
		{"spans: error codes before names", SpanQuery{Common: Common{Names: []string{"a"}}, ErrorCodes: []string{"E1"}},
			planWant{dim: listindex.DimErrorCode, ranges: []listindex.KeyRange{window(listindex.DimErrorCode, str("E1"))}, exact: []bool{false}, merge: true, desc: true, residual: []string{"names"}}},
		{"spans: a parent before a tag", SpanQuery{Common: Common{Tags: map[string]string{"env": "prod"}}, ParentSpanID: new("p1")},
			planWant{dim: listindex.DimParent, ranges: []listindex.KeyRange{window(listindex.DimParent, str("p1"))}, exact: []bool{false}, merge: true, desc: true, residual: []string{"tag:env"}}},
		{"spans: roots after has_error=true", SpanQuery{Common: Common{HasError: new(true)}, ParentSpanID: new("")},
			planWant{dim: listindex.DimError, ranges: []listindex.KeyRange{window(listindex.DimError, listindex.Bool(true))}, exact: []bool{false}, merge: true, desc: true, residual: []string{"parent_span_id"}}},
		{"spans: a kind before has_error=false", SpanQuery{Common: Common{HasError: new(false)}, Kind: "llm"},
			planWant{dim: listindex.DimKind, ranges: []listindex.KeyRange{window(listindex.DimKind, str("llm"))}, exact: []bool{false}, merge: true, desc: true, residual: []string{"has_error"}}},
		{"spans: a tag and the TagsCut marker", SpanQuery{Common: Common{Tags: map[string]string{"env": "prod"}, Ascending: true}},
			planWant{dim: listindex.DimTag, ranges: []listindex.KeyRange{window(listindex.DimTag, listindex.TagValue("env", "prod")), window(listindex.DimTag, TagsCut)}, exact: []bool{true, false}, merge: true}},
		{"spans: a tag too long to be indexed: the marker only", SpanQuery{Common: Common{Tags: map[string]string{"k": bigTag}}},
			planWant{dim: listindex.DimTag, ranges: []listindex.KeyRange{window(listindex.DimTag, TagsCut)}, exact: []bool{false}, merge: true, desc: true}},
		{"spans: a tag with keys of its own before a long one", SpanQuery{Common: Common{Tags: map[string]string{"a": bigTag, "b": "x"}}},
			planWant{dim: listindex.DimTag, ranges: []listindex.KeyRange{window(listindex.DimTag, listindex.TagValue("b", "x")), window(listindex.DimTag, TagsCut)}, exact: []bool{false, false}, merge: true, desc: true, residual: []string{"tag:a"}}},
		{"spans: a cost range alone: the time order, decided on the keys", SpanQuery{Common: Common{CostMin: new(1.0), CostMax: new(2.0)}},
			planWant{dim: listindex.DimCreated, ranges: []listindex.KeyRange{created}, exact: []bool{true}, desc: true, within: []string{"cost"}}},
		{"traces: a tag and both ranges", TraceQuery{Common: Common{Tags: map[string]string{"env": "prod"}, DurationMax: new(5.0), CostMin: new(1.0)}},
			planWant{dim: listindex.DimTag, ranges: []listindex.KeyRange{window(listindex.DimTag, listindex.TagValue("env", "prod")), window(listindex.DimTag, TagsCut)}, exact: []bool{true, false}, merge: true, desc: true, within: []string{"duration", "cost"}}},
		{"traces: status before has_error", TraceQuery{Common: Common{HasError: new(true)}, Status: "error"},
			planWant{dim: listindex.DimStatus, ranges: []listindex.KeyRange{window(listindex.DimStatus, str("error"))}, exact: []bool{false}, merge: true, desc: true, residual: []string{"has_error"}}},
		{"traces: by span_count", TraceQuery{Common: Common{SortBy: "span_count"}},
			planWant{dim: listindex.DimSpanCount, ranges: []listindex.KeyRange{listindex.DimRange(listindex.DimSpanCount)}, exact: []bool{true}, desc: true}},
		{"traces: long names are whole", TraceQuery{Common: Common{Names: []string{long}}},
			planWant{dim: listindex.DimName, ranges: []listindex.KeyRange{window(listindex.DimName, str(long))}, exact: []bool{true}, merge: true, desc: true}},
		{"sessions: by created_at is the default order", SessionQuery{Common: Common{SortBy: "created_at", Ascending: true, Names: []string{"s"}}},
			planWant{dim: listindex.DimName, ranges: []listindex.KeyRange{window(listindex.DimName, str("s"))}, exact: []bool{true}, merge: true}},
		{"sessions: the name \"\" is also no name", SessionQuery{Common: Common{Names: []string{""}}},
			planWant{dim: listindex.DimName, ranges: []listindex.KeyRange{window(listindex.DimName, listindex.Nil()), window(listindex.DimName, str(""))}, exact: []bool{true, true}, merge: true, desc: true}},
		{"sessions: by trace_count", SessionQuery{Common: Common{SortBy: "trace_count", HasError: new(true)}},
			planWant{dim: listindex.DimTraceCount, ranges: []listindex.KeyRange{listindex.DimRange(listindex.DimTraceCount)}, exact: []bool{false}, desc: true, residual: []string{"has_error"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := planOf(tt.q, planNow, false)
			require.NoError(t, err)
			wantFrom := from
			if c := commonOf(tt.q); c.CreatedAfter != nil {
				wantFrom = *c.CreatedAfter
			}
			assert.Equal(t, wantFrom, p.From)
			assert.Equal(t, to, p.To)
			assert.Equal(t, tt.want.dim, p.Dim, "dimension %s", p.Dim)
			require.Len(t, p.Ranges, len(tt.want.ranges))
			for i, r := range p.Ranges {
				assert.Equal(t, tt.want.ranges[i], r.KeyRange, "range %d", i)
				assert.Equal(t, tt.want.exact[i], r.Exact, "range %d exact", i)
			}
			assert.Equal(t, tt.want.merge, p.Merge, "merge")
			assert.Equal(t, tt.want.desc, p.Desc, "desc")
			assert.Equal(t, tt.want.residual, p.Residual, "residual")
			var within []string
			for _, w := range p.Within {
				within = append(within, w.Name)
			}
			assert.Equal(t, tt.want.within, within, "within")
		})
	}
}

// TestPlanEverySortKey: every sort key of the lists has a dimension each record of the kind
// has a key of.
func TestPlanEverySortKey(t *testing.T) {
	for _, l := range []struct {
		list api.List
		q    func(sort string) any
		keys func() [][]byte
	}{
		{api.SpanList, func(s string) any { return SpanQuery{Common: Common{SortBy: s}} },
			func() [][]byte { return SpanIndexKeys(Summary{SpanID: "s"}) }},
		{api.TraceList, func(s string) any { return TraceQuery{Common: Common{SortBy: s}} },
			func() [][]byte { return TraceIndexKeys(Trace{ID: "t"}) }},
		{api.SessionList, func(s string) any { return SessionQuery{Common: Common{SortBy: s}} },
			func() [][]byte { return SessionIndexKeys(Session{ID: "s"}) }},
	} {
		dims := map[listindex.Dim]bool{}
		for _, k := range l.keys() {
			p, err := listindex.Parse(k)
			require.NoError(t, err)
			dims[p.Dim] = true
		}
		for _, s := range l.list.Sorts {
			p, err := planOf(l.q(s), planNow, false)
			require.NoError(t, err, "%s by %s", l.list.Noun, s)
			assert.True(t, dims[p.Dim], "%s by %s: dimension %s has no keys", l.list.Noun, s, p.Dim)
		}
	}
}

func TestPlanRefuses(t *testing.T) {
	_, err := PlanTraces(TraceQuery{Common: Common{SortBy: "kind"}}, planNow, false)
	assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err), "an unknown sort key: %v", err)
	for _, q := range []any{SpanQuery{ID: "s"}, SpanQuery{TraceID: "t"}, SpanQuery{SessionID: "s"}, TraceQuery{ID: "t"}, TraceQuery{SessionID: "s"}, SessionQuery{ID: "s"}} {
		_, err := planOf(q, planNow, false)
		assert.ErrorIs(t, err, errDirect, "%+v", q)
	}
}

func planOf(q any, now time.Time, bands bool) (IndexPlan, error) {
	switch q := q.(type) {
	case SpanQuery:
		return PlanSpans(q, now, bands)
	case TraceQuery:
		return PlanTraces(q, now, bands)
	case SessionQuery:
		return PlanSessions(q, now, bands)
	}
	panic("not a query")
}

func commonOf(q any) Common {
	switch q := q.(type) {
	case SpanQuery:
		return q.Common
	case TraceQuery:
		return q.Common
	case SessionQuery:
		return q.Common
	}
	panic("not a query")
}

// TestBandPlans: a list in time order whose only filter is a duration or cost range reads the
// range's bands merged by created_at, the bands inside the range taken whole and those at its
// bounds decided on the range; any other filter, or an index without the bands, keeps the
// plans above.
func TestBandPlans(t *testing.T) {
	p, err := planOf(TraceQuery{Common: Common{CostMin: new(0.09), CostMax: new(3.0)}}, planNow, true)
	require.NoError(t, err)
	assert.Equal(t, listindex.DimCostBand, p.Dim)
	assert.True(t, p.Merge)
	assert.True(t, p.Desc)
	require.Len(t, p.Ranges, 3, "bands -2 (0.0625..0.25), -1 and 0 (1..4)")
	for i, r := range p.Ranges {
		assert.True(t, r.Exact, "band %d: nothing residual", i)
		assert.True(t, r.Value.Equal(listindex.BandValue(listindex.Band(0.09)+i)))
		assert.Equal(t, i == 1, r.InWithin, "band %d: only the middle one is inside the range", i)
	}
	require.Len(t, p.Within, 1)
	assert.Equal(t, "cost", p.Within[0].Name)

	p, err = planOf(SpanQuery{Common: Common{DurationMax: new(100.0), Ascending: true}}, planNow, true)
	require.NoError(t, err)
	assert.Equal(t, listindex.DimDurationBand, p.Dim)
	require.Len(t, p.Ranges, listindex.Band(100)-listindex.BandZero+1, "from the band of 0 up")
	for i, r := range p.Ranges {
		assert.Equal(t, i < len(p.Ranges)-1, r.InWithin, "band %d", i)
	}

	for _, c := range []struct {
		q     any
		bands bool
	}{
		{TraceQuery{Common: Common{CostMin: new(0.09)}}, false}, // the index has no bands
		{TraceQuery{Common: Common{CostMin: new(0.09), HasError: new(true)}}, true},
		{SessionQuery{Common: Common{CostMin: new(0.09), DurationMax: new(5.0)}}, true},
		{SpanQuery{Common: Common{CostMin: new(0.09), SortBy: "started_at"}}, true},
		{SpanQuery{Common: Common{CostMin: new(math.NaN())}}, true},
	} {
		p, err := planOf(c.q, planNow, c.bands)
		require.NoError(t, err)
		assert.NotContains(t, []listindex.Dim{listindex.DimCostBand, listindex.DimDurationBand}, p.Dim, "%+v", c.q)
	}
}
