package trace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/listindex"
)

// The executor of index plans (indexplan.go): with an IndexScanner (WithIndex), SpanSummaries,
// Traces and Sessions answer every query but direct look-ups from the list index, exactly and
// for a bounded amount of work, and continue it with a cursor.

// IndexScanner reads a project's list index; the storage implements it.
type IndexScanner interface {
	// Scan returns the live keys of r in the day partitions of kind that hold [from, to), the
	// keys of every day merged into one iterator in key order, or reversed when desc. Keys of
	// those days created outside [from, to) may be among them (a range cut to the window with
	// listindex.At has none). A project without keys answers an empty iterator.
	Scan(ctx context.Context, projectID string, kind listindex.Kind, from, to time.Time, r listindex.KeyRange, desc bool) (listindex.Iter, error)
	// ScanRanges is Scan of each of ranges, ranges of one value (listindex.SingleValue) each,
	// reading the partitions' list and each day's runs once for all of them.
	ScanRanges(ctx context.Context, projectID string, kind listindex.Kind, from, to time.Time, ranges []listindex.KeyRange, desc bool) ([]listindex.Iter, error)
	// IndexedSince is the earliest created_at the index holds a record of, for the project;
	// ok is false when it holds none (indexcover.go).
	IndexedSince(ctx context.Context, projectID string) (since time.Time, ok bool, err error)
	// RangeBandsSince is the earliest created_at from which every record of the project the
	// index holds has its duration and cost bands (listindex.Band); ok is false when unknown.
	RangeBandsSince(ctx context.Context, projectID string) (since time.Time, ok bool, err error)
}

// MaxIndexKeys bounds the work of one read of the list index: it examines at most its page's
// limit plus MaxIndexKeys keys. Where residual filters or an offset need more, the answer holds
// what was found, QueryInfo.Truncated is set, and QueryInfo.Next continues after the last key
// examined.
const MaxIndexKeys = 10_000

// indexLoadBatch is the most records one load of candidates reads (a BatchGetItem's 100 keys).
const indexLoadBatch = 100

func (q *Queries) indexSpanSummaries(ctx context.Context, projectID string, sq SpanQuery) ([]Summary, QueryInfo, error) {
	fp := fingerprint(projectID, listindex.Spans, sq.Common, func(h hash.Hash) {
		field(h, optString(sq.ParentSpanID))
		field(h, sq.Kind)
		fields(h, sq.ErrorCodes)
	})
	p, cur, err := q.startIndexRead(ctx, projectID, sq.Common, fp, func(from, to time.Time, bands bool) (IndexPlan, error) {
		return planSpans(sq, from, to, bands)
	})
	if err != nil {
		return nil, QueryInfo{}, err
	}
	return runIndex(ctx, q, projectID, p, sq.Limit, cur, func(ctx context.Context, ids []string) (map[string]Summary, error) {
		sums, err := q.summariesOf(ctx, q.candidates, projectID, ids)
		if err != nil {
			return nil, err
		}
		var hits []Summary
		maybe := map[string]bool{}
		for _, s := range sums {
			if ok, unsure := sq.match(s); ok {
				hits = append(hits, s)
				if unsure {
					maybe[s.SpanID] = true
				}
			}
		}
		if len(maybe) > 0 {
			if err := q.confirm(ctx, &hits, maybe, sq); err != nil {
				return nil, err
			}
		}
		out := make(map[string]Summary, len(hits))
		for _, s := range hits {
			out[s.SpanID] = s
		}
		return out, nil
	})
}

func (q *Queries) indexTraces(ctx context.Context, projectID string, tq TraceQuery) ([]Trace, QueryInfo, error) {
	fp := fingerprint(projectID, listindex.Traces, tq.Common, func(h hash.Hash) { field(h, tq.Status) })
	p, cur, err := q.startIndexRead(ctx, projectID, tq.Common, fp, func(from, to time.Time, bands bool) (IndexPlan, error) {
		return planTraces(tq, from, to, bands)
	})
	if err != nil {
		return nil, QueryInfo{}, err
	}
	return runIndex(ctx, q, projectID, p, tq.Limit, cur, func(ctx context.Context, ids []string) (map[string]Trace, error) {
		ts, err := q.candidates.Traces(ctx, projectID, ids)
		if err != nil {
			return nil, err
		}
		out := make(map[string]Trace, len(ts))
		for _, t := range ts {
			if tq.match(t) {
				out[t.ID] = t
			}
		}
		return out, nil
	})
}

