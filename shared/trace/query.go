package trace

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/listindex"
)

// Query bounds. A project-wide query walks the time index newest first from CreatedBefore (or
// now) back to CreatedAfter, or at most LookbackDays days when CreatedAfter is not given, and
// examines at most MaxScan items; beyond that the result covers the newest part only and says
// so (QueryInfo.Truncated).
const (
	LookbackDays     = api.LookbackDays
	MaxSpanScan      = 50_000
	MaxAggregateScan = 10_000
)

// Common filters of spans, traces and sessions (spec §4.3-4.5).
type Common struct {
	CreatedBefore, CreatedAfter *time.Time
	Names                       []string
	HasError                    *bool
	DurationMin, DurationMax    *float64
	CostMin, CostMax            *float64
	Tags                        map[string]string
	SortBy                      string // a key of the list's api.List.Sorts; "" is newest first
	Ascending                   bool
	Limit, Offset               int
	// Cursor continues a list where an answer's QueryInfo.Next (or CursorAfter) left it, for
	// the same query: a read of the list index goes on from its key (indexquery.go), a time
	// walk from its offset (walkCursor); Offset then applies to the first page only.
	Cursor string
}

// SpanQuery selects spans. ID, TraceID and SessionID are direct look-ups (no walk of the time
// index); given together, a span must satisfy each.
type SpanQuery struct {
	Common
	ID      string
	TraceID string
	// SessionID selects the spans of every trace of the session, including spans that do not
	// name the session themselves (a trace joins one session, through any of its spans).
	SessionID    string
	ParentSpanID *string // "" selects root spans
	Kind         string
	ErrorCodes   []string
}

// TraceQuery selects traces.
type TraceQuery struct {
	Common
	ID        string
	SessionID string
	Status    string
}

// SessionQuery selects sessions.
type SessionQuery struct {
	Common
	ID string
}

// QueryInfo tells how much a query examined. Scanned counts the items a time walk examined,
// or the keys a read of the list index examined; Truncated says the answer is partial (the
// walk stopped at its cap, or the index read at its bound of work before the page was full).
type QueryInfo struct {
	Scanned   int
	Truncated bool
	// Loaded is how many records a read of the list index read (summaries, traces, sessions).
	Loaded int
	// WithinKeys is how many keys a read of the list index read of its plan's duration and
	// cost ranges to decide them (IndexPlan.Within), besides the Scanned keys it examined.
	WithinKeys int
	// WithinLoaded is how many of the Loaded records were read to match those ranges on the
	// record, their day not being decided on its keys when they were (withinSets' race).
	WithinLoaded int
	// Next is the cursor of what follows the answer (Common.Cursor), "" when nothing does.
	Next string
	// CursorAfter is the cursor of what follows the answer's item i, for an answer cut short
	// (web.Page cuts by bytes); nil for an empty answer.
	CursorAfter func(i int) string
}

// Cursors of a time walk (a list without the index, and direct look-ups) are offsets: "o" and
// the offset of the item after. They cost what an offset costs.
const walkCursorPrefix = "o"

// takeWalkCursor makes c's cursor, a walk's, its offset.
func (c *Common) takeWalkCursor() error {
	if c.Cursor == "" {
		return nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(c.Cursor, walkCursorPrefix))
	if !strings.HasPrefix(c.Cursor, walkCursorPrefix) || err != nil || n < 0 {
		return errs.Invalid("cursor %q is not one this list answered (send the cursor an answer gave, unchanged)", c.Cursor)
	}
	c.Offset, c.Cursor = n, ""
	return nil
}

// walked sets info's cursors for a walk's page of n items from c.Offset, out of total matches.
func (info *QueryInfo) walked(c Common, n, total int) {
	info.CursorAfter = func(i int) string { return walkCursorPrefix + strconv.Itoa(c.Offset+i+1) }
	if n > 0 && c.Offset+n < total {
		info.Next = info.CursorAfter(n - 1)
	}
}

