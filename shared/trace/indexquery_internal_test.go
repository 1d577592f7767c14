package trace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/listindex"
)

// The executor of index plans against brute force: an in-memory index (memIndex: the keys of
// SpanIndexKeys, TraceIndexKeys and SessionIndexKeys in day partitions, as the storage keeps
// them), an in-memory Reader of the records, and span records in a real S3 (gofakes3) for the
// confirmation of cut values.

const indexProject = "p1"

// memIndex is an IndexScanner over the keys of one project, each in the partition of its
// created_at's day. yielded counts the keys its iterators gave: the keys a read examined, by
// the scanner's count, not the executor's.
type memIndex struct {
	keys    map[listindex.Kind][][]byte // sorted
	yielded int
	fail    error
}

func (m *memIndex) add(kind listindex.Kind, keys [][]byte) {
	if m.keys == nil {
		m.keys = map[listindex.Kind][][]byte{}
	}
	m.keys[kind] = append(m.keys[kind], keys...)
}

// sort puts the keys of each kind in order, once they are added.
func (m *memIndex) sort() {
	for _, keys := range m.keys {
		slices.SortFunc(keys, bytes.Compare)
	}
}

// inDays reports whether key is in a day partition of [from, to).
func inDays(key []byte, from, to time.Time) bool {
	p, err := listindex.Parse(key)
	if err != nil {
		panic(err)
	}
	day := p.Created.Truncate(24 * time.Hour)
	return day.Before(to) && day.Add(24*time.Hour).After(from)
}

// keysIn are the keys of kind in r, in the partitions of [from, to), ascending.
func (m *memIndex) keysIn(kind listindex.Kind, from, to time.Time, r listindex.KeyRange) [][]byte {
	hi := r.Hi
	if hi == nil {
		hi = listindex.DimRange(listindex.Dim(r.Lo[0])).Hi
	}
	keys := m.keys[kind]
	i, _ := slices.BinarySearchFunc(keys, r.Lo, bytes.Compare)
	var out [][]byte
	for ; i < len(keys) && bytes.Compare(keys[i], hi) < 0; i++ {
		if inDays(keys[i], from, to) {
			out = append(out, keys[i])
		}
	}
	return out
}

// IndexedSince holds every record from the start: the lists are the index's.
func (m *memIndex) IndexedSince(context.Context, string) (time.Time, bool, error) {
	return time.Time{}, true, nil
}

// RangeBandsSince holds every record's bands.
func (m *memIndex) RangeBandsSince(context.Context, string) (time.Time, bool, error) {
	return time.Time{}, true, nil
}

func (m *memIndex) ScanRanges(ctx context.Context, projectID string, kind listindex.Kind, from, to time.Time, ranges []listindex.KeyRange, desc bool) ([]listindex.Iter, error) {
	var its []listindex.Iter
	for _, r := range ranges {
		it, err := m.Scan(ctx, projectID, kind, from, to, r, desc)
		if err != nil {
			return nil, err
		}
		its = append(its, it)
	}
	return its, nil
}

func (m *memIndex) Scan(_ context.Context, projectID string, kind listindex.Kind, from, to time.Time, r listindex.KeyRange, desc bool) (listindex.Iter, error) {
	if m.fail != nil {
		return nil, m.fail
	}
	var keys [][]byte
	if projectID == indexProject {
		keys = m.keysIn(kind, from, to, r)
	}
	if desc {
		slices.Reverse(keys)
	}
	return &sliceIter{keys: keys, i: -1, yielded: &m.yielded}, nil
}

type sliceIter struct {
	keys    [][]byte
	i       int
	yielded *int
}

func (it *sliceIter) Next(context.Context) bool {
	if it.i+1 >= len(it.keys) {
		it.i = len(it.keys)
		return false
	}
	it.i++
	*it.yielded++
	return true
}

func (it *sliceIter) Key() []byte { return it.keys[it.i] }
func (it *sliceIter) Err() error  { return nil }

// memRecords is a Reader of summaries, traces and sessions held in memory; the lists read by id
// only (the time walk is not what these tests compare).
type memRecords struct {
	summaries map[string]Summary
	traces    map[string]Trace
	sessions  map[string]Session
}

func (m *memRecords) Summaries(_ context.Context, _ string, ids []string) (map[string]Summary, error) {
	out := map[string]Summary{}
	for _, id := range ids {
		if s, ok := m.summaries[id]; ok {
			out[id] = s
		}
	}
	return out, nil
}

func (m *memRecords) Traces(_ context.Context, _ string, ids []string) ([]Trace, error) {
	var out []Trace
	for _, id := range ids {
		if t, ok := m.traces[id]; ok {
			out = append(out, t)
		}
	}
	return out, nil
}

func (m *memRecords) Sessions(_ context.Context, _ string, ids []string) ([]Session, error) {
	var out []Session
	for _, id := range ids {
		if s, ok := m.sessions[id]; ok {
			out = append(out, s)
		}
	}
	return out, nil
}

var errNotRead = errors.New("memRecords: not read by the index path")

func (m *memRecords) TraceSpanIDs(context.Context, string, string) ([]string, error) {
	return nil, errNotRead
}

func (m *memRecords) SessionTraceIDs(context.Context, string, string) ([]string, error) {
	return nil, errNotRead
}

func (m *memRecords) WalkIndex(context.Context, string, string, TimeRange, func([]string) (bool, error)) error {
	return errNotRead
}

// project is a random project: its records, their index and the full spans the summaries cut.
type project struct {
	recs  *memRecords
	index *memIndex
	spans map[string]Span
	now   time.Time
}