func (q *Queries) indexSessions(ctx context.Context, projectID string, sq SessionQuery) ([]Session, QueryInfo, error) {
	fp := fingerprint(projectID, listindex.Sessions, sq.Common, func(hash.Hash) {})
	p, cur, err := q.startIndexRead(ctx, projectID, sq.Common, fp, func(from, to time.Time, bands bool) (IndexPlan, error) {
		return planSessions(sq, from, to, bands)
	})
	if err != nil {
		return nil, QueryInfo{}, err
	}
	return runIndex(ctx, q, projectID, p, sq.Limit, cur, func(ctx context.Context, ids []string) (map[string]Session, error) {
		ss, err := q.candidates.Sessions(ctx, projectID, ids)
		if err != nil {
			return nil, err
		}
		out := make(map[string]Session, len(ss))
		for _, s := range ss {
			if sq.match(s) {
				out[s.ID] = s
			}
		}
		return out, nil
	})
}

// startIndexRead is the plan of a query and where it starts: a first page plans the query's
// window at now and skips its offset; a cursor's page plans the window of the first page (a
// default window does not slide between pages) and starts after the cursor's key.
func (q *Queries) startIndexRead(ctx context.Context, projectID string, c Common, fp [8]byte, planAt func(from, to time.Time, bands bool) (IndexPlan, error)) (IndexPlan, indexCursor, error) {
	cur := indexCursor{fp: fp, skip: c.Offset}
	if c.Cursor == "" {
		cur.from, cur.to = windowOf(c, q.now())
	} else {
		var err error
		if cur, err = decodeCursor(c.Cursor); err != nil {
			return IndexPlan{}, cur, err
		}
		if cur.fp != fp {
			return IndexPlan{}, cur, errs.Invalid("cursor: it continues another query; send it with the filters and sort of the request that answered it")
		}
	}
	bands, err := q.bandsCover(ctx, projectID, c, cur.from)
	if err != nil {
		return IndexPlan{}, cur, err
	}
	p, err := planAt(cur.from, cur.to, bands)
	if err != nil || c.Cursor == "" {
		return p, cur, err
	}
	p, err = p.resume(cur.after)
	return p, cur, err
}

// bandsCover reports whether every record of the project the index holds from from on has its
// duration and cost bands, which a range filter in time order reads (plan); it asks the index
// only for such a query.
func (q *Queries) bandsCover(ctx context.Context, projectID string, c Common, from time.Time) (bool, error) {
	if c.DurationMin == nil && c.DurationMax == nil && c.CostMin == nil && c.CostMax == nil {
		return false, nil
	}
	if m, ok := q.bands.Load(projectID); ok && q.now().Sub(m.(bandsMark).read) < bandsRecheck {
		return !from.Before(m.(bandsMark).since), nil
	}
	since, ok, err := q.index.RangeBandsSince(ctx, projectID)
	if err != nil || !ok {
		return false, err
	}
	q.bands.Store(projectID, bandsMark{since: since, read: q.now()})
	return !from.Before(since), nil
}

// bandsMark is a project's RangeBandsSince as read. The mark never moves later (a project's
// first batch sets it; a reindex moves it back), so a remembered one is at worst later than
// the truth, and a range that starts before it is read a day at a time, as exactly; it is read
// again after bandsRecheck, to follow a reindex.
type bandsMark struct{ since, read time.Time }

const bandsRecheck = time.Hour

// resume is p without the keys up to and including after, in p's direction: a single range
// starts after that key; each range of a merge after the key of the same (created_at, id).
func (p IndexPlan) resume(after []byte) (IndexPlan, error) {
	at, err := listindex.Parse(after)
	if err != nil || at.Dim != p.Dim {
		return p, errBadCursor
	}
	ranges := slices.Clone(p.Ranges)
	for i, r := range ranges {
		k := after
		if p.Merge {
			k = listindex.Key(p.Dim, r.Value, at.Created, at.ID)
		}
		if p.Desc {
			if r.Hi == nil || bytes.Compare(k, r.Hi) < 0 {
				ranges[i].Hi = k
			}
		} else if next := listindex.After(k); bytes.Compare(next, r.Lo) > 0 { // k's successor (with its band key's number)
			ranges[i].Lo = next
		}
	}
	p.Ranges = ranges
	return p, nil
}

