package dashboard

import (
	"net/url"
	"strconv"

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