var (
	testBase = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// created offsets within a day: few, so that records share created_at; at the day's edges
	createdOffsets = []time.Duration{0, time.Microsecond, 30 * time.Minute, 12 * time.Hour, 17 * time.Hour, 24*time.Hour - time.Microsecond}
	long160        = strings.Repeat("n", summaryNameBytes)
	// span names: short ones, one the summary's bound long (whole), two longer that cut to it,
	// multi-byte ones whose cut backs off, and one whose cut is 159 bytes, a name of its own
	spanNames = []string{"chat", "embed", "tool", "", long160, long160 + "a", long160 + "b",
		strings.Repeat("é", 81), strings.Repeat("é", 80) + "zz", strings.Repeat("n", 159) + "é", strings.Repeat("n", 159)}
	longCode     = strings.Repeat("c", summaryErrorCodeBytes)
	errorCodes   = []string{"E1", "E2", longCode, longCode + "x", longCode + "y"}
	kinds        = []string{"llm", "tool", "generic"}
	spanStatuses = []string{"", StatusOK, StatusError}
	traceNames   = []string{"agent", "rag", "", strings.Repeat("t", 300)}
	numbers      = []float64{0, 0.1, 0.25, 0.3, 0.9, 1, 3, 5, 50, 60, 500}
	blobValue    = strings.Repeat("x", 300)
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func randomTime(r *rand.Rand, days int) time.Time {
	return testBase.Add(time.Duration(r.IntN(days))*24*time.Hour + pick(r, createdOffsets))
}

func optNumber(r *rand.Rand) *float64 {
	if r.IntN(4) == 0 {
		return nil
	}
	return new(pick(r, numbers))
}

// randomTags: none, a few of a small set, many (past the index's 32 or the summary's bytes),
// or a tag too long for either, which sorts before the others ("blob" < "env").
func randomTags(r *rand.Rand) map[string]string {
	tags := map[string]string{}
	switch r.IntN(8) {
	case 0:
		for i := range 40 {
			tags[fmt.Sprintf("t%02d", i)] = "v"
		}
	case 1:
		for i := range 70 {
			tags[fmt.Sprintf("k%02d", i)] = "vv"
		}
	case 2:
		tags["blob"] = blobValue
	}
	if r.IntN(2) == 0 {
		tags["env"] = pick(r, []string{"prod", "dev"})
	}
	if r.IntN(3) == 0 {
		tags["team"] = pick(r, []string{"a", "b", "c"})
	}
	return tags
}

func newProject(t *testing.T, r *rand.Rand, blobs Blobs, seed int) *project {
	ctx := context.Background()
	p := &project{
		recs:  &memRecords{summaries: map[string]Summary{}, traces: map[string]Trace{}, sessions: map[string]Session{}},
		index: &memIndex{}, spans: map[string]Span{},
		// all records in the default window, or some before it and a day partly in it
		now: pick(r, []time.Time{testBase.Add(7 * 24 * time.Hour), testBase.Add(33*24*time.Hour + 5*time.Hour + 7*time.Minute)}),
	}
	const days = 6
	id := func(prefix string) string { return fmt.Sprintf("%s%08x", prefix, r.Uint32()) }

	var body []byte
	key := fmt.Sprintf("spans/project=%s/date=2026-03-01/hour=00/seed-%d.ndjson", indexProject, seed)
	var traceSpans []string
	for range 60 + r.IntN(200) {
		s := Span{ID: id("s"), ProjectID: indexProject, Name: pick(r, spanNames), Kind: pick(r, kinds),
			StartedAt: randomTime(r, days), DurationMS: optNumber(r), Cost: optNumber(r), Tags: TagsOf(randomTags(r)),
			CreatedAt: randomTime(r, days)}
		if len(traceSpans) == 0 || r.IntN(4) == 0 {
			traceSpans = nil
		}
		if len(traceSpans) > 0 && r.IntN(5) > 0 {
			s.ParentSpanID = new(pick(r, traceSpans))
		}
		traceSpans = append(traceSpans, s.ID)
		s.TraceID = "t" + traceSpans[0]
		if st := pick(r, spanStatuses); st != "" {
			s.Status = new(st)
		}
		if r.IntN(3) == 0 {
			s.ErrorCode = new(pick(r, errorCodes))
		}
		start := len(body)
		body = s.AppendJSON(body)
		sum := Summarize(s, Location{Key: key, Offset: int64(start), Length: int64(len(body) - start)})
		body = append(body, '\n')
		p.spans[s.ID] = s
		p.recs.summaries[s.ID] = sum
		p.index.add(listindex.Spans, SpanIndexKeys(sum))
	}
	require.NoError(t, blobs.Put(ctx, key, body, "application/x-ndjson"))

	for range 40 + r.IntN(100) {
		tr := Trace{ID: id("t"), ProjectID: indexProject, Name: pick(r, traceNames), Status: pick(r, []string{StatusOK, StatusError, StatusUnset}),
			DurationMS: optNumber(r), Cost: pick(r, numbers), SpanCount: 1 + r.IntN(4), ErrorCount: r.IntN(2),
			Tags: randomTags(r), CreatedAt: randomTime(r, days)}
		if r.IntN(4) > 0 {
			tr.StartedAt = new(randomTime(r, days))
		}
		p.recs.traces[tr.ID] = tr
		p.index.add(listindex.Traces, TraceIndexKeys(tr))
	}
	for range 40 + r.IntN(100) {
		s := Session{ID: id("x"), ProjectID: indexProject, TraceCount: 1 + r.IntN(4), ErrorCount: r.IntN(2), Cost: pick(r, numbers),
			Duration: optNumber(r), Tags: randomTags(r), CreatedAt: randomTime(r, days)}
		if n := pick(r, []string{"-", "", "s1", "s2"}); n != "-" {
			s.Name = new(n)
		}
		p.recs.sessions[s.ID] = s
		p.index.add(listindex.Sessions, SessionIndexKeys(s))
	}
	p.index.sort()
	return p
}

// randomCommon is a random choice of the filters, order and page every list shares.
func randomCommon(r *rand.Rand, sorts []string, names []string) Common {
	var c Common
	edge := func() *time.Time {
		t := testBase.Add(time.Duration(r.IntN(8)) * 24 * time.Hour)
		if r.IntN(2) == 0 {
			t = t.Add(pick(r, createdOffsets))
		}
		return &t
	}
	if r.IntN(4) == 0 {
		c.CreatedAfter = edge()
	}
	if r.IntN(4) == 0 {
		c.CreatedBefore = edge()
	}
	if r.IntN(3) == 0 {
		for range 1 + r.IntN(3) {
			c.Names = append(c.Names, pick(r, append(names, "missing")))
		}
	}
	if r.IntN(5) == 0 {
		c.HasError = new(r.IntN(2) == 0)
	}
	bound := func() *float64 {
		if r.IntN(7) > 0 {
			return nil
		}
		return new(pick(r, numbers))
	}
	c.DurationMin, c.DurationMax, c.CostMin, c.CostMax = bound(), bound(), bound(), bound()
	if r.IntN(3) == 0 {
		c.Tags = map[string]string{}
		for range 1 + r.IntN(2) {
			tag := pick(r, [][2]string{{"env", "prod"}, {"env", "dev"}, {"team", "a"}, {"t05", "v"}, {"t35", "v"}, {"k10", "vv"}, {"k60", "vv"}, {"blob", blobValue}})
			c.Tags[tag[0]] = tag[1]
		}
	}
	if r.IntN(5) < 3 {
		c.SortBy = pick(r, sorts)
	}
	c.Ascending = r.IntN(2) == 0
	c.Limit = 1 + r.IntN(25)
	if r.IntN(2) == 0 {
		c.Offset = r.IntN(40)
	}
	if r.IntN(4) == 0 { // a duration or cost range alone, in time order: its bands
		c = Common{CreatedAfter: c.CreatedAfter, CreatedBefore: c.CreatedBefore, Ascending: c.Ascending, Limit: c.Limit, Offset: c.Offset}
		lo, hi := new(pick(r, numbers)), new(pick(r, numbers))
		switch r.IntN(3) {
		case 0:
			lo = nil
		case 1:
			hi = nil
		}
		if r.IntN(2) == 0 {
			c.DurationMin, c.DurationMax = lo, hi
		} else {
			c.CostMin, c.CostMax = lo, hi
		}
	}
	return c
}

func randomQuery(r *rand.Rand, p *project) any {
	switch r.IntN(3) {
	case 0:
		q := SpanQuery{Common: randomCommon(r, api.SpanList.Sorts, spanNames)}
		if r.IntN(4) == 0 {
			ids := slices.Sorted(func(yield func(string) bool) {
				for id := range p.spans {
					if !yield(id) {
						return
					}
				}
			})
			q.ParentSpanID = new(pick(r, append([]string{"", ""}, ids...)))
		}
		if r.IntN(4) == 0 {
			q.Kind = pick(r, kinds)
		}
		if r.IntN(4) == 0 {
			for range 1 + r.IntN(2) {
				q.ErrorCodes = append(q.ErrorCodes, pick(r, append(errorCodes, longCode[:summaryErrorCodeBytes-1])))
			}
		}
		return q
	case 1:
		q := TraceQuery{Common: randomCommon(r, api.TraceList.Sorts, traceNames)}
		if r.IntN(4) == 0 {
			q.Status = pick(r, []string{StatusOK, StatusError, StatusUnset})
		}
		return q
	}
	return SessionQuery{Common: randomCommon(r, api.SessionList.Sorts, []string{"", "s1", "s2"})}
}

// bruteForce answers q from every record: the query's filters on the full values (a span's
// whole name, error code and tags), in the window, sorted and paged by page. It returns the
// page's ids and every matching id (in the list's order, from the start).
func (p *project) bruteForce(q any) (page, all []string) {
	switch q := q.(type) {
	case SpanQuery:
		from, to := windowOf(q.Common, p.now)
		var hits []Summary
		for _, s := range p.recs.summaries {
			full := s
			if span, ok := p.spans[s.SpanID]; ok { // else the summary cut nothing (uniformProject)
				full.Name, full.Tags, full.ErrorCode = span.Name, span.Tags.Map(), ""
				if span.ErrorCode != nil {
					full.ErrorCode = *span.ErrorCode
				}
				full.NameCut, full.ErrorCodeCut, full.TagsCut = false, false, false
			}
			if ok, _ := q.match(full); ok && inWindow(s.CreatedAt, from, to) {
				hits = append(hits, s)
			}
		}
		return pageIDs(hits, q.Common, spanSortKey, func(s Summary) string { return s.SpanID })
	case TraceQuery:
		from, to := windowOf(q.Common, p.now)
		var hits []Trace
		for _, t := range p.recs.traces {
			if q.match(t) && inWindow(t.CreatedAt, from, to) {
				hits = append(hits, t)
			}
		}
		return pageIDs(hits, q.Common, traceSortKey, func(t Trace) string { return t.ID })
	case SessionQuery:
		from, to := windowOf(q.Common, p.now)
		var hits []Session
		for _, s := range p.recs.sessions {
			if q.match(s) && inWindow(s.CreatedAt, from, to) {
				hits = append(hits, s)
			}
		}
		return pageIDs(hits, q.Common, sessionSortKey, func(s Session) string { return s.ID })
	}
	panic("not a query")
}

// days is how many day partitions plan's window touches.
func days(plan IndexPlan) int {
	return max(0, int(plan.To.Sub(plan.From.Truncate(24*time.Hour))/(24*time.Hour))+1)
}

func inWindow(t, from, to time.Time) bool { return !t.Before(from) && t.Before(to) }

func pageIDs[T any](items []T, c Common, key func(T, string) (any, time.Time, string), id func(T) string) (onePage, all []string) {
	whole := c
	whole.Offset, whole.Limit = 0, len(items)
	for _, it := range page(items, whole, key) {
		all = append(all, id(it))
	}
	if c.Offset < len(all) {
		onePage = all[c.Offset:min(len(all), c.Offset+c.Limit)]
	}
	return onePage, all
}

// list answers q through the index path of qs.
func list(ctx context.Context, qs *Queries, projectID string, q any) ([]string, QueryInfo, error) {
	var ids []string
	switch q := q.(type) {
	case SpanQuery:
		sums, info, err := qs.SpanSummaries(ctx, projectID, q)
		for _, s := range sums {
			ids = append(ids, s.SpanID)
		}
		return ids, info, err
	case TraceQuery:
		ts, info, err := qs.Traces(ctx, projectID, q)
		for _, t := range ts {
			ids = append(ids, t.ID)
		}
		return ids, info, err
	case SessionQuery:
		ss, info, err := qs.Sessions(ctx, projectID, q)
		for _, s := range ss {
			ids = append(ids, s.ID)
		}
		return ids, info, err
	}
	panic("not a query")
}

func withCursor(q any, cursor string) any {
	switch q := q.(type) {
	case SpanQuery:
		q.Cursor = cursor
		return q
	case TraceQuery:
		q.Cursor = cursor
		return q
	case SessionQuery:
		q.Cursor = cursor
		return q
	}
	panic("not a query")
}

func kindOf(q any) listindex.Kind {
	switch q.(type) {
	case SpanQuery:
		return listindex.Spans
	case TraceQuery:
		return listindex.Traces
	}
	return listindex.Sessions
}

// planCost is what a plan's ranges hold: keys in total, and the keys that do not count toward
// the page (created outside the window: edge; or not a distinct match: waste, edge included).
func (p *project) planCost(plan IndexPlan, matches map[string]bool) (total, edge, waste int) {
	counted := map[string]bool{}
	for _, r := range plan.Ranges {
		for _, k := range p.index.keysIn(plan.Kind, plan.From, plan.To, r.KeyRange) {
			total++
			pk, _ := listindex.Parse(k)
			switch {
			case !inWindow(pk.Created, plan.From, plan.To):
				edge++
				waste++
			case !matches[pk.ID] || counted[pk.ID]:
				waste++
			default:
				counted[pk.ID] = true
			}
		}
	}
	return total, edge, waste
}

// TestIndexAgainstBruteForce: random projects and random queries (every filter alone and
// combined, every sort key in both orders, limits, offsets): the index path answers what brute
// force over every record answers, a full cursor walk gives every match once and in order, at
// the default bound of work and at a tiny one (pages cut short with a cursor), and the keys read
// follow the page: offset + limit + what the ranges hold that does not match.
func TestIndexAgainstBruteForce(t *testing.T) {
	ctx := context.Background()
	blobs, s3, _ := blobtest.New(t)
	shapes := map[string]int{}
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 27))
		p := newProject(t, r, blobs, seed)
		qs := NewQueries(p.recs, blobs, WithIndex(p.index))
		qs.now = func() time.Time { return p.now }
		tiny := NewQueries(p.recs, blobs, WithIndex(p.index))
		tiny.now, tiny.indexBudget = qs.now, 1+r.IntN(8)
		// racer decides duration and cost ranges on records for most keys: its days' range
		// keys are read a few for each key examined (withinSets' race), so both ways of
		// deciding a day, and a day decided half way through a batch, are exercised.
		racer := NewQueries(p.recs, blobs, WithIndex(p.index))
		racer.now, racer.withinRace = qs.now, 1+r.IntN(3)

		for n := range 120 {
			q := randomQuery(r, p)
			name := fmt.Sprintf("seed %d query %d %+v", seed, n, q)
			wantPage, all := p.bruteForce(q)
			c := commonOf(q)
			plan, err := planOf(q, p.now, true)
			require.NoError(t, err, name)
			matches := map[string]bool{}
			for _, id := range all {
				matches[id] = true
			}
			_, edge, waste := p.planCost(plan, matches)
			shapes[fmt.Sprintf("%s exact=%v merge=%v", kindOf(q), plan.Exact(), plan.Merge)]++
			if sq, ok := q.(SpanQuery); ok {
				for _, id := range all {
					s := p.recs.summaries[id]
					switch {
					case s.NameCut && len(sq.Names) > 0:
						shapes["a cut name matched"]++
					case s.ErrorCodeCut && len(sq.ErrorCodes) > 0:
						shapes["a cut error code matched"]++
					case s.TagsCut && len(sq.Tags) > 0:
						shapes["a cut tag set matched"]++
					}
				}
			}

			// The first page.
			p.index.yielded = 0
			got, info, err := list(ctx, qs, indexProject, q)
			require.NoError(t, err, name)
			require.Equal(t, wantPage, got, name)
			assert.False(t, info.Truncated, name)
			if len(all) > c.Offset+c.Limit {
				assert.NotEmpty(t, info.Next, "%s: a cursor when more follow", name)
			} else if info.Next != "" {
				assert.Len(t, got, c.Limit, "%s: a cursor with nothing after it follows a full page only", name)
				assert.False(t, plan.Exact(), "%s: an exact plan knows its last page", name)
			}
			assert.LessOrEqual(t, info.Scanned+info.WithinKeys, p.index.yielded, name)
			assert.LessOrEqual(t, p.index.yielded, c.Offset+c.Limit+waste+indexLoadBatch+len(plan.Ranges)+info.WithinKeys, "%s: keys read", name)
			if len(plan.Within) > 0 {
				shapes["within"]++
				if !slices.ContainsFunc(plan.Ranges, func(r PlanRange) bool { return !r.Exact }) {
					// duration and cost decided on the keys: only the page's records are read,
					// and those of keys examined before their day was decided
					shapes["within, exact ranges"]++
					assert.LessOrEqual(t, info.Loaded, c.Limit+info.WithinLoaded, "%s: records read (ranges decided on the keys)", name)
				}
				assert.LessOrEqual(t, info.WithinLoaded, info.WithinKeys/qs.withinRace+days(plan), "%s: records read racing the range keys", name)

				// The same page, the ranges decided mostly on records.
				p.index.yielded = 0
				raced, info, err := list(ctx, racer, indexProject, q)
				require.NoError(t, err, name)
				require.Equal(t, wantPage, raced, "%s: decided on records (race %d)", name, racer.withinRace)
				assert.False(t, info.Truncated, name)
				assert.LessOrEqual(t, info.WithinLoaded, info.WithinKeys/racer.withinRace+days(plan), "%s: records read racing the range keys", name)
				if info.WithinLoaded > 0 {
					shapes["within, a day decided on records"]++
				}
			}
			if plan.Exact() {
				// O(offset + limit): the keys of the page and of the offset, the window's edge
				// days, one look-ahead per range and the key after the page (whether a cursor
				// follows); records: the page's only.
				assert.LessOrEqual(t, p.index.yielded, c.Offset+c.Limit+edge+len(plan.Ranges)+1, "%s: keys read (exact plan)", name)
				assert.LessOrEqual(t, info.Loaded, c.Limit, "%s: records read (exact plan)", name)
			}

			// Every page by cursor, at the default bound and at a tiny one.
			for _, walker := range []*Queries{qs, tiny, racer} {
				var walked []string
				cursor, pages := "", 0
				for {
					p.index.yielded = 0
					got, info, err := list(ctx, walker, indexProject, withCursor(q, cursor))
					require.NoError(t, err, name)
					walked = append(walked, got...)
					pages++
					require.Less(t, pages, 10_000, "%s: the walk ends", name)
					if walker != tiny {
						assert.False(t, info.Truncated, name)
						if walker == qs && cursor != "" && plan.Exact() {
							// and the key after the page, which says whether a cursor follows
							assert.LessOrEqual(t, p.index.yielded, c.Limit+edge+len(plan.Ranges)+1, "%s: a cursor's page costs O(limit)", name)
						}
					} else {
						assert.LessOrEqual(t, info.Scanned, c.Limit+walker.indexBudget, "%s: keys examined per request", name)
						assert.LessOrEqual(t, info.WithinKeys, walker.indexBudget, "%s: range keys read per request", name)
						if len(plan.Within) > 0 && info.WithinKeys == walker.indexBudget {
							shapes["within, a day too large to decide"]++
						}
						assert.True(t, info.Truncated || len(got) == c.Limit || info.Next == "", "%s: a short page says so", name)
						if info.Truncated {
							shapes["truncated pages"]++
						}
					}
					if info.Next == "" {
						break
					}
					cursor = info.Next
				}
				wantAll := []string(nil)
				if c.Offset < len(all) {
					wantAll = all[c.Offset:]
				}
				require.Equal(t, wantAll, walked, "%s: the cursor walk (budget %d)", name, walker.indexBudget)
			}
		}
	}
	t.Logf("plan shapes: %v; span records read from S3 to confirm cut values: %d", shapes, s3.Count("GetObject"))
	for _, shape := range []string{"a cut name matched", "a cut error code matched", "a cut tag set matched", "truncated pages", "within", "within, exact ranges", "within, a day too large to decide", "within, a day decided on records"} {
		assert.Positive(t, shapes[shape], shape)
	}
	assert.Positive(t, s3.Count("GetObject"), "cut values confirmed")
	for _, kind := range []listindex.Kind{listindex.Spans, listindex.Traces, listindex.Sessions} {
		for _, shape := range []string{"exact=true merge=true", "exact=true merge=false", "exact=false merge=true", "exact=false merge=false"} {
			assert.Positive(t, shapes[fmt.Sprintf("%s %s", kind, shape)], "no %s query of shape %s", kind, shape)
		}
	}
}