// runIndex reads plan p for a page of limit records after cur, where load returns the records
// of ids that match the query (unknown ids and the others left out).
//
// Keys are examined in the plan's order. A key created outside the window is passed over; one
// of an exact range is a match without its record being read: it is counted against the
// offset, or its record read with the page's others at the end; one of an inexact range waits
// with others for a load that matches their records, in batches of what the page still needs
// at the rate of matches seen so far (nextBatch). Reading stops when the page is full, the ranges
// end, or limit+indexBudget keys were examined (Truncated). Next then continues after the last
// key whose outcome the answer holds: the page's last record when it is full, else the last
// key examined.
func runIndex[T any](ctx context.Context, q *Queries, projectID string, p IndexPlan, limit int, cur indexCursor, load func(context.Context, []string) (map[string]T, error)) ([]T, QueryInfo, error) {
	var info QueryInfo
	if limit <= 0 || !p.From.Before(p.To) {
		return nil, info, nil
	}
	m, err := openMerge(ctx, q.index, projectID, p)
	if err != nil {
		return nil, info, err
	}
	within := &withinSets{s: q.index, project: projectID, p: p, race: q.withinRace, budget: q.indexBudget, days: map[int64]*withinDay{}}
	// decide passes over a key of a record out of the plan's Within ranges, by its key; a key
	// of a day not decided (yet) becomes inexact (its record is matched, unless its day is
	// decided before the record is read).
	decide := func(k *indexKey) (keep bool, err error) {
		if len(p.Within) == 0 || k.inWithin {
			return true, nil
		}
		if in, known := p.bandKeyWithin(*k); known {
			return in, nil
		}
		in, known, err := within.decide(ctx, *k)
		info.WithinKeys = within.read
		if !known {
			k.exact, k.undecided = false, true
		}
		return in || !known, err
	}
	type item struct {
		id     string
		key    []byte
		rec    T
		loaded bool
	}
	var (
		page         []item
		pending      []indexKey // examined, matching undecided (in order)
		exactPending int        // the exact ones among them: sure matches
		skipped      int
		tried, hit   int    // inexact candidates loaded, and those that matched
		last         []byte // the last key examined
		full         bool
		unread       int // pending candidates left unread when the page filled
		exhausted    bool
	)
	// redecide decides again the pending keys whose day was not decided when they were
	// examined: the range keys read since may decide it, which saves their records' reads.
	redecide := func() {
		kept := pending[:0]
		for _, c := range pending {
			if c.undecided {
				in, known := within.known(c)
				if known && !in {
					continue
				}
				if known {
					c.exact, c.undecided = c.rangeExact, false
				}
			}
			kept = append(kept, c)
		}
		pending = kept
	}
	need := func() int { return cur.skip + limit - skipped - len(page) }
	// flush decides the pending candidates in order, until the page is full.
	flush := func() error {
		redecide()
		var ids []string
		for _, c := range pending {
			if !c.exact {
				ids = append(ids, c.id)
				if c.undecided {
					info.WithinLoaded++
				}
			}
		}
		var recs map[string]T
		if len(ids) > 0 {
			var err error
			if recs, err = load(ctx, ids); err != nil {
				return err
			}
			info.Loaded += len(ids)
			tried, hit = tried+len(ids), hit+len(recs)
		}
		for i, c := range pending {
			rec, ok := recs[c.id]
			switch {
			case !c.exact && !ok:
			case skipped < cur.skip:
				skipped++
			default:
				page = append(page, item{id: c.id, key: c.key, rec: rec, loaded: !c.exact})
			}
			if len(page) == limit {
				full, unread = true, len(pending)-i-1
				break
			}
		}
		pending, exactPending = pending[:0], 0
		return nil
	}
	allowed := limit + q.indexBudget
	batch := max(1, min(indexLoadBatch, need()))
	for !full {
		if exactPending >= need() || len(pending)-exactPending >= batch {
			if err := flush(); err != nil {
				return nil, info, err
			}
			batch = nextBatch(batch, need(), tried, hit)
			continue
		}
		if info.Scanned >= allowed {
			break
		}
		k, ok, err := m.next(ctx)
		if err != nil {
			return nil, info, err
		}
		if !ok {
			exhausted = true
			break
		}
		info.Scanned++
		last = k.key
		if k.dup || k.created.Before(p.From) || !k.created.Before(p.To) {
			continue
		}
		if keep, err := decide(&k); err != nil {
			return nil, info, err
		} else if !keep {
			continue
		}
		pending = append(pending, k)
		if k.exact {
			exactPending++
		}
	}
	if !full {
		if err := flush(); err != nil {
			return nil, info, err
		}
	}
	if full && unread == 0 && !exhausted {
		// Whether a key follows the page's last: a last page answers no cursor (a client that
		// follows it would get an empty page). A key found is a record that may match.
		for info.Scanned < allowed {
			k, ok, err := m.next(ctx)
			if err != nil {
				return nil, info, err
			}
			if !ok {
				exhausted = true
				break
			}
			info.Scanned++
			if k.dup || k.created.Before(p.From) || !k.created.Before(p.To) {
				continue
			}
			if keep, err := decide(&k); err != nil {
				return nil, info, err
			} else if keep {
				break
			}
		}
	}

	var ids []string
	for _, it := range page {
		if !it.loaded {
			ids = append(ids, it.id)
		}
	}
	var recs map[string]T
	if len(ids) > 0 {
		if recs, err = load(ctx, ids); err != nil {
			return nil, info, err
		}
		info.Loaded += len(ids)
	}
	out := make([]T, 0, len(page))
	keys := make([][]byte, 0, len(page)) // of out's records
	for _, it := range page {
		if it.loaded {
			out, keys = append(out, it.rec), append(keys, it.key)
		} else if rec, ok := recs[it.id]; ok { // else changed or gone since the index saw it
			out, keys = append(out, rec), append(keys, it.key)
		}
	}
	info.CursorAfter = func(i int) string {
		after := cur
		after.skip, after.after = 0, keys[i] // the page's first record is past the offset
		return after.encode()
	}

	next := cur
	next.skip = cur.skip - skipped
	switch {
	case full && (!exhausted || unread > 0):
		next.after = page[len(page)-1].key
	case !full && !exhausted:
		next.after = last
		info.Truncated = true
	default:
		return out, info, nil
	}
	info.Next = next.encode()
	return out, info, nil
}

