package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// Page writes items, the page of a list read at offset, as a 200 JSON array: all of them, or
// the longest prefix whose encoding (the array with its brackets and final newline, as sent)
// fits in budget bytes, and never fewer than one item, so that paging always moves on. A cut
// answer says so and where the rest starts (NextOffset: offset plus the items answered).
// Handlers pass api.MaxAnswerBytes as budget.
//
// Each item is encoded once, into the answer's buffer; the one that does not fit is dropped.
func Page[T any](w http.ResponseWriter, r *http.Request, items []T, offset, budget int) {
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
	if n < len(items) {
		NextOffset(w, r, offset+n)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes()) // The status is sent; a failed write means the client left.
}