// TestIndexCursorRefused: a cursor is refused, as CodeInvalid (400 invalid_request), when it is
// not one, when it comes with other filters, sort or order, another list or project, a direct
// look-up, or where the lists are not read from the index.
func TestIndexCursorRefused(t *testing.T) {
	ctx := context.Background()
	blobs, _, _ := blobtest.New(t)
	r := rand.New(rand.NewPCG(1, 2))
	p := newProject(t, r, blobs, 0)
	qs := NewQueries(p.recs, blobs, WithIndex(p.index))
	qs.now = func() time.Time { return p.now }

	first := SpanQuery{Common: Common{Limit: 2, Names: []string{"chat"}}}
	_, info, err := qs.SpanSummaries(ctx, indexProject, first)
	require.NoError(t, err)
	require.NotEmpty(t, info.Next)
	cursor := info.Next
	again := first
	again.Cursor = cursor
	again.Limit, again.Offset = 5, 3 // limit may change; the offset was the first page's
	_, _, err = qs.SpanSummaries(ctx, indexProject, again)
	require.NoError(t, err)

	tests := []struct {
		name string
		q    any
		qs   *Queries
		proj string
	}{
		{"not a cursor", SpanQuery{Common: Common{Limit: 2, Names: []string{"chat"}, Cursor: "not*base64"}}, qs, indexProject},
		{"a cursor changed", SpanQuery{Common: Common{Limit: 2, Names: []string{"chat"}, Cursor: cursor[:len(cursor)-3]}}, qs, indexProject},
		{"other names", SpanQuery{Common: Common{Limit: 2, Names: []string{"embed"}, Cursor: cursor}}, qs, indexProject},
		{"another filter", SpanQuery{Common: Common{Limit: 2, Names: []string{"chat"}, Cursor: cursor}, Kind: "llm"}, qs, indexProject},
		{"a sort", SpanQuery{Common: Common{Limit: 2, Names: []string{"chat"}, SortBy: "cost", Cursor: cursor}}, qs, indexProject},
		{"another order", SpanQuery{Common: Common{Limit: 2, Names: []string{"chat"}, Ascending: true, Cursor: cursor}}, qs, indexProject},
		{"another list", TraceQuery{Common: Common{Limit: 2, Names: []string{"chat"}, Cursor: cursor}}, qs, indexProject},
		{"another project", SpanQuery{Common: Common{Limit: 2, Names: []string{"chat"}, Cursor: cursor}}, qs, "p2"},
		{"a direct look-up", SpanQuery{Common: Common{Limit: 2, Cursor: cursor}, TraceID: "t1"}, qs, indexProject},
		{"no index", SpanQuery{Common: Common{Limit: 2, Names: []string{"chat"}, Cursor: cursor}}, NewQueries(p.recs, blobs), indexProject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := list(ctx, tt.qs, tt.proj, tt.q)
			require.Error(t, err)
			assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err), "%v", err)
		})
	}
}

