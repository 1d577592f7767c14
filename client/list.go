package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/plumehq/plume/api"
)

// Headers of the tracing lists (GET /spans, /traces, /sessions) that say how complete an
// answer is and where the list goes on.
const (
	// HeaderScanned is how many items the server examined.
	HeaderScanned = api.ScannedHeader
	// HeaderScanTruncated is "true" when the server stopped at its bound on one request's work
	// (50,000 spans, 10,000 traces or sessions, 30 days without created_after).
	HeaderScanTruncated = api.ScanTruncatedHeader
	// HeaderNextCursor is the cursor that continues the list after the answer's last record,
	// present whenever more may follow; its absence ends the list.
	HeaderNextCursor = api.NextCursorHeader
	// HeaderNextOffset is the offset of the records the server left out of an answer it cut by
	// size (api.MaxAnswerBytes), on a page read from an offset; a server older than cursors
	// sends only this one.
	HeaderNextOffset = api.NextOffsetHeader
)

// MaxFollowedPages bounds AllSpans, AllTraces and AllSessions: the requests each makes at most.
const MaxFollowedPages = 50

// ErrPartialList ends a walk of a list (Records) whose last answer the server's scan bound
// cut (X-Plume-Scan-Truncated without a cursor): matches past the bound are on no page, and a
// sorted list may not hold the true first items. Narrow the window (created_after,
// created_before) to reach them.
var ErrPartialList = errors.New("client: the list ended at the server's scan bound: matches past it may be missing")

// ListInfo is what the server said about a list answer besides its records.
type ListInfo struct {
	// Scanned is how many items the server examined (X-Plume-Scanned); summed over the
	// requests of AllSpans and its kind.
	Scanned int
	// Truncated is true when the server stopped at its bound on one request's work
	// (X-Plume-Scan-Truncated). Today's servers walk a time index up to that bound, so that
	// older matches of the window may be missing from every page, whatever the paging:
	// narrow the window with created_after / created_before to reach them. For AllSpans and
	// its kind it is the last answer's: a page that the bound ended early and whose cursor
	// was followed is not what the answer lacks.
	Truncated bool
	// NextCursor continues the list after the answer's last record (X-Plume-Next-Cursor):
	// the same query with api.ListQuery.Cursor set to it (and no Offset) reads on. It is
	// present whenever more records may follow, a full page included; "" when the list has
	// ended (or the server is older than cursors: see NextOffset).
	NextCursor string
	// NextOffset is, on a page read from an offset that the server cut by size
	// (X-Plume-Next-Offset), the offset to ask from for the rest of it; 0 otherwise. A server
	// older than cursors says only this.
	NextOffset int
	// Cut is true when the answer holds fewer records than asked though more follow: the
	// server cut it by size (api.MaxAnswerBytes) or ended it at its bound on one request's
	// work, or AllSpans and its kind stopped at MaxFollowedPages. NextCursor (or NextOffset)
	// says where the rest starts.
	Cut bool
}

// Partial reports whether the answer lacks records of its query: cut by the scan bound, by
// size, or by MaxFollowedPages.
func (i ListInfo) Partial() bool { return i.Truncated || i.Cut }

// More reports whether records may follow the answer's last: it has a NextCursor or a
// NextOffset.
func (i ListInfo) More() bool { return i.NextCursor != "" || i.NextOffset > 0 }

// Page is one answer of a list: its records and what the server said of them.
type Page[T any] struct {
	Records []T
	Info    ListInfo
}

// SpansPage lists spans as Spans does, with what the server said of the answer's completeness
// and where the list goes on (ListInfo.NextCursor, which q.Cursor takes).
func (c *Client) SpansPage(ctx context.Context, q api.SpanQuery) ([]api.Span, ListInfo, error) {
	return listPage[api.Span](ctx, c, api.SpanList, q.Values())
}