// Queries answers the read endpoints.
type Queries struct {
	r Reader
	// candidates reads the records a list found in an index (WithCandidates); r by default.
	candidates Reader
	blobs      Blobs
	now        func() time.Time
	// index, when set, answers the lists that are not direct look-ups (indexquery.go); without
	// it they walk the time index.
	index IndexScanner
	// indexBudget bounds the keys one read of the index examines beyond its page's limit.
	indexBudget int
	// withinRace is the range keys a read of the index reads for each key it examines whose
	// day is not decided on its Within ranges (WithinRaceKeys).
	withinRace int
	covered    indexCoverage
	bands      sync.Map // projectID -> bandsMark
}

// QueriesOption configures Queries.
type QueriesOption func(*Queries)

// WithCandidates has the lists read the records they found in an index (the list index, or
// the time index walked) through r, which may read them eventually consistent: an index is
// itself eventually consistent, so its records cannot be fresher than such a read shows them
// (r must still find every record the index found). Look-ups by id keep the Reader given to
// NewQueries.
func WithCandidates(r Reader) QueriesOption { return func(q *Queries) { q.candidates = r } }

// WithIndex has the lists read from the list index through s.
func WithIndex(s IndexScanner) QueriesOption { return func(q *Queries) { q.index = s } }

// NewQueries returns the read side over r and blobs.
func NewQueries(r Reader, blobs Blobs, opts ...QueriesOption) *Queries {
	q := &Queries{r: r, candidates: r, blobs: blobs, now: time.Now, indexBudget: MaxIndexKeys, withinRace: WithinRaceKeys}
	for _, o := range opts {
		o(q)
	}
	return q
}

func (c Common) timeRange() TimeRange {
	r := TimeRange{MaxDays: LookbackDays}
	if c.CreatedAfter != nil {
		r.From = *c.CreatedAfter
	}
	if c.CreatedBefore != nil {
		r.To = *c.CreatedBefore
	}
	return r
}

// enough reports whether a walk in index order (newest first) can stop. Only the default order
// (newest first) can: once offset+limit matches are found and the walk has passed every item
// created at the same time as the last of them (ties are ordered by id, not by index position).
func (c Common) enough(hits []time.Time, oldestSeen time.Time) bool {
	need := c.Offset + c.Limit
	if c.SortBy != "" || c.Ascending || len(hits) < need {
		return false
	}
	sorted := slices.SortedFunc(slices.Values(hits), func(a, b time.Time) int { return b.Compare(a) })
	return oldestSeen.Before(sorted[need-1])
}

// walkState tracks a newest-first walk for enough.
type walkState struct {
	created []time.Time
	oldest  time.Time
}

func (w *walkState) seen(created time.Time, hit bool) {
	if w.oldest.IsZero() || created.Before(w.oldest) {
		w.oldest = created
	}
	if hit {
		w.created = append(w.created, created)
	}
}

func (c Common) matches(name string, created time.Time, hasError bool, duration, cost *float64, tags map[string]string) bool {
	switch {
	case c.CreatedBefore != nil && !created.Before(*c.CreatedBefore),
		c.CreatedAfter != nil && created.Before(*c.CreatedAfter),
		len(c.Names) > 0 && !slices.Contains(c.Names, name),
		c.HasError != nil && *c.HasError != hasError,
		!inRange(duration, c.DurationMin, c.DurationMax),
		!inRange(cost, c.CostMin, c.CostMax):
		return false
	}
	for k, v := range c.Tags {
		if tags[k] != v {
			return false
		}
	}
	return true
}

func inRange(v, lo, hi *float64) bool {
	if lo == nil && hi == nil {
		return true
	}
	if v == nil {
		return false
	}
	return (lo == nil || *v >= *lo) && (hi == nil || *v <= *hi)
}

// page sorts items and cuts the requested window.
func page[T any](items []T, c Common, key func(T, string) (any, time.Time, string)) []T {
	slices.SortStableFunc(items, func(a, b T) int {
		av, at, aid := key(a, c.SortBy)
		bv, bt, bid := key(b, c.SortBy)
		r := compareAny(av, bv)
		if r == 0 {
			r = at.Compare(bt)
		}
		if r == 0 {
			r = strings.Compare(aid, bid)
		}
		if !c.Ascending {
			r = -r
		}
		return r
	})
	if c.Offset >= len(items) {
		return items[:0]
	}
	return items[c.Offset:min(len(items), c.Offset+c.Limit)]
}