// TestIndexScanError: a failing scan is the read's error, not an empty answer.
func TestIndexScanError(t *testing.T) {
	blobs, _, _ := blobtest.New(t)
	p := newProject(t, rand.New(rand.NewPCG(3, 4)), blobs, 0)
	p.index.fail = errors.New("throttled")
	_, _, err := NewQueries(p.recs, blobs, WithIndex(p.index)).Traces(context.Background(), indexProject, TraceQuery{Common: Common{Limit: 5}})
	assert.ErrorIs(t, err, p.index.fail)
}

// uniformProject is a project of n spans, n traces and n sessions created over 35 days before
// now, with values from small sets: the shape of a real project, at any size.
func uniformProject(n int) *project {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	now := testBase.Add(40 * 24 * time.Hour)
	p := &project{
		recs:  &memRecords{summaries: map[string]Summary{}, traces: map[string]Trace{}, sessions: map[string]Session{}},
		index: &memIndex{}, spans: map[string]Span{}, now: now,
	}
	created := func() time.Time {
		return now.Add(-time.Duration(r.Int64N(int64(35 * 24 * time.Hour)))).Truncate(time.Microsecond)
	}
	tags := func() map[string]string { return map[string]string{"env": pick(r, []string{"prod", "dev"})} }
	for i := range n {
		s := Summary{SpanID: fmt.Sprintf("s%07d", i), Name: pick(r, []string{"chat", "embed", "search", "plan"}),
			Kind: pick(r, []string{"llm", "llm", "llm", "tool", "generic", "http", "database", "tool", "generic", "generic"}),
			Cost: new(float64(r.IntN(1000)) / 1000), HasError: r.IntN(20) == 0, Tags: tags(), CreatedAt: created()}
		s.DurationMS = new(float64(r.IntN(1000)))
		p.recs.summaries[s.SpanID] = s
		p.index.add(listindex.Spans, SpanIndexKeys(s))
		tr := Trace{ID: fmt.Sprintf("t%07d", i), Name: "agent", Status: StatusOK, Cost: float64(r.IntN(1000)) / 1000,
			SpanCount: 1 + r.IntN(9), Tags: tags(), CreatedAt: created()}
		if r.IntN(20) == 0 {
			tr.ErrorCount, tr.Status = 1, StatusError
		}
		tr.StartedAt = new(tr.CreatedAt.Add(-time.Second))
		tr.DurationMS = new(float64(r.IntN(1000)))
		p.recs.traces[tr.ID] = tr
		p.index.add(listindex.Traces, TraceIndexKeys(tr))
		se := Session{ID: fmt.Sprintf("x%07d", i), TraceCount: 1 + r.IntN(5), Cost: float64(r.IntN(1000)) / 1000, Tags: tags(), CreatedAt: created()}
		se.Duration = new(float64(r.IntN(1000)))
		p.recs.sessions[se.ID] = se
		p.index.add(listindex.Sessions, SessionIndexKeys(se))
	}
	p.index.sort()
	return p
}