// nextBatch is how many inexact candidates the next load reads: what the page still needs at
// the rate of matches seen so far (a quarter more, for chance), twice the last batch while none
// matched; at most indexLoadBatch.
func nextBatch(last, need, tried, hit int) int {
	if hit == 0 {
		return min(indexLoadBatch, 2*last)
	}
	return max(1, min(indexLoadBatch, (5*need*tried+4*hit-1)/(4*hit)))
}

// RangeKeysPerRecord is what reading a record costs in keys of a range read instead: a record
// is read with at least half a read unit (4 KB, eventually consistent); a range key takes about
// 50 bytes of a run, so 64 of them are about 3 KB of a run read from the table, and a fraction
// of one ranged GET of a run in the bucket.
const RangeKeysPerRecord = 64

// WithinRaceKeys is how many keys of a plan's duration and cost ranges (IndexPlan.Within) a
// read may read for each key it examines whose day is not decided yet (a record it reads):
// a quarter of what the record costs (RangeKeysPerRecord), so that a broad range, decided on
// records, costs at most 1.25 times those records, and a narrow one, decided on its keys, at
// most 5 times those keys' worth (withinSets).
const WithinRaceKeys = RangeKeysPerRecord / 4

// withinSets decides a plan's Within ranges, a day partition at a time, in one of two ways,
// whichever costs less for that day: on the index's keys of the ranges (the ids of the day's
// records in them, read in value order: the whole range of the day however little of it the
// page needs, cheap when the range is narrow), or on the records the walk examines (each read
// and matched, cheap when the range is broad: a page needs about page/share of them). Which
// is cheaper depends on the range's share of the day, which is not known before reading, so
// the two race: each key the walk examines in a day not yet decided is matched on its record,
// and buys the day's range reading race more keys (WithinRaceKeys). With R the records the
// page needs from the day at the range's share, K the range's keys in the day, c a record's
// cost in keys (RangeKeysPerRecord) and w the race: a narrow range's keys are read whole
// after K/w records, and the day's later keys are decided on them (K/c + K/w); a broad range
// fills the page from R records while its keys are read w × R (R + wR/c). The cost is the
// smaller of the two, at most 1.25 R with w = c/4, and the answer is the same: both ways
// decide exactly, and neither changes the order of the walk, so a cursor continues either.
//
// The range keys read are bounded by budget per request: once it is spent, days not decided
// stay so (their keys' records are read and matched), so a request examines at most its limit
// plus twice the budget of keys, and always moves on.
type withinSets struct {
	s       IndexScanner
	project string
	p       IndexPlan
	race    int                  // range keys read for each key examined in a day not decided
	credit  int                  // range keys bought by keys examined and not read yet
	budget  int                  // keys it may still read
	days    map[int64]*withinDay // by the day's Unix second
	read    int                  // keys read
}