// compareAny orders sort values; nil sorts before any value (a session without a name before
// one named "").
func compareAny(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch av := a.(type) {
	case string:
		bv, _ := b.(string)
		return strings.Compare(av, bv)
	case float64:
		bv, _ := b.(float64)
		return cmp.Compare(av, bv)
	case int:
		bv, _ := b.(int)
		return cmp.Compare(av, bv)
	case time.Time:
		bv, _ := b.(time.Time)
		return av.Compare(bv)
	}
	return 0
}

func optFloat(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// Spans answers GET /spans: the matching spans as full records (SpanSummaries, then the
// records of the page's spans from the bucket).
func (q *Queries) Spans(ctx context.Context, projectID string, sq SpanQuery) ([]Span, QueryInfo, error) {
	hits, info, err := q.SpanSummaries(ctx, projectID, sq)
	if err != nil {
		return nil, info, err
	}
	locs := make(map[string]Location, len(hits))
	for _, h := range hits {
		locs[h.SpanID] = h.Location
	}
	recs, err := LoadRecords(ctx, q.blobs, locs)
	if err != nil {
		return nil, info, err
	}
	out := make([]Span, 0, len(hits))
	var kept []int // the positions in hits of out's spans
	for i, h := range hits {
		if rec, ok := recs[h.SpanID]; ok { // else expired (LoadRecords)
			out, kept = append(out, rec), append(kept, i)
		}
	}
	if after := info.CursorAfter; after != nil {
		info.CursorAfter = func(i int) string { return after(kept[i]) }
	}
	return out, info, nil
}

// SpanSummaries selects spans as Spans does and returns their summaries, reading no span body
// but those of the few hits that matched only on a cut name, error code or tags (confirm).
// A summary may name a span whose body has expired, which Spans leaves out.
func (q *Queries) SpanSummaries(ctx context.Context, projectID string, sq SpanQuery) ([]Summary, QueryInfo, error) {
	direct := sq.ID != "" || sq.TraceID != "" || sq.SessionID != ""
	if !direct {
		if ok, err := q.servedByIndex(ctx, projectID, listindex.Spans, sq.Common); err != nil || ok {
			if err != nil {
				return nil, QueryInfo{}, err
			}
			return q.indexSpanSummaries(ctx, projectID, sq)
		}
	}
	var info QueryInfo
	if err := sq.takeWalkCursor(); err != nil {
		return nil, info, err
	}
	var hits []Summary
	var walk walkState
	maybe := map[string]bool{} // matches only if a cut field of the summary matches in full
	// inSession holds the session's traces when SessionID is given.
	var inSession map[string]bool
	consider := func(sums []Summary) {
		for _, s := range sums {
			info.Scanned++
			if inSession != nil && !inSession[s.TraceID] {
				continue
			}
			ok, unsure := sq.match(s)
			walk.seen(s.CreatedAt, ok)
			if ok {
				hits = append(hits, s)
				if unsure {
					maybe[s.SpanID] = true
				}
			}
		}
	}
	switch {
	case sq.ID != "" || sq.TraceID != "" || sq.SessionID != "":
		var traceIDs []string
		if sq.SessionID != "" {
			var err error
			if traceIDs, err = q.r.SessionTraceIDs(ctx, projectID, sq.SessionID); err != nil {
				return nil, info, err
			}
			inSession = make(map[string]bool, len(traceIDs))
			for _, id := range traceIDs {
				inSession[id] = true
			}
		}
		ids, truncated, err := q.lookUpSpanIDs(ctx, projectID, sq, traceIDs)
		if err != nil {
			return nil, info, err
		}
		info.Truncated = truncated
		sums, err := q.Summaries(ctx, projectID, ids)
		if err != nil {
			return nil, info, err
		}
		consider(sums)
	default:
		err := q.r.WalkIndex(ctx, projectID, IndexSpans, sq.timeRange(), func(ids []string) (bool, error) {
			sums, err := q.summariesOf(ctx, q.candidates, projectID, ids)
			if err != nil {
				return false, err
			}
			consider(sums)
			if info.Scanned >= MaxSpanScan {
				info.Truncated = true
				return false, nil
			}
			return !sq.enough(walk.created, walk.oldest), nil
		})
		if err != nil {
			return nil, info, err
		}
	}
	if len(maybe) > 0 {
		if err := q.confirm(ctx, &hits, maybe, sq); err != nil {
			return nil, info, err
		}
	}
	total := len(hits)
	hits = page(hits, sq.Common, spanSortKey)
	info.walked(sq.Common, len(hits), total)
	return hits, info, nil
}

// spanSortKey is a summary's sort value for sort key by, its created_at and id (page).
func spanSortKey(s Summary, by string) (any, time.Time, string) {
	switch by {
	case "started_at":
		return s.StartedAt, s.CreatedAt, s.SpanID
	case "name":
		return s.Name, s.CreatedAt, s.SpanID
	case "status":
		return s.Status, s.CreatedAt, s.SpanID
	case "duration_ms":
		return optFloat(s.DurationMS), s.CreatedAt, s.SpanID
	case "cost":
		return optFloat(s.Cost), s.CreatedAt, s.SpanID
	case "kind":
		return s.Kind, s.CreatedAt, s.SpanID
	}
	return s.CreatedAt, s.CreatedAt, s.SpanID
}

// lookUpSpanIDs returns the ids of the spans a direct look-up names: the span ID, else the
// spans of TraceID, else the spans of the session's traces (sessionTraces), up to MaxSpanScan
// ids (truncated is then true).
func (q *Queries) lookUpSpanIDs(ctx context.Context, projectID string, sq SpanQuery, sessionTraces []string) (ids []string, truncated bool, err error) {
	switch {
	case sq.ID != "":
		return []string{sq.ID}, false, nil
	case sq.TraceID != "":
		ids, err := q.r.TraceSpanIDs(ctx, projectID, sq.TraceID)
		return ids, false, err
	}
	// The traces' span lists are read readConcurrency at a time, in order, until the cap: a
	// session of many traces costs their Queries in parallel, not one after another.
	for start := 0; start < len(sessionTraces); start += readConcurrency {
		if len(ids) >= MaxSpanScan { // traces are left unread
			return ids[:MaxSpanScan], true, nil
		}
		chunk := sessionTraces[start:min(start+readConcurrency, len(sessionTraces))]
		lists := make([][]string, len(chunk))
		g, gctx := errgroup.WithContext(ctx)
		for i, traceID := range chunk {
			g.Go(func() error {
				var err error
				lists[i], err = q.r.TraceSpanIDs(gctx, projectID, traceID)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, false, err
		}
		for _, spans := range lists {
			ids = append(ids, spans...)
		}
	}
	if len(ids) > MaxSpanScan {
		return ids[:MaxSpanScan], true, nil
	}
	return ids, false, nil
}

// Summaries reads summaries of ids in their order, leaving unknown ids out; it answers GET
// /spans/summaries.
func (q *Queries) Summaries(ctx context.Context, projectID string, ids []string) ([]Summary, error) {
	return q.summariesOf(ctx, q.r, projectID, ids)
}

// summariesOf is Summaries read through r.
func (q *Queries) summariesOf(ctx context.Context, r Reader, projectID string, ids []string) ([]Summary, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	m, err := r.Summaries(ctx, projectID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(m))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if s, ok := m[id]; ok && !seen[id] {
			seen[id] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// match tests a summary. unsure is true when it matched only on a cut name, error code or
// tags, which confirm checks against the full record.
func (sq SpanQuery) match(s Summary) (ok, unsure bool) {
	c := sq.Common
	c.Names, c.Tags = nil, nil
	if !c.matches(s.Name, s.CreatedAt, s.HasError, s.DurationMS, s.Cost, nil) {
		return false, false
	}
	switch {
	case sq.ID != "" && s.SpanID != sq.ID,
		sq.TraceID != "" && s.TraceID != sq.TraceID,
		sq.ParentSpanID != nil && s.ParentSpanID != *sq.ParentSpanID,
		sq.Kind != "" && s.Kind != sq.Kind:
		return false, false
	}
	if len(sq.Names) > 0 {
		ok, maybe := matchCut(sq.Names, s.Name, s.NameCut)
		if !ok {
			return false, false
		}
		unsure = unsure || maybe
	}
	if len(sq.ErrorCodes) > 0 {
		ok, maybe := matchCut(sq.ErrorCodes, s.ErrorCode, s.ErrorCodeCut)
		if !ok {
			return false, false
		}
		unsure = unsure || maybe
	}
	for k, v := range sq.Tags {
		if got, ok := s.Tags[k]; !ok || got != v {
			if !s.TagsCut {
				return false, false
			}
			unsure = true
		}
	}
	return true, unsure
}

// matchCut tests a summary's value v, cut when cut is set, against a filter's values: an uncut
// value matches when it is one of them; a cut one may match any of them it is a prefix of
// (maybe: the full value decides), even one equal to it (the full value is longer).
func matchCut(values []string, v string, cut bool) (ok, maybe bool) {
	if !cut {
		return slices.Contains(values, v), false
	}
	ok = slices.ContainsFunc(values, func(w string) bool { return strings.HasPrefix(w, v) })
	return ok, ok
}

// confirm drops the unsure hits whose full record does not match.
func (q *Queries) confirm(ctx context.Context, hits *[]Summary, maybe map[string]bool, sq SpanQuery) error {
	locs := map[string]Location{}
	for _, h := range *hits {
		if maybe[h.SpanID] {
			locs[h.SpanID] = h.Location
		}
	}
	recs, err := LoadRecords(ctx, q.blobs, locs)
	if err != nil {
		return err
	}
	*hits = slices.DeleteFunc(*hits, func(h Summary) bool {
		if !maybe[h.SpanID] {
			return false
		}
		r, found := recs[h.SpanID]
		if !found {
			return true // expired (LoadRecords)
		}
		code := ""
		if r.ErrorCode != nil {
			code = *r.ErrorCode
		}
		full := h
		full.Name, full.ErrorCode, full.Tags, full.NameCut, full.ErrorCodeCut, full.TagsCut = r.Name, code, r.Tags.Map(), false, false, false
		ok, _ := sq.match(full)
		return !ok
	})
	return nil
}

// Traces answers GET /traces.
func (q *Queries) Traces(ctx context.Context, projectID string, tq TraceQuery) ([]Trace, QueryInfo, error) {
	if tq.ID == "" && tq.SessionID == "" {
		if ok, err := q.servedByIndex(ctx, projectID, listindex.Traces, tq.Common); err != nil || ok {
			if err != nil {
				return nil, QueryInfo{}, err
			}
			return q.indexTraces(ctx, projectID, tq)
		}
	}
	var info QueryInfo
	if err := tq.takeWalkCursor(); err != nil {
		return nil, info, err
	}
	var hits []Trace
	var walk walkState
	consider := func(ts []Trace) {
		for _, t := range ts {
			info.Scanned++
			ok := tq.match(t)
			walk.seen(t.CreatedAt, ok)
			if ok {
				hits = append(hits, t)
			}
		}
	}
	switch {
	case tq.ID != "" || tq.SessionID != "":
		ids := []string{tq.ID}
		if tq.ID == "" {
			var err error
			if ids, err = q.r.SessionTraceIDs(ctx, projectID, tq.SessionID); err != nil {
				return nil, info, err
			}
		}
		ts, err := q.r.Traces(ctx, projectID, ids)
		if err != nil {
			return nil, info, err
		}
		consider(ts)
	default:
		err := q.r.WalkIndex(ctx, projectID, IndexTraces, tq.timeRange(), func(ids []string) (bool, error) {
			ts, err := q.candidates.Traces(ctx, projectID, ids)
			if err != nil {
				return false, err
			}
			consider(ts)
			if info.Scanned >= MaxAggregateScan {
				info.Truncated = true
				return false, nil
			}
			return !tq.enough(walk.created, walk.oldest), nil
		})
		if err != nil {
			return nil, info, err
		}
	}
	total := len(hits)
	hits = page(hits, tq.Common, traceSortKey)
	info.walked(tq.Common, len(hits), total)
	return hits, info, nil
}

// traceSortKey is a trace's sort value for sort key by, its created_at and id (page).
func traceSortKey(t Trace, by string) (any, time.Time, string) {
	switch by {
	case "started_at":
		if t.StartedAt == nil {
			return nil, t.CreatedAt, t.ID
		}
		return *t.StartedAt, t.CreatedAt, t.ID
	case "name":
		return t.Name, t.CreatedAt, t.ID
	case "status":
		return t.Status, t.CreatedAt, t.ID
	case "span_count":
		return t.SpanCount, t.CreatedAt, t.ID
	case "duration_ms":
		return optFloat(t.DurationMS), t.CreatedAt, t.ID
	case "cost":
		return t.Cost, t.CreatedAt, t.ID
	}
	return t.CreatedAt, t.CreatedAt, t.ID
}

func (tq TraceQuery) match(t Trace) bool {
	if tq.ID != "" && t.ID != tq.ID || tq.SessionID != "" && (t.SessionID == nil || *t.SessionID != tq.SessionID) ||
		tq.Status != "" && t.Status != tq.Status {
		return false
	}
	cost := t.Cost
	return tq.matches(t.Name, t.CreatedAt, t.ErrorCount > 0, t.DurationMS, &cost, t.Tags)
}

// Sessions answers GET /sessions.
func (q *Queries) Sessions(ctx context.Context, projectID string, sq SessionQuery) ([]Session, QueryInfo, error) {
	if sq.ID == "" {
		if ok, err := q.servedByIndex(ctx, projectID, listindex.Sessions, sq.Common); err != nil || ok {
			if err != nil {
				return nil, QueryInfo{}, err
			}
			return q.indexSessions(ctx, projectID, sq)
		}
	}
	var info QueryInfo
	if err := sq.takeWalkCursor(); err != nil {
		return nil, info, err
	}
	var hits []Session
	var walk walkState
	consider := func(ss []Session) {
		for _, s := range ss {
			info.Scanned++
			ok := sq.match(s)
			walk.seen(s.CreatedAt, ok)
			if ok {
				hits = append(hits, s)
			}
		}
	}
	if sq.ID != "" {
		ss, err := q.r.Sessions(ctx, projectID, []string{sq.ID})
		if err != nil {
			return nil, info, err
		}
		consider(ss)
	} else {
		err := q.r.WalkIndex(ctx, projectID, IndexSessions, sq.timeRange(), func(ids []string) (bool, error) {
			ss, err := q.candidates.Sessions(ctx, projectID, ids)
			if err != nil {
				return false, err
			}
			consider(ss)
			if info.Scanned >= MaxAggregateScan {
				info.Truncated = true
				return false, nil
			}
			return !sq.enough(walk.created, walk.oldest), nil
		})
		if err != nil {
			return nil, info, err
		}
	}
	total := len(hits)
	hits = page(hits, sq.Common, sessionSortKey)
	info.walked(sq.Common, len(hits), total)
	return hits, info, nil
}

// sessionSortKey is a session's sort value for sort key by, its created_at and id (page).
func sessionSortKey(s Session, by string) (any, time.Time, string) {
	switch by {
	case "name":
		if s.Name == nil {
			return nil, s.CreatedAt, s.ID
		}
		return *s.Name, s.CreatedAt, s.ID
	case "trace_count":
		return s.TraceCount, s.CreatedAt, s.ID
	case "cost":
		return s.Cost, s.CreatedAt, s.ID
	case "duration":
		return optFloat(s.Duration), s.CreatedAt, s.ID
	}
	return s.CreatedAt, s.CreatedAt, s.ID
}

func (sq SessionQuery) match(s Session) bool {
	if sq.ID != "" && s.ID != sq.ID {
		return false
	}
	name := ""
	if s.Name != nil {
		name = *s.Name
	}
	cost := s.Cost
	return sq.matches(name, s.CreatedAt, s.ErrorCount > 0, s.Duration, &cost, s.Tags)
}