// SpanSummariesPage lists spans as SpansPage does, answering their summaries (GET
// /spans/summaries with the list's query): the server reads no span body for them.
func (c *Client) SpanSummariesPage(ctx context.Context, q api.SpanQuery) ([]api.SpanSummary, ListInfo, error) {
	return listPageAt[api.SpanSummary](ctx, c, "/spans/summaries", api.SpanList, q.Values())
}

// TracesPage lists traces as Traces does, with what the server said of the answer's
// completeness and where the list goes on.
func (c *Client) TracesPage(ctx context.Context, q api.TraceQuery) ([]api.Trace, ListInfo, error) {
	return listPage[api.Trace](ctx, c, api.TraceList, q.Values())
}

// SessionsPage lists sessions as Sessions does, with what the server said of the answer's
// completeness and where the list goes on.
func (c *Client) SessionsPage(ctx context.Context, q api.SessionQuery) ([]api.Session, ListInfo, error) {
	return listPage[api.Session](ctx, c, api.SessionList, q.Values())
}

// AllSpans lists q's limit of spans (the route's default, api.SpanList.Limits, without one):
// when the server answers fewer (an answer cut by size, or ended at its bound on one
// request's work), it asks for the rest from the answer's cursor (its next offset from a
// server older than cursors), up to MaxFollowedPages requests. The info's NextCursor
// continues the list after the last span answered; it is Cut when the bound on requests left
// spans of the limit out.
func (c *Client) AllSpans(ctx context.Context, q api.SpanQuery) ([]api.Span, ListInfo, error) {
	return follow[api.Span](ctx, c, api.SpanList, q.Values())
}

// AllTraces is AllSpans for traces.
func (c *Client) AllTraces(ctx context.Context, q api.TraceQuery) ([]api.Trace, ListInfo, error) {
	return follow[api.Trace](ctx, c, api.TraceList, q.Values())
}

// AllSessions is AllSpans for sessions.
func (c *Client) AllSessions(ctx context.Context, q api.SessionQuery) ([]api.Session, ListInfo, error) {
	return follow[api.Session](ctx, c, api.SessionList, q.Values())
}

// SpanPages walks the spans of q page by page to the end of the list, q.Limit spans a request
// (the route's default without one), from q's cursor or offset: each request continues from
// the cursor the answer before it gave, and the walk ends at an answer without one. A server
// older than cursors is walked by offset: from its next offset when it cut an answer by size,
// and past a full page. An error ends the walk; the last page's Info.NextCursor resumes it.
// Records flattens the pages and tells a list the scan bound cut.
//
//	for s, err := range client.Records(c.SpanPages(ctx, q)) {
func (c *Client) SpanPages(ctx context.Context, q api.SpanQuery) iter.Seq2[Page[api.Span], error] {
	return pages[api.Span](ctx, c, api.SpanList, q.Values())
}

// TracePages is SpanPages for traces.
func (c *Client) TracePages(ctx context.Context, q api.TraceQuery) iter.Seq2[Page[api.Trace], error] {
	return pages[api.Trace](ctx, c, api.TraceList, q.Values())
}

// SessionPages is SpanPages for sessions.
func (c *Client) SessionPages(ctx context.Context, q api.SessionQuery) iter.Seq2[Page[api.Session], error] {
	return pages[api.Session](ctx, c, api.SessionList, q.Values())
}

// Records yields the records of pages in order and the first error; a walk whose last page
// the server's scan bound cut ends with an error wrapping ErrPartialList, after its records.
func Records[T any](pages iter.Seq2[Page[T], error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		var last ListInfo
		for p, err := range pages {
			if err != nil {
				yield(zero, err)
				return
			}
			for _, r := range p.Records {
				if !yield(r, nil) {
					return
				}
			}
			last = p.Info
		}
		if last.Truncated {
			yield(zero, fmt.Errorf("%w (%d items examined by the last request)", ErrPartialList, last.Scanned))
		}
	}
}

// listPath is the path of list's route.
func listPath(list api.List) string { return "/" + list.Noun }

