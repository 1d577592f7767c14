package dashboard

import (
	"net/url"
	"strconv"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// maxOffset is the largest page offset a list page accepts.
const maxOffset = 1_000_000

// offsetOf reads ?offset= from q, a page's first row: 0 when absent, else a whole number from 0
// to maxOffset.
func offsetOf(q url.Values) (int, error) {
	o := q.Get("offset")
	if o == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(o)
	if err != nil || n < 0 || n > maxOffset {
		return 0, errs.Invalid("The page offset must be a whole number from 0 to 1000000.")
	}
	return n, nil
}

// paginate takes the rows of a page read with a limit of perPage+1 at offset and returns the
// rows to show and the URLs of the pages before and after ("" when there is none); link is the
// URL of the page at an offset.
func paginate[T any](rows []T, offset, perPage int, link func(offset int) string) (shown []T, prev, next string) {
	if len(rows) > perPage {
		rows, next = rows[:perPage], link(offset+perPage)
	}
	if offset > 0 {
		prev = link(max(offset-perPage, 0))
	}
	return rows, prev, next
}

// pageURL is path with q's query, if any, and the page offset set (left out when 0).
func pageURL(path string, q url.Values, offset int) string {
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	v.Del("offset")
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// pathPages is the link of paginate for the pages of path (no other query).
func pathPages(path string) func(offset int) string {
	return func(offset int) string { return pageURL(path, nil, offset) }
}

// The lists of traces, spans and sessions, and a session's traces, page by cursor: each page
// links the next by the cursor after its last row (the API's X-Plume-Next-Cursor), and the
// first page, never a page before (a cursor reads on, not back: the browser's Back does).
// A link made before cursors, with ?offset=, still opens its page.

// listPage is where a page of a list starts: from a cursor (?cursor=, with ?row=, the number of
// its first row, which the next links carry for the page's caption), or from an offset.
type listPage struct {
	Offset int
	Cursor string
	// Row is the number of the page's first row; 0 when not known (a cursor without ?row=).
	Row int
}

// listPageOf reads where a page starts from q; a value it cannot use is an errs.Invalid error.
func listPageOf(q url.Values) (listPage, error) {
	offset, err := offsetOf(q)
	if err != nil {
		return listPage{}, err
	}
	p := listPage{Offset: offset, Cursor: q.Get("cursor"), Row: offset + 1}
	switch {
	case p.Cursor == "":
		return p, nil
	case len(p.Cursor) > api.MaxCursorBytes:
		return p, errs.Invalid("The page cursor is longer than %d bytes: follow the list's Next page link.", api.MaxCursorBytes)
	case offset > 0:
		return p, errs.Invalid("A page starts at a cursor or at an offset, not both.")
	}
	p.Row = 0
	if r := q.Get("row"); r != "" {
		n, err := strconv.Atoi(r)
		if err != nil || n < 1 || n > maxOffset+1 {
			return p, errs.Invalid("The page's row must be a whole number from 1 to %d.", maxOffset+1)
		}
		p.Row = n
	}
	return p, nil
}

// pager is the paging of a list page: the numbers of its rows and the links to the list's
// first page and to the next.
type pager struct {
	// First and Last number the page's rows; 0 when not known.
	First, Last int
	// Start links the first page ("" on it), Next the page after this one ("" on the last).
	Start, Next string
}

// paging is the pager of the page of n rows at p, whose list goes on from the cursor next (""
// when it has ended); link is the URL of the page from a cursor with the number of its first
// row ("" and 0: the first page).
func (p listPage) paging(n int, next string, link func(cursor string, row int) string) pager {
	var pg pager
	if p.Row > 0 && n > 0 {
		pg.First, pg.Last = p.Row, p.Row+n-1
	}
	if p.Offset > 0 || p.Cursor != "" {
		pg.Start = link("", 0)
	}
	if next != "" {
		row := 0
		if pg.Last > 0 {
			row = pg.Last + 1
		}
		pg.Next = link(next, row)
	}
	return pg
}

// cursorURL is path with q's query, if any, and the page set: from cursor with the number of
// its first row (each left out when "" or 0).
func cursorURL(path string, q url.Values, cursor string, row int) string {
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	v.Del("offset")
	v.Del("cursor")
	v.Del("row")
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if row > 0 && cursor != "" {
		v.Set("row", strconv.Itoa(row))
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}