// TestIndexCostFollowsThePage: the keys a page examines and the records it reads are the same
// at 2,000 and at 20,000 records of each kind (the queries of issue 27's measurements): exact
// plans cost offset+limit keys and limit records, plans with residual filters (offset+limit)
// divided by their selectivity, whatever the project's size.
func TestIndexCostFollowsThePage(t *testing.T) {
	ctx := context.Background()
	queries := []struct {
		name string
		q    any
	}{
		{"GET /spans?limit=50", SpanQuery{Common: Common{Limit: 50}}},
		{"GET /spans?limit=50&offset=200&names=chat", SpanQuery{Common: Common{Limit: 50, Offset: 200, Names: []string{"chat"}}}},
		{"GET /spans?limit=50&env=prod", SpanQuery{Common: Common{Limit: 50, Tags: map[string]string{"env": "prod"}}}},
		{"GET /spans?limit=20&span_kind=llm&sort_by=cost", SpanQuery{Common: Common{Limit: 20, SortBy: "cost"}, Kind: "llm"}},
		{"GET /traces?limit=20&sort_by=cost", TraceQuery{Common: Common{Limit: 20, SortBy: "cost"}}},
		{"GET /traces?limit=20&sort_by=cost&offset=1000", TraceQuery{Common: Common{Limit: 20, SortBy: "cost", Offset: 1000}}},
		{"GET /traces?limit=20&sort_by=started_at&sort_order=asc", TraceQuery{Common: Common{Limit: 20, SortBy: "started_at", Ascending: true}}},
		{"GET /traces?limit=50&has_error=true", TraceQuery{Common: Common{Limit: 50, HasError: new(true)}}},
		{"GET /traces?limit=50&env=prod", TraceQuery{Common: Common{Limit: 50, Tags: map[string]string{"env": "prod"}}}},
		{"GET /sessions?limit=20&sort_by=cost", SessionQuery{Common: Common{Limit: 20, SortBy: "cost"}}},
		{"GET /spans?limit=50&cost_max=0.1", SpanQuery{Common: Common{Limit: 50, CostMax: new(0.1)}}},
		{"GET /traces?limit=50&cost_min=0.9", TraceQuery{Common: Common{Limit: 50, CostMin: new(0.9)}}},
		{"GET /traces?limit=50&cost_min=0.5&cost_max=0.6", TraceQuery{Common: Common{Limit: 50, CostMin: new(0.5), CostMax: new(0.6)}}},
		{"GET /traces?limit=20&sort_by=started_at&cost_min=0.9", TraceQuery{Common: Common{Limit: 20, SortBy: "started_at", CostMin: new(0.9)}}},
		{"GET /traces?limit=50&env=prod&cost_min=0.9", TraceQuery{Common: Common{Limit: 50, Tags: map[string]string{"env": "prod"}, CostMin: new(0.9)}}},
		{"GET /sessions?limit=20&cost_min=0.9", SessionQuery{Common: Common{Limit: 20, CostMin: new(0.9)}}},
		// broad ranges (most records in them) and narrow ones, both orders, and sorts on a
		// range's dimension
		{"GET /spans?limit=50&duration_min=100", SpanQuery{Common: Common{Limit: 50, DurationMin: new(100.0)}}},
		{"GET /spans?limit=50&duration_max=50&sort_order=asc", SpanQuery{Common: Common{Limit: 50, DurationMax: new(50.0), Ascending: true}}},
		{"GET /spans?limit=50&cost_max=0.9&sort_order=asc", SpanQuery{Common: Common{Limit: 50, CostMax: new(0.9), Ascending: true}}},
		{"GET /traces?limit=50&duration_max=900", TraceQuery{Common: Common{Limit: 50, DurationMax: new(900.0)}}},
		{"GET /traces?limit=50&duration_min=950&sort_order=asc", TraceQuery{Common: Common{Limit: 50, DurationMin: new(950.0), Ascending: true}}},
		{"GET /traces?limit=50&cost_min=0.1&sort_order=asc", TraceQuery{Common: Common{Limit: 50, CostMin: new(0.1), Ascending: true}}},
		{"GET /traces?limit=50&cost_min=0.1&duration_max=900", TraceQuery{Common: Common{Limit: 50, CostMin: new(0.1), DurationMax: new(900.0)}}},
		{"GET /sessions?limit=20&duration_min=100", SessionQuery{Common: Common{Limit: 20, DurationMin: new(100.0)}}},
		{"GET /sessions?limit=20&cost_max=0.05&sort_order=asc", SessionQuery{Common: Common{Limit: 20, CostMax: new(0.05), Ascending: true}}},
		{"GET /traces?limit=20&sort_by=duration_ms&duration_min=100", TraceQuery{Common: Common{Limit: 20, SortBy: "duration_ms", DurationMin: new(100.0)}}},
		{"GET /traces?limit=20&sort_by=cost&sort_order=asc&duration_min=100", TraceQuery{Common: Common{Limit: 20, SortBy: "cost", Ascending: true, DurationMin: new(100.0)}}},
		{"GET /spans?limit=20&sort_by=cost&duration_max=50", SpanQuery{Common: Common{Limit: 20, SortBy: "cost", DurationMax: new(50.0)}}},
		{"GET /sessions?limit=20&sort_by=duration&sort_order=asc&cost_min=0.1", SessionQuery{Common: Common{Limit: 20, SortBy: "duration", Ascending: true, CostMin: new(0.1)}}},
	}
	// share is, for a narrow range of another dimension than a sort's, the share of the
	// records it holds: the sort meets every day of the window, whose range keys the page
	// costs, or its records (limit/share) when fewer: not flat, at most those records.
	share := map[string]float64{"GET /spans?limit=20&sort_by=cost&duration_max=50": 0.05}
	type cost struct{ keys, records, withinLoaded int }
	// At 20,000 -> 200,000 (570 -> 5,700 records a day) the broad ranges' records win the race
	// and stay flat, while ranges of a tenth or less grow with their keys in the days reached
	// (docs/tracing.md, "Cost of a page": the middle of the race grows as the square root of a
	// day's size), so the sizes are fixed.
	const base = 2_000
	costs := map[int][]cost{}
	for _, n := range []int{base, 10 * base} {
		p := uniformProject(n)
		qs := NewQueries(p.recs, nil, WithIndex(p.index))
		qs.now = func() time.Time { return p.now }
		for _, tt := range queries {
			p.index.yielded = 0
			got, info, err := list(ctx, qs, indexProject, tt.q)
			require.NoError(t, err, tt.name)
			want, _ := p.bruteForce(tt.q)
			require.Equal(t, want, got, tt.name)
			assert.False(t, info.Truncated, tt.name)
			costs[n] = append(costs[n], cost{p.index.yielded, info.Loaded, info.WithinLoaded})
		}
	}
	// work is what a page costs in records' worth: a range key costs 1/RangeKeysPerRecord of
	// a record (withinSets), an examined key of the plan's ranges about as much.
	work := func(c cost) float64 { return float64(c.records) + float64(c.keys)/RangeKeysPerRecord }
	for i, tt := range queries {
		small, large := costs[base][i], costs[10*base][i]
		t.Logf("%-70s keys %5d -> %5d, records %4d -> %4d (%d -> %d racing), work %.1f -> %.1f", tt.name,
			small.keys, large.keys, small.records, large.records, small.withinLoaded, large.withinLoaded, work(small), work(large))
		plan, _ := planOf(tt.q, testBase.Add(40*24*time.Hour), true)
		if sh := share[tt.name]; sh > 0 {
			c := commonOf(tt.q)
			assert.LessOrEqual(t, work(large), 1.25*float64(c.Limit)/sh+float64(large.keys)/RangeKeysPerRecord, "%s: at most its records, racing", tt.name)
			continue
		}
		assert.LessOrEqual(t, float64(large.records), 1.5*float64(small.records), "%s: records", tt.name)
		if len(plan.Within) > 0 {
			// A range's keys are read whole for the days where that is cheaper than records
			// (more of them at the larger size, where a day's records are fewer than its
			// range's keys over WithinRaceKeys): flat in work, not in keys.
			assert.LessOrEqual(t, work(large), 1.5*work(small), "%s: work", tt.name)
		} else {
			assert.LessOrEqual(t, float64(large.keys), 1.5*float64(small.keys), "%s: keys", tt.name)
		}
		if !slices.ContainsFunc(plan.Ranges, func(r PlanRange) bool { return !r.Exact }) {
			c := commonOf(tt.q)
			assert.LessOrEqual(t, large.records, c.Limit+large.withinLoaded, "%s: an exact plan reads the page's records only (and those examined while racing a range's keys)", tt.name)
		}
	}
}

