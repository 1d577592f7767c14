package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/plumehq/plume/api"
)

// Headers of the tracing lists (GET /spans, /traces, /sessions) that say how complete an
// answer is.
const (
	// HeaderScanned is how many items the server examined.
	HeaderScanned = api.ScannedHeader
	// HeaderScanTruncated is "true" when the server stopped at its scan bound (50,000 spans,
	// 10,000 traces or sessions, 30 days without created_after): the answer covers the newest
	// part of the window only.
	HeaderScanTruncated = api.ScanTruncatedHeader
	// HeaderNextOffset is the offset of the records the server left out of an answer it cut by
	// size (api.MaxAnswerBytes); the same query from that offset answers them.
	HeaderNextOffset = api.NextOffsetHeader
)

// MaxFollowedPages bounds AllSpans, AllTraces and AllSessions: the requests each makes at most.
const MaxFollowedPages = 50

// ListInfo is what the server said about a list answer besides its records.
type ListInfo struct {
	// Scanned is how many items the server examined (X-Plume-Scanned); summed over the
	// requests of AllSpans and its kind.
	Scanned int
	// Truncated is true when the server's scan bound cut the query (X-Plume-Scan-Truncated):
	// older matches of the window may be missing, whatever the paging. Narrow the window with
	// created_after / created_before to reach them.
	Truncated bool
	// NextOffset is, when the server cut the answer by size (X-Plume-Next-Offset), the offset
	// to ask from for the rest of it; 0 when nothing was left out.
	NextOffset int
}

// Partial reports whether the answer lacks records of the query: cut by the scan bound or by
// size.
func (i ListInfo) Partial() bool { return i.Truncated || i.NextOffset > 0 }

// SpansPage lists spans as Spans does, with what the server said of the answer's
// completeness.
func (c *Client) SpansPage(ctx context.Context, q api.SpanQuery) ([]api.Span, ListInfo, error) {
	return listPage[api.Span](ctx, c, "/spans", q.Values())
}

// TracesPage lists traces as Traces does, with what the server said of the answer's
// completeness.
func (c *Client) TracesPage(ctx context.Context, q api.TraceQuery) ([]api.Trace, ListInfo, error) {
	return listPage[api.Trace](ctx, c, "/traces", q.Values())
}

// SessionsPage lists sessions as Sessions does, with what the server said of the answer's
// completeness.
func (c *Client) SessionsPage(ctx context.Context, q api.SessionQuery) ([]api.Session, ListInfo, error) {
	return listPage[api.Session](ctx, c, "/sessions", q.Values())
}

// AllSpans lists spans as SpansPage does and, when the server cuts the answer by size, asks
// for the rest from its next offset, up to MaxFollowedPages requests. The answer's info is
// Truncated when any request's scan was cut, and has a NextOffset when the bound left records
// out.
func (c *Client) AllSpans(ctx context.Context, q api.SpanQuery) ([]api.Span, ListInfo, error) {
	return follow[api.Span](ctx, c, "/spans", q.Values())
}

// AllTraces is AllSpans for traces.
func (c *Client) AllTraces(ctx context.Context, q api.TraceQuery) ([]api.Trace, ListInfo, error) {
	return follow[api.Trace](ctx, c, "/traces", q.Values())
}

// AllSessions is AllSpans for sessions.
func (c *Client) AllSessions(ctx context.Context, q api.SessionQuery) ([]api.Session, ListInfo, error) {
	return follow[api.Session](ctx, c, "/sessions", q.Values())
}

// listPage sends GET path?q and reads the answer's list headers.
func listPage[T any](ctx context.Context, c *Client, path string, q url.Values) ([]T, ListInfo, error) {
	var out []T
	var h http.Header
	if err := c.do(ctx, call{method: http.MethodGet, path: path, query: q, header: &h}, &out); err != nil {
		return nil, ListInfo{}, err
	}
	info, err := readListInfo(h, offsetOf(q))
	if err != nil {
		return nil, ListInfo{}, fmt.Errorf("client: GET %s: %w", path, err)
	}
	return out, info, nil
}

// readListInfo reads the list headers of an answer to a request from offset. A next offset
// that is not past offset would loop, and one that cannot be read would pass a partial answer
// off as complete: both are errors.
func readListInfo(h http.Header, offset int) (ListInfo, error) {
	var info ListInfo
	info.Scanned, _ = strconv.Atoi(h.Get(HeaderScanned)) // a count for people: absent is 0
	info.Truncated = strings.EqualFold(strings.TrimSpace(h.Get(HeaderScanTruncated)), "true")
	if v := strings.TrimSpace(h.Get(HeaderNextOffset)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= offset {
			return ListInfo{}, fmt.Errorf("the answer's %s %q is not an offset past %d", HeaderNextOffset, v, offset)
		}
		info.NextOffset = n
	}
	return info, nil
}

// offsetOf is q's offset, 0 when absent or unreadable (the server refuses the latter).
func offsetOf(q url.Values) int {
	n, _ := strconv.Atoi(q.Get(api.ParamOffset))
	return max(n, 0)
}

// follow sends GET path?q, then again from each next offset the server answers, asking only
// for what q's limit leaves (without a limit, each request answers up to the route's default
// page).
func follow[T any](ctx context.Context, c *Client, path string, q url.Values) ([]T, ListInfo, error) {
	limit, hasLimit := 0, q.Has(api.ParamLimit)
	if hasLimit {
		limit, _ = strconv.Atoi(q.Get(api.ParamLimit))
	}
	var all []T
	var sum ListInfo
	next := url.Values{}
	for k, v := range q {
		next[k] = v
	}
	for range MaxFollowedPages {
		recs, info, err := listPage[T](ctx, c, path, next)
		if err != nil {
			return nil, ListInfo{}, err
		}
		all = append(all, recs...)
		sum.Scanned += info.Scanned
		sum.Truncated = sum.Truncated || info.Truncated
		sum.NextOffset = info.NextOffset
		if info.NextOffset == 0 || (hasLimit && len(all) >= limit) {
			sum.NextOffset = 0
			return all, sum, nil
		}
		next.Set(api.ParamOffset, strconv.Itoa(info.NextOffset))
		if hasLimit {
			next.Set(api.ParamLimit, strconv.Itoa(limit-len(all)))
		}
	}
	return all, sum, nil // the bound: sum.NextOffset says where the rest starts
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
		info, err := readListInfo(h, offset)
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
		info, err := readListInfo(h, offset)
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