// withinDay is what a read knows of one day's records in the plan's Within ranges: for each
// range, the ids of the keys read so far, and whether they are all of the day's.
type withinDay struct {
	day  time.Time
	its  []listindex.Iter // one per range, opened at the day's first key
	sets []map[string]bool
	done []bool
}

// decide reports whether k's record is in the ranges; known is false when its day is not
// decided, after reading up to race more keys of the day's ranges, and what keys examined
// before bought and their days did not need (a sort's walk meets many days, a key or two of
// each: the keys a narrow range needs to decide them are bought together).
func (w *withinSets) decide(ctx context.Context, k indexKey) (in, known bool, err error) {
	day := k.created.Truncate(24 * time.Hour)
	d, ok := w.days[day.Unix()]
	if !ok {
		d = &withinDay{day: day}
		w.days[day.Unix()] = d
	}
	if in, known := d.verdict(k.id); known {
		return in, true, nil
	}
	w.credit += w.race
	if err := w.advance(ctx, d); err != nil {
		return false, false, err
	}
	in, known = d.verdict(k.id)
	return in, known, nil
}

// known reports whether k's record is in the ranges, by what was read of its day so far.
func (w *withinSets) known(k indexKey) (in, known bool) {
	if d, ok := w.days[k.created.Truncate(24*time.Hour).Unix()]; ok {
		return d.verdict(k.id)
	}
	return false, false
}

// verdict: out as soon as one range read whole lacks id; in when every range, read whole, has
// it.
func (d *withinDay) verdict(id string) (in, known bool) {
	if d.done == nil {
		return false, false
	}
	all := true
	for i, set := range d.sets {
		if d.done[i] && !set[id] {
			return false, true
		}
		all = all && d.done[i]
	}
	return all, all
}

// advance reads more keys of d's ranges (one of each in turn), as many as the credit and the
// budget allow.
func (w *withinSets) advance(ctx context.Context, d *withinDay) error {
	if d.its == nil {
		for _, r := range w.p.Within {
			// [day, the day's last µs]: the partition of that day only
			it, err := w.s.Scan(ctx, w.project, w.p.Kind, d.day, d.day.Add(24*time.Hour-time.Microsecond), r.KeyRange, false)
			if err != nil {
				return fmt.Errorf("scan %s index of %s: %w", w.p.Kind, r.Dim, err)
			}
			d.its, d.sets = append(d.its, it), append(d.sets, map[string]bool{})
		}
		d.done = make([]bool, len(d.its))
	}
	for progress := true; progress && w.credit > 0; {
		progress = false
		for i, it := range d.its {
			if d.done[i] || w.credit == 0 || w.budget == 0 {
				continue
			}
			if !it.Next(ctx) {
				if err := it.Err(); err != nil {
					return fmt.Errorf("read %s index: %w", w.p.Within[i].Dim, err)
				}
				d.done[i] = true
				continue
			}
			progress = true
			w.credit--
			w.budget--
			w.read++
			k, err := listindex.Parse(it.Key())
			if err != nil || k.Dim != w.p.Within[i].Dim {
				return fmt.Errorf("read %s index: key %x is not one of it", w.p.Within[i].Dim, it.Key())
			}
			if k.Created.Truncate(24 * time.Hour).Equal(d.day) {
				d.sets[i][k.ID] = true
			}
		}
	}
	return nil
}