// listPage sends GET on list's route with q and reads the answer's list headers.
func listPage[T any](ctx context.Context, c *Client, list api.List, q url.Values) ([]T, ListInfo, error) {
	return listPageAt[T](ctx, c, listPath(list), list, q)
}

// listPageAt sends GET on path, a route that takes list's query, with q and reads the
// answer's list headers.
func listPageAt[T any](ctx context.Context, c *Client, path string, list api.List, q url.Values) ([]T, ListInfo, error) {
	var out []T
	var h http.Header
	if err := c.do(ctx, call{method: http.MethodGet, path: path, query: q, header: &h}, &out); err != nil {
		return nil, ListInfo{}, err
	}
	info, err := readListInfo(h, q, limitOf(q, list), len(out))
	if err != nil {
		return nil, ListInfo{}, fmt.Errorf("client: GET %s: %w", path, err)
	}
	return out, info, nil
}

// readListInfo reads the list headers of an answer of n records to the request q for limit
// of them. A continuation that would not move on (the request's own cursor, a next offset not
// past its offset) would loop, and one that cannot be read or sent back would pass a partial
// answer off as complete: all are errors.
func readListInfo(h http.Header, q url.Values, limit, n int) (ListInfo, error) {
	var info ListInfo
	info.Scanned, _ = strconv.Atoi(h.Get(HeaderScanned)) // a count for people: absent is 0
	info.Truncated = strings.EqualFold(strings.TrimSpace(h.Get(HeaderScanTruncated)), "true")
	if v := strings.TrimSpace(h.Get(HeaderNextCursor)); v != "" {
		if len(v) > api.MaxCursorBytes || v == q.Get(api.ParamCursor) {
			return ListInfo{}, fmt.Errorf("the answer's %s %.40q would not continue the list", HeaderNextCursor, v)
		}
		info.NextCursor = v
	}
	if v := strings.TrimSpace(h.Get(HeaderNextOffset)); v != "" {
		offset := offsetOf(q)
		next, err := strconv.Atoi(v)
		if err != nil || next <= offset {
			return ListInfo{}, fmt.Errorf("the answer's %s %q is not an offset past %d", HeaderNextOffset, v, offset)
		}
		info.NextOffset = next
	}
	info.Cut = info.More() && n < limit
	return info, nil
}

// offsetOf is q's offset, 0 when absent or unreadable (the server refuses the latter).
func offsetOf(q url.Values) int {
	n, _ := strconv.Atoi(q.Get(api.ParamOffset))
	return max(n, 0)
}

// limitOf is q's limit, list's default when absent or unreadable (the server refuses the
// latter).
func limitOf(q url.Values, list api.List) int {
	if n, err := strconv.Atoi(q.Get(api.ParamLimit)); err == nil && n > 0 {
		return n
	}
	return list.Limits.Default
}

// continuation sets next, the request that was answered n records with info, to the request
// that reads on, and reports whether there is one. cursors says whether the server is known to
// answer cursors: one that is not may be older than them, and a full page of its answers may
// have more after it, at the offset past it.
func continuation(next url.Values, info ListInfo, n, limit int, cursors bool) bool {
	switch {
	case info.NextCursor != "":
		next.Del(api.ParamOffset)
		next.Set(api.ParamCursor, info.NextCursor)
	case info.NextOffset > 0:
		next.Del(api.ParamCursor)
		next.Set(api.ParamOffset, strconv.Itoa(info.NextOffset))
	case !cursors && n > 0 && n >= limit:
		next.Set(api.ParamOffset, strconv.Itoa(offsetOf(next)+n))
	default:
		return false
	}
	return true
}

