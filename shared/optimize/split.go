package optimize

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
)

// Split is a run's examples in three parts that share no example: Train, which strategies learn
// from (reflections read its feedback, demonstrations are taken from it); Validation, on which
// they score their candidates; and Holdout, on which the runner compares the best candidate
// with the baseline. No strategy sees Holdout, so the comparison is on examples the candidate
// was not chosen for. Each part is ordered by example id.
type Split struct {
	Train      []Example `json:"train"`
	Validation []Example `json:"validation"`
	Holdout    []Example `json:"holdout"`
}

// SplitExamples splits examples about 60/20/20 into train, validation and holdout. The split
// depends only on the examples' ids and seed, never on their order: each example is ranked by
// the SHA-256 of the seed (8 bytes, big-endian) and its id, the lowest ranks are train, the
// highest holdout. A run that is replayed, or resumed with its examples read again in another
// order, splits them the same way; another seed splits them another way.
//
// The parts are sized from the count, not drawn per example, so that small sets get every
// part they can have (a draw of 60/20/20 leaves 5 examples without a holdout one time in three):
// validation and holdout have round(n/5) examples each, at least one, and train the rest.
// Below three examples there is no holdout: one example is train only, two are one train and
// one validation. The runner refuses to compare on fewer than three.
//
// Ids are expected to be unique, as LoadExamples's are.
func SplitExamples(examples []Example, seed int64) Split {
	type ranked struct {
		rank [sha256.Size]byte
		ex   Example
	}
	rs := make([]ranked, len(examples))
	for i, ex := range examples {
		key := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(ex.ID)), uint64(seed))
		rs[i] = ranked{rank: sha256.Sum256(append(key, ex.ID...)), ex: ex}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := bytes.Compare(a.rank[:], b.rank[:]); c != 0 {
			return c
		}
		return strings.Compare(a.ex.ID, b.ex.ID)
	})

	n := len(rs)
	validation, holdout := splitSizes(n)
	parts := [3][]Example{}
	for i, r := range rs {
		switch {
		case i < n-validation-holdout:
			parts[0] = append(parts[0], r.ex)
		case i < n-holdout:
			parts[1] = append(parts[1], r.ex)
		default:
			parts[2] = append(parts[2], r.ex)
		}
	}
	for _, p := range parts {
		slices.SortFunc(p, func(a, b Example) int { return strings.Compare(a.ID, b.ID) })
	}
	return Split{Train: parts[0], Validation: parts[1], Holdout: parts[2]}
}

// splitSizes returns how many of n examples are validation and holdout: round(n/5) each, at
// least one from three examples on; two examples have a validation one and no holdout.
func splitSizes(n int) (validation, holdout int) {
	switch {
	case n < 2:
		return 0, 0
	case n == 2:
		return 1, 0
	}
	fifth := max(1, (n+2)/5) // n/5 rounded: a fifth of an integer is never a half
	return fifth, fifth
}