// indexKey is a key examined: the record it names and how its range decides it.
type indexKey struct {
	key     []byte
	id      string
	created time.Time
	exact   bool
	// rangeExact is the exactness of the key's range; exact is cleared while the key's day is
	// not decided on the plan's Within ranges (undecided).
	rangeExact, undecided bool
	// inWithin is set for a key of a range within the plan's Within ranges (PlanRange).
	inWithin bool
	// dup is set for the key of a record the merge gave already (a tag's key and TagsCut).
	dup bool
	// of is the number of a band key written with it (listindex.BandKey; hasOf).
	of    float64
	hasOf bool
}

// bandKeyWithin decides k by its number when k is a band key written with it (listindex.BandKey)
// and the plan reads the bands of its only Within range: a key of a band at the range's ends is
// then in or out by itself, and no range key or record is read for it. known is false for other
// keys.
func (p IndexPlan) bandKeyWithin(k indexKey) (in, known bool) {
	if !k.hasOf || len(p.Within) != 1 || bandDims[p.Within[0].Dim] != p.Dim {
		return false, false
	}
	r := p.Within[0].KeyRange
	v := listindex.Prefix(p.Within[0].Dim, listindex.Number(k.of))
	return bytes.Compare(v, r.Lo) >= 0 && (r.Hi == nil || bytes.Compare(v, r.Hi) < 0), true
}

// merge reads the ranges of a plan: one in key order, or several merged by (created_at, id).
type merge struct {
	heads []*head
	desc  bool
	dim   listindex.Dim
	prev  *indexKey
}

type head struct {
	it              listindex.Iter
	cur             indexKey
	exact, inWithin bool
	live            bool
}