// TestIndexRangeBoundedWork: a selective range over a large window (a cost only one trace in
// a thousand reaches, among 20,000 traces) examines at most limit + MaxIndexKeys keys and
// reads at most MaxIndexKeys keys of the range per request, answers a partial page marked
// truncated with a cursor, never a short page as complete, and the cursor walk gives brute
// force's answer, reading only the records it answers.
func TestIndexRangeBoundedWork(t *testing.T) {
	ctx := context.Background()
	p := uniformProject(20_000)
	qs := NewQueries(p.recs, nil, WithIndex(p.index))
	qs.now = func() time.Time { return p.now }
	q := TraceQuery{Common: Common{Limit: 50, CostMin: new(0.999)}}
	_, all := p.bruteForce(q)
	require.NotEmpty(t, all)
	var walked []string
	cursor, pages, truncated := "", 0, 0
	for {
		p.index.yielded = 0
		got, info, err := list(ctx, qs, indexProject, withCursor(q, cursor))
		require.NoError(t, err)
		walked = append(walked, got...)
		pages++
		require.Less(t, pages, 100, "the walk ends")
		assert.LessOrEqual(t, info.Scanned, q.Limit+MaxIndexKeys, "keys examined per request")
		assert.LessOrEqual(t, info.WithinKeys, MaxIndexKeys, "range keys read per request")
		assert.Equal(t, len(got), info.Loaded, "records read: the answer's only")
		if info.Truncated {
			truncated++
			assert.NotEmpty(t, info.Next, "a truncated page has a cursor")
		} else if info.Next != "" {
			assert.Len(t, got, q.Limit, "a page neither truncated nor last is full")
		}
		if info.Next == "" {
			break
		}
		cursor = info.Next
	}
	assert.Positive(t, truncated, "the window is larger than one request's work")
	assert.Equal(t, all, walked, "the cursor walk")
}

