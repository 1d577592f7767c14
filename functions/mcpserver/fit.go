package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/plumehq/plume/api"
)

// maxToolOutput bounds the JSON of a tool's output. The SDK answers an output twice, as
// structuredContent and as the text of its content, where JSON escapes it once more (each
// quote and backslash doubles), so that an output of n bytes makes a tool answer of at most
// about 3n: within api.MaxAnswerBytes, and so within Lambda's 6 MB response payload behind API
// Gateway or the Function URL.
const maxToolOutput = api.MaxAnswerBytes / 3

// errTooLarge is the error of an output past maxToolOutput that no shorter page can fix.
var errTooLarge = errors.New("the answer would pass the tool server's answer limit")

// outputLen is the length of out's JSON encoding.
func outputLen(out any) int {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return 0 // the SDK reports an output it cannot encode
	}
	return buf.Len() - 1
}

// fitPage returns the output of a page of a list: page(n) makes the output of the list's first
// n items of the page (n from 1 to total); the answer is page(total) when it is within
// maxToolOutput, else page(n) for the largest n that is (each page output says where the next
// starts from n). An item alone past the limit is errTooLarge.
func fitPage[Out any](total int, page func(n int) Out) (Out, error) {
	out := page(total)
	if total <= 1 || outputLen(out) <= maxToolOutput {
		return out, fitOutput(out)
	}
	lo, hi := 0, total-1 // page(hi+1) does not fit; page(lo) fits, or lo is 0
	for lo < hi {
		n := (lo + hi + 1) / 2
		if outputLen(page(n)) <= maxToolOutput {
			lo = n
		} else {
			hi = n - 1
		}
	}
	if lo == 0 {
		return page(1), fitOutput(page(1))
	}
	return page(lo), nil
}

// fitOutput is nil for an output within maxToolOutput, errTooLarge with what to do otherwise.
func fitOutput(out any) error {
	if n := outputLen(out); n > maxToolOutput {
		return fmt.Errorf("%w: %d bytes of output, at most %d (a tool's answer travels in Lambda's 6 MB response): ask for less, a smaller page or a narrower query; the REST API reads the record whole",
			errTooLarge, n, maxToolOutput)
	}
	return nil
}

// leftOut is the next_offset of a page from offset that holds n of the total items left from
// there: null when it holds them all.
func leftOut(offset, n, total int) *int {
	if n >= total {
		return nil
	}
	return new(offset + n)
}