// openMerge opens the ranges of p: a merge's together (ScanRanges), a single range alone.
func openMerge(ctx context.Context, s IndexScanner, projectID string, p IndexPlan) (*merge, error) {
	m := &merge{desc: p.Desc, dim: p.Dim}
	var ranges []PlanRange
	var keyRanges []listindex.KeyRange
	for _, r := range p.Ranges {
		if r.Hi == nil || bytes.Compare(r.Lo, r.Hi) < 0 {
			ranges, keyRanges = append(ranges, r), append(keyRanges, r.KeyRange)
		}
	}
	var its []listindex.Iter
	var err error
	if p.Merge {
		its, err = s.ScanRanges(ctx, projectID, p.Kind, p.From, p.To, keyRanges, p.Desc)
	} else {
		for _, r := range keyRanges {
			it, serr := s.Scan(ctx, projectID, p.Kind, p.From, p.To, r, p.Desc)
			its, err = append(its, it), serr
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("scan %s index of %s: %w", p.Kind, p.Dim, err)
	}
	for i, it := range its {
		h := &head{it: it, exact: ranges[i].Exact, inWithin: ranges[i].InWithin}
		if err := m.advance(ctx, h); err != nil {
			return nil, err
		}
		m.heads = append(m.heads, h)
	}
	return m, nil
}

// advance moves h to its next key.
func (m *merge) advance(ctx context.Context, h *head) error {
	if h.live = h.it.Next(ctx); !h.live {
		if err := h.it.Err(); err != nil {
			return fmt.Errorf("read %s index: %w", m.dim, err)
		}
		return nil
	}
	key := bytes.Clone(h.it.Key())
	p, err := listindex.Parse(key)
	if err != nil || p.Dim != m.dim {
		return fmt.Errorf("read %s index: key %x is not one of it", m.dim, key)
	}
	h.cur = indexKey{key: key, id: p.ID, created: p.Created, exact: h.exact, rangeExact: h.exact, inWithin: h.inWithin, of: p.Of, hasOf: p.HasOf}
	return nil
}

// next is the next key of the merge; ok is false at the end.
func (m *merge) next(ctx context.Context) (c indexKey, ok bool, err error) {
	var first *head
	for _, h := range m.heads {
		if h.live && (first == nil || m.before(h.cur, first.cur)) {
			first = h
		}
	}
	if first == nil {
		return indexKey{}, false, nil
	}
	c = first.cur
	if err := m.advance(ctx, first); err != nil {
		return indexKey{}, false, err
	}
	c.dup = m.prev != nil && m.prev.id == c.id && m.prev.created.Equal(c.created)
	m.prev = &c
	return c, true, nil
}

// before reports whether a comes before b: by (created_at, id) in the merge's direction, an
// exact key before an inexact one of the same record (which is then a dup).
func (m *merge) before(a, b indexKey) bool {
	r := a.created.Compare(b.created)
	if r == 0 {
		r = strings.Compare(a.id, b.id)
	}
	if m.desc {
		r = -r
	}
	if r == 0 {
		return a.exact && !b.exact
	}
	return r < 0
}

// indexCursor is where a read of the list index goes on: the query it belongs to (fp), the
// window of its first page, what remains of its offset and the last key whose outcome an answer
// held. A client sees it as an opaque, URL-safe string (encode); it holds no secret (a
// position among the project's own keys), and fp only tells a cursor sent with another query.
type indexCursor struct {
	fp       [8]byte
	from, to time.Time
	skip     int
	after    []byte
}

const (
	cursorVersion  = 1
	maxCursorBytes = api.MaxCursorBytes
)

var errBadCursor = errs.Invalid("cursor: not a cursor of this list (send the cursor an answer gave, unchanged)")

// encode is c as a cursor: base64url of version, fp, the window in microseconds, skip and the
// key.
func (c indexCursor) encode() string {
	b := append([]byte{cursorVersion}, c.fp[:]...)
	b = binary.AppendVarint(b, c.from.UnixMicro())
	b = binary.AppendVarint(b, c.to.UnixMicro())
	b = binary.AppendUvarint(b, uint64(c.skip))
	return base64.RawURLEncoding.EncodeToString(append(b, c.after...))
}

// decodeCursor reads what encode wrote; anything else is CodeInvalid.
func decodeCursor(s string) (indexCursor, error) {
	var c indexCursor
	if len(s) > maxCursorBytes {
		return c, errBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 1+len(c.fp) || b[0] != cursorVersion {
		return c, errBadCursor
	}
	b = b[1+copy(c.fp[:], b[1:]):]
	from, n := binary.Varint(b)
	if n <= 0 {
		return c, errBadCursor
	}
	b = b[n:]
	to, n := binary.Varint(b)
	if n <= 0 {
		return c, errBadCursor
	}
	b = b[n:]
	skip, n := binary.Uvarint(b)
	if n <= 0 || skip > api.MaxListOffset {
		return c, errBadCursor
	}
	c.from, c.to, c.skip, c.after = time.UnixMicro(from).UTC(), time.UnixMicro(to).UTC(), int(skip), b[n:]
	if _, err := listindex.Parse(c.after); err != nil || !c.from.Before(c.to) {
		return c, errBadCursor
	}
	return c, nil
}

// fingerprint identifies a query of a project for its cursors: every filter and the order, not
// the limit, offset or cursor; own adds the kind's own filters.
func fingerprint(projectID string, kind listindex.Kind, c Common, own func(hash.Hash)) [8]byte {
	h := sha256.New()
	field(h, projectID)
	field(h, string(kind))
	field(h, optTime(c.CreatedBefore))
	field(h, optTime(c.CreatedAfter))
	fields(h, c.Names)
	if c.HasError != nil {
		field(h, strconv.FormatBool(*c.HasError))
	} else {
		field(h, "")
	}
	for _, f := range []*float64{c.DurationMin, c.DurationMax, c.CostMin, c.CostMax} {
		if f != nil {
			field(h, strconv.FormatFloat(*f, 'g', -1, 64))
		} else {
			field(h, "")
		}
	}
	field(h, strconv.Itoa(len(c.Tags)))
	for _, k := range slices.Sorted(maps.Keys(c.Tags)) {
		field(h, k)
		field(h, c.Tags[k])
	}
	field(h, c.SortBy)
	field(h, strconv.FormatBool(c.Ascending))
	own(h)
	var fp [8]byte
	copy(fp[:], h.Sum(nil))
	return fp
}

// field writes s to h, length first, so that no two lists of fields write the same bytes.
func field(h hash.Hash, s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }

// fields writes a set of values: their count, then each in order.
func fields(h hash.Hash, values []string) {
	field(h, strconv.Itoa(len(values)))
	for _, v := range slices.Sorted(slices.Values(values)) {
		field(h, v)
	}
}

func optTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func optString(s *string) string {
	if s == nil {
		return ""
	}
	return "=" + *s
}
