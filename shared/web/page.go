package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/plumehq/plume/api"
)

// Paging is where a page's items sit in their list.
type Paging struct {
	// Offset is the page's offset in the list, unless FromCursor.
	Offset int
	// FromCursor is true for a page read from a cursor, whose offset is not known: a cut
	// answer says only where it continues (api.NextCursorHeader).
	FromCursor bool
	// CursorAfter is the cursor that continues the list after item i (nil: the list has no
	// cursors).
	CursorAfter func(i int) string
	// Next is the cursor that continues the list after the last item, "" when the list ends
	// there. It may be past CursorAfter of the last item: a page that ended early skipped keys.
	Next string
}

// Page writes items, a page of a list, as a 200 JSON array: all of them, or the longest
// prefix whose encoding (the array with its brackets and final newline, as sent) fits in
// budget bytes, and never fewer than one item, so that paging always moves on. An answer that
// more items may follow says where they start: api.NextCursorHeader (the cursor after its last
// item) and a Link header to the request's URL with that cursor, of rel "next"
// (https://www.rfc-editor.org/rfc/rfc8288); a page cut by size and read from an offset also
// says api.NextOffsetHeader (its offset plus the items answered). Handlers pass
// api.MaxAnswerBytes as budget.
//
// Each item is encoded once, into the answer's buffer; the one that does not fit is dropped.
func Page[T any](w http.ResponseWriter, r *http.Request, items []T, p Paging, budget int) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	buf.WriteByte('[')
	n := 0
	for ; n < len(items); n++ {
		mark := buf.Len()
		if n > 0 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(items[n]); err != nil {
			Error(w, r, fmt.Errorf("encode item %d of a page: %w", n, err))
			return
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		if n > 0 && buf.Len()+len("]\n") > budget {
			buf.Truncate(mark)
			break
		}
	}
	buf.WriteString("]\n")
	h := w.Header()
	if n < len(items) && !p.FromCursor {
		NextOffset(w, r, p.Offset+n) // and a Link to that offset, unless a cursor's replaces it
	}
	next := p.Next
	if n < len(items) && p.CursorAfter != nil {
		next = p.CursorAfter(n - 1)
	}
	if next != "" {
		u := *r.URL
		q := u.Query()
		q.Del(api.ParamOffset)
		q.Set(api.ParamCursor, next)
		u.RawQuery = q.Encode()
		h.Set(api.NextCursorHeader, next)
		h.Set("Link", "<"+u.RequestURI()+`>; rel="next"`)
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes()) // The status is sent; a failed write means the client left.
}