// follow sends GET on list's route with q, then from each continuation the server answers,
// asking only for what q's limit (list's default without one) leaves, up to MaxFollowedPages
// requests.
func follow[T any](ctx context.Context, c *Client, list api.List, q url.Values) ([]T, ListInfo, error) {
	limit := limitOf(q, list)
	var all []T
	var sum ListInfo
	next := maps.Clone(q)
	for range MaxFollowedPages {
		recs, info, err := listPage[T](ctx, c, list, next)
		if err != nil {
			return nil, ListInfo{}, err
		}
		all = append(all, recs...)
		sum.Scanned += info.Scanned
		sum.Truncated, sum.NextCursor, sum.NextOffset = info.Truncated, info.NextCursor, info.NextOffset
		// The limit is reached, or the list has ended: whatever followed a full page of a
		// server without cursors is past the limit.
		if len(all) >= limit || !continuation(next, info, len(recs), limitOf(next, list), true) {
			return all, sum, nil
		}
		next.Set(api.ParamLimit, strconv.Itoa(limit-len(all)))
	}
	sum.Cut = true // the bound: NextCursor (or NextOffset) says where the rest starts
	return all, sum, nil
}

// pages walks list's route from q to the end of the list (SpanPages).
func pages[T any](ctx context.Context, c *Client, list api.List, q url.Values) iter.Seq2[Page[T], error] {
	return func(yield func(Page[T], error) bool) {
		next := maps.Clone(q)
		limit := limitOf(q, list)
		for {
			cursors := next.Has(api.ParamCursor) // the server answered one
			recs, info, err := listPage[T](ctx, c, list, next)
			if err != nil {
				yield(Page[T]{}, err)
				return
			}
			if !yield(Page[T]{Records: recs, Info: info}, nil) || !continuation(next, info, len(recs), limit, cursors) {
				return
			}
		}
	}
}

// MaxWholeListPages bounds the requests of a list the server answers whole unless it would pass
// api.MaxAnswerBytes (prompts, their versions and tags, judges, keys, ...): each answer holds
// up to 3 MB, so this is far past any list's size; a longer one is an error, never a partial
// list returned as whole.
const MaxWholeListPages = 1000

// whole reads a list the server answers in one answer unless it would pass api.MaxAnswerBytes:
// GET path, then again from each next offset the server answers (X-Plume-Next-Offset), page
// by page, decoding each answer into a P and returning the first answer and the items of them
// all (items reads a P's list).
func whole[P, T any](ctx context.Context, c *Client, path string, items func(*P) []T) (P, []T, error) {
	var first P
	var all []T
	offset := 0
	for page := range MaxWholeListPages {
		var p P
		var h http.Header
		q := url.Values{}
		if offset > 0 {
			q.Set(api.ParamOffset, strconv.Itoa(offset))
		}
		if err := c.do(ctx, call{method: http.MethodGet, path: path, query: q, header: &h}, &p); err != nil {
			return first, nil, err
		}
		if page == 0 {
			first = p
		}
		all = append(all, items(&p)...)
		info, err := readListInfo(h, q, 0, 0)
		if err != nil {
			return first, nil, fmt.Errorf("client: GET %s: %w", path, err)
		}
		if info.NextOffset == 0 {
			return first, all, nil
		}
		offset = info.NextOffset
	}
	return first, nil, fmt.Errorf("client: GET %s: more than %d answers", path, MaxWholeListPages)
}

// filled reads a page of limit items from offset of a list that pages by limit and offset and
// may answer fewer to stay within api.MaxAnswerBytes (saying where the rest starts): it asks
// again from each next offset for what the page still lacks, so that a short page means the
// list's end, as the spec's paging rule reads it. get reads limit items from offset and
// returns them with the answer's headers; limit 0 is the route's default page, which is then
// read as one request.
func filled[T any](limit, offset int, get func(limit, offset int, h *http.Header) ([]T, error)) ([]T, error) {
	var all []T
	for range MaxWholeListPages {
		var h http.Header
		items, err := get(limit-len(all), offset, &h)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		info, err := readListInfo(h, url.Values{api.ParamOffset: {strconv.Itoa(offset)}}, 0, 0)
		if err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		if info.NextOffset == 0 || limit <= 0 || len(all) >= limit {
			return all, nil
		}
		offset = info.NextOffset
	}
	return nil, fmt.Errorf("client: a page of %d items took more than %d answers", limit, MaxWholeListPages)
}
