package trace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/plumehq/plume/shared/errs"
)

// maxReasonsInError is how many per-span reasons the error of an all-invalid batch lists.
const maxReasonsInError = 3

// InRequest returns refused, indexed by the valid spans of a decoded batch (IngestBatch's
// Refused over DecodeBatch's spans), at their positions in the request instead, merged with the
// decoder's own rejections, by position.
func InRequest(decoded, refused []Rejected) []Rejected {
	taken := make(map[int]bool, len(decoded))
	for _, r := range decoded {
		taken[r.Index] = true
	}
	out := slices.Clone(decoded)
	pos, valid := 0, 0
	for _, r := range refused { // by index, as IngestBatch returns them
		for ; taken[pos] || valid < r.Index; pos++ {
			if !taken[pos] {
				valid++
			}
		}
		r.Index = pos
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Rejected) int { return a.Index - b.Index })
	return out
}

// NoValidSpan is the error of a batch none of whose spans was stored: it names the first
// reasons, and how many more there are.
func NoValidSpan(rejected []Rejected) error {
	reasons := make([]string, 0, maxReasonsInError)
	for _, r := range rejected[:min(len(rejected), maxReasonsInError)] {
		reasons = append(reasons, fmt.Sprintf("[%d] %s", r.Index, r.Error))
	}
	more := ""
	if n := len(rejected) - len(reasons); n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	return errs.Invalid("no valid span in the batch: %s%s", strings.Join(reasons, "; "), more)
}
