package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// Every answer stays within api.MaxAnswerBytes, so that it fits Lambda's response payload
// whatever its content. A list answer that would not holds fewer items and says where the rest
// starts (NextOffset): Page for the tracing lists, List for the lists read whole, Fit for the
// others. An answer to a write that echoes what it wrote (POST /spans) holds what fits and
// says how many it left out (Omitted).

// answerSlack is what the rest of an answer may grow by between its measure and its encoding
// (a count of a few more digits).
const answerSlack = 256

// Fit returns how many of items, from the first, an answer holds: all of them, or the longest
// prefix whose JSON array encoding, with rest more bytes of the answer around it, is at most
// api.MaxAnswerBytes; never fewer than one (an item alone is answered whatever its size, so
// that paging moves on). Items are encoded to be measured; the error is an encoding's.
func Fit[T any](items []T, rest int) (int, error) {
	budget := api.MaxAnswerBytes - rest - answerSlack
	size := len("[]")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, it := range items {
		buf.Reset()
		if err := enc.Encode(it); err != nil {
			return 0, err
		}
		size += buf.Len() - 1 // Encode's newline
		if i > 0 {
			size++ // the comma
		}
		if i > 0 && size > budget {
			return i, nil
		}
	}
	return len(items), nil
}

// encodedLen is the length of v's JSON encoding as JSON writes it, newline included.
func encodedLen(v any) (int, error) {
	var n countingWriter
	enc := json.NewEncoder(&n)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return int(n), err
}

type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// NextOffset says that an answer to r holds its list only up to next, where the rest starts:
// api.NextOffsetHeader and a Link header to r's URL with that offset, of rel "next"
// (https://www.rfc-editor.org/rfc/rfc8288).
func NextOffset(w http.ResponseWriter, r *http.Request, next int) {
	s := strconv.Itoa(next)
	u := *r.URL
	q := u.Query()
	q.Set(api.ParamOffset, s)
	u.RawQuery = q.Encode()
	h := w.Header()
	h.Set(api.NextOffsetHeader, s)
	h.Set("Link", "<"+u.RequestURI()+`>; rel="next"`)
}

// Offset reads the ?offset= of a list that pages only by offset (List): 0 when absent, an
// invalid_request error when it is not an integer from 0 to api.MaxListOffset.
func Offset(r *http.Request) (int, error) {
	v := r.URL.Query().Get(api.ParamOffset)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > api.MaxListOffset {
		return 0, errs.Invalid("%s must be an integer from 0 to %d, got %q", api.ParamOffset, api.MaxListOffset, v)
	}
	return n, nil
}

// List answers a list read whole: items from the request's ?offset= (Offset), as many as fit
// (Fit), in the body wrap makes of them (the items themselves for an array answer), saying
// where the rest starts when some are left out (NextOffset).
func List[T any](w http.ResponseWriter, r *http.Request, items []T, wrap func([]T) any) {
	offset, err := Offset(r)
	if err != nil {
		Error(w, r, err)
		return
	}
	items = items[min(offset, len(items)):]
	body, n, err := fitted(items, wrap)
	if err != nil {
		Error(w, r, err)
		return
	}
	if n < len(items) {
		NextOffset(w, r, offset+n)
	}
	writeJSON(w, http.StatusOK, body)
}

// fitted is the JSON answer wrap makes of items, as many as fit (Fit), and how many that is.
// The whole answer is encoded first: when it fits, as almost every answer does, that one
// encoding is what is sent. Only an answer past api.MaxAnswerBytes is measured item by item
// and encoded again, cut.
func fitted[T any](items []T, wrap func([]T) any) ([]byte, int, error) {
	body, err := encode(wrap(items))
	if err != nil || len(body) <= api.MaxAnswerBytes {
		return body, len(items), err
	}
	n, err := fitIn(items, wrap)
	if err != nil {
		return nil, 0, err
	}
	body, err = encode(wrap(items[:n]))
	return body, n, err
}

// fitIn is Fit for items answered in the body wrap makes of them.
func fitIn[T any](items []T, wrap func([]T) any) (int, error) {
	empty, err := encodedLen(wrap(items[:0]))
	if err != nil {
		return 0, err
	}
	return Fit(items, empty-len("[]"))
}

// Cut is Fit for a page read at offset whose answer adds only a few small fields to its items
// (a limit, an offset, a total): the items that fit, and when some are left out it says where
// they start (NextOffset).
func Cut[T any](w http.ResponseWriter, r *http.Request, items []T, offset int) ([]T, error) {
	n, err := Fit(items, answerSlack)
	if err != nil {
		return nil, err
	}
	if n < len(items) {
		NextOffset(w, r, offset+n)
	}
	return items[:n], nil
}

// Array is the wrap of List for an answer that is the array itself.
func Array[T any](items []T) any { return items }

// Omitted says that an answer to a write holds only part of what was written, the first items
// in request order, and how many it left out (api.OmittedHeader); they were written all the
// same.
func Omitted(w http.ResponseWriter, n int) {
	w.Header().Set(api.OmittedHeader, strconv.Itoa(n))
}

// Written answers items, what a write stored, in the body wrap makes of them: as many as fit
// (Fit), saying how many it left out (Omitted).
func Written[T any](w http.ResponseWriter, r *http.Request, items []T, wrap func([]T) any) {
	body, n, err := fitted(items, wrap)
	if err != nil {
		Error(w, r, err)
		return
	}
	if n < len(items) {
		Omitted(w, len(items)-n)
	}
	writeJSON(w, http.StatusOK, body)
}
