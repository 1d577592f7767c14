package dashboard

import (
	"slices"
	"strings"
	"unicode"
)

// diffKind says what a run of a diff is: in both texts, only in the new one, only in the old.
type diffKind string

const (
	diffSame diffKind = "same"
	diffIns  diffKind = "ins"
	diffDel  diffKind = "del"
)

// diffOp is a run of text of one kind. The template writes Text escaped, inside <ins> or <del>
// by Kind.
type diffOp struct {
	Kind diffKind
	Text string
}

// diffResult is a diff of two texts: the runs that, read without the deletions, are the new
// text and, read without the insertions, the old one.
type diffResult struct {
	Ops []diffOp
	// ByLine is set when the texts were too far apart for a word diff within maxDiffCells,
	// and were compared line by line.
	ByLine bool
}

// Changed reports whether the texts differ.
func (d diffResult) Changed() bool {
	return slices.ContainsFunc(d.Ops, func(op diffOp) bool { return op.Kind != diffSame })
}

// maxDiffCells bounds the LCS table of a diff (int32 cells, 16 MiB), after the common prefix
// and suffix are set aside: about 2,000 × 2,000 tokens. A version has up to
// prompt.MaxContentBytes of text, far more tokens than an LCS table can hold, so a word diff
// past the bound falls back to lines, and lines past it to replacing the changed middle whole.
const maxDiffCells = 4 << 20

// diffText is a word-level diff of a and b: the texts cut into runs of whitespace and runs of
// everything else (whitespace kept, so that the runs join back into the texts), compared by
// longest common subsequence.
func diffText(a, b string) diffResult {
	if ops, exact := diffTokens(splitWords(a), splitWords(b)); exact {
		return diffResult{Ops: ops}
	}
	ops, _ := diffTokens(splitLines(a), splitLines(b))
	return diffResult{Ops: ops, ByLine: true}
}

// splitWords cuts s into maximal runs of whitespace and of other characters.
func splitWords(s string) []string {
	var out []string
	start, space := 0, false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if i > start && sp != space {
			out = append(out, s[start:i])
			start = i
		}
		space = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitLines cuts s into lines, each with its "\n".
func splitLines(s string) []string {
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// diffTokens diffs two token lists. exact is false when the changed middle (past the common
// prefix and suffix) was over maxDiffCells: it is then one deletion and one insertion.
func diffTokens(a, b []string) (ops []diffOp, exact bool) {
	var d diffBuilder
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	d.add(diffSame, a[:p]...)
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	exact = int64(len(ma)+1)*int64(len(mb)+1) <= maxDiffCells
	if exact {
		lcsOps(&d, ma, mb)
	} else {
		d.add(diffDel, ma...)
		d.add(diffIns, mb...)
	}
	d.add(diffSame, a[len(a)-s:]...)
	return d.result(), exact
}

// lcsOps adds the diff of a and b by a longest common subsequence table, deletions before
// insertions where both fit.
func lcsOps(d *diffBuilder, a, b []string) {
	n, m := len(a), len(b)
	w := m + 1
	// l[i*w+j] is the length of the LCS of a[i:] and b[j:].
	l := make([]int32, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i*w+j] = l[(i+1)*w+j+1] + 1
			} else {
				l[i*w+j] = max(l[(i+1)*w+j], l[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			d.add(diffSame, a[i])
			i, j = i+1, j+1
		case l[(i+1)*w+j] >= l[i*w+j+1]:
			d.add(diffDel, a[i])
			i++
		default:
			d.add(diffIns, b[j])
			j++
		}
	}
	d.add(diffDel, a[i:]...)
	d.add(diffIns, b[j:]...)
}

// diffBuilder joins neighbouring tokens of one kind into one run (without copying a long
// run over and over: its tokens are joined once, by result).
type diffBuilder struct {
	kinds []diffKind
	runs  [][]string
}

func (d *diffBuilder) add(k diffKind, tokens ...string) {
	if len(tokens) == 0 {
		return
	}
	if n := len(d.kinds); n > 0 && d.kinds[n-1] == k {
		d.runs[n-1] = append(d.runs[n-1], tokens...)
		return
	}
	d.kinds = append(d.kinds, k)
	d.runs = append(d.runs, append([]string(nil), tokens...))
}

func (d *diffBuilder) result() []diffOp {
	ops := make([]diffOp, len(d.kinds))
	for i, k := range d.kinds {
		ops[i] = diffOp{Kind: k, Text: strings.Join(d.runs[i], "")}
	}
	return ops
}