// TestIndexBandKeysDecideTheirRange: a range alone reads its bands, and a key of a band at
// the range's ends is decided by the number it carries (listindex.BandKey): no range key is
// read, and the records read are the page's, at 2,000 and at 20,000 records alike, however
// many of the edge bands' records are out of the range. Band keys without their numbers
// (written before them) are decided as before, on the range's keys or the records: the same
// answers, for more work.
func TestIndexBandKeysDecideTheirRange(t *testing.T) {
	ctx := context.Background()
	queries := []struct {
		name string
		q    any
	}{
		{"GET /traces?limit=50&cost_min=0.5&cost_max=0.6", TraceQuery{Common: Common{Limit: 50, CostMin: new(0.5), CostMax: new(0.6)}}},
		{"GET /traces?limit=50&cost_min=0.9&sort_order=asc", TraceQuery{Common: Common{Limit: 50, CostMin: new(0.9), Ascending: true}}},
		{"GET /spans?limit=50&duration_min=300&duration_max=310", SpanQuery{Common: Common{Limit: 50, DurationMin: new(300.0), DurationMax: new(310.0)}}},
		{"GET /spans?limit=50&offset=20&cost_max=0.3", SpanQuery{Common: Common{Limit: 50, Offset: 20, CostMax: new(0.3)}}},
		{"GET /sessions?limit=20&duration_min=990", SessionQuery{Common: Common{Limit: 20, DurationMin: new(990.0)}}},
	}
	for _, n := range []int{2_000, 20_000} {
		p := uniformProject(n)
		without := &memIndex{}
		for kind, keys := range p.index.keys {
			for _, k := range keys {
				if pk, err := listindex.Parse(k); err == nil && pk.HasOf {
					k = listindex.Key(pk.Dim, pk.Value, pk.Created, pk.ID)
				}
				without.add(kind, [][]byte{k})
			}
		}
		without.sort()
		for _, tt := range queries {
			want, _ := p.bruteForce(tt.q)
			require.NotEmpty(t, want, tt.name)
			plan, _ := planOf(tt.q, p.now, true)
			require.Contains(t, []listindex.Dim{listindex.DimCostBand, listindex.DimDurationBand}, plan.Dim, "%s: read by its bands", tt.name)
			for _, index := range []*memIndex{p.index, without} {
				qs := NewQueries(p.recs, nil, WithIndex(index))
				qs.now = func() time.Time { return p.now }
				got, info, err := list(ctx, qs, indexProject, tt.q)
				require.NoError(t, err, tt.name)
				require.Equal(t, want, got, "%s at %d records", tt.name, n)
				if index == p.index {
					assert.Zero(t, info.WithinKeys, "%s at %d: range keys read", tt.name, n)
					assert.Equal(t, len(got), info.Loaded, "%s at %d: records read", tt.name, n)
				} else {
					assert.Positive(t, info.WithinKeys+info.WithinLoaded, "%s at %d: keys without their numbers are decided on the range", tt.name, n)
				}
			}
		}
	}
}

// noBands is an index whose records have no bands: the ranges' plans of before them.
type noBands struct{ *memIndex }

func (noBands) RangeBandsSince(context.Context, string) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

// BenchmarkRangePage lists a page of traces by a cost range alone, from the range's bands and
// (before them) deciding the range per day, and reports the index keys each examines.
func BenchmarkRangePage(b *testing.B) {
	ctx := context.Background()
	p := uniformProject(20_000)
	for _, c := range []struct {
		name  string
		index IndexScanner
	}{{"bands", p.index}, {"per-day", noBands{p.index}}} {
		qs := NewQueries(p.recs, nil, WithIndex(c.index))
		qs.now = func() time.Time { return p.now }
		q := TraceQuery{Common: Common{Limit: 50, CostMin: new(0.3), CostMax: new(0.5)}}
		b.Run(c.name, func(b *testing.B) {
			var keys int
			for b.Loop() {
				_, info, err := list(ctx, qs, indexProject, q)
				if err != nil {
					b.Fatal(err)
				}
				keys = info.Scanned + info.WithinKeys
			}
			b.ReportMetric(float64(keys), "keys/op")
		})
	}
}
