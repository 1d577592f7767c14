package dashboard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// sides rebuilds the old and new texts from a diff.
func sides(ops []diffOp) (old, new string) {
	var a, b strings.Builder
	for _, op := range ops {
		if op.Kind != diffIns {
			a.WriteString(op.Text)
		}
		if op.Kind != diffDel {
			b.WriteString(op.Text)
		}
	}
	return a.String(), b.String()
}

func TestDiffText(t *testing.T) {
	// Texts whose changed middle is past maxDiffCells as words (6,000 tokens) but not as lines
	// (1,000), with a change every 100 lines.
	var bigA, bigB strings.Builder
	for i := range 1000 {
		bigA.WriteString("alpha beta gamma\n")
		if i%100 == 0 {
			bigB.WriteString("alpha BETA gamma\n")
		} else {
			bigB.WriteString("alpha beta gamma\n")
		}
	}
	tests := []struct {
		name   string
		a, b   string
		want   []diffOp // nil: only checked to rebuild both texts
		byLine bool
		// inserted is the number of insertions, when want is nil.
		inserted int
	}{
		{"identical", "You are kind.", "You are kind.", []diffOp{{diffSame, "You are kind."}}, false, 0},
		{"both empty", "", "", []diffOp{}, false, 0},
		{"insert", "You are kind.", "You are very kind.",
			[]diffOp{{diffSame, "You are "}, {diffIns, "very "}, {diffSame, "kind."}}, false, 0},
		{"delete", "You are very kind.", "You are kind.",
			[]diffOp{{diffSame, "You are "}, {diffDel, "very "}, {diffSame, "kind."}}, false, 0},
		{"replace", "Answer in French.", "Answer in German.",
			[]diffOp{{diffSame, "Answer in "}, {diffDel, "French."}, {diffIns, "German."}}, false, 0},
		{"whitespace", "a b\nc", "a  b\n\nc",
			[]diffOp{{diffSame, "a"}, {diffDel, " "}, {diffIns, "  "}, {diffSame, "b"}, {diffDel, "\n"}, {diffIns, "\n\n"}, {diffSame, "c"}}, false, 0},
		{"from empty", "", "new text", []diffOp{{diffIns, "new text"}}, false, 0},
		{"to empty", "old text", "", []diffOp{{diffDel, "old text"}}, false, 0},
		{"markup is text", "<b>x</b>", "<script>alert(1)</script>", []diffOp{{diffDel, "<b>x</b>"}, {diffIns, "<script>alert(1)</script>"}}, false, 0},
		{"unicode", "Zoë says hi", "Zoë says hello", []diffOp{{diffSame, "Zoë says "}, {diffDel, "hi"}, {diffIns, "hello"}}, false, 0},
		{"large input falls back to lines", bigA.String(), bigB.String(), nil, true, 10},
		{"too large for lines too", strings.Repeat("a\n", 3000) + "x", strings.Repeat("b\n", 3000) + "x", nil, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diffText(tt.a, tt.b)
			assert.Equal(t, tt.byLine, got.ByLine)
			if tt.want != nil {
				assert.Equal(t, tt.want, append([]diffOp{}, got.Ops...))
			} else {
				n := 0
				for _, op := range got.Ops {
					if op.Kind == diffIns {
						n++
					}
				}
				assert.Equal(t, tt.inserted, n)
			}
			old, new := sides(got.Ops)
			assert.Equal(t, tt.a, old, "the old text without the insertions")
			assert.Equal(t, tt.b, new, "the new text without the deletions")
			for i := 1; i < len(got.Ops); i++ {
				assert.NotEqual(t, got.Ops[i-1].Kind, got.Ops[i].Kind, "runs of one kind are joined")
			}
			if tt.byLine {
				for _, op := range got.Ops[:len(got.Ops)-1] {
					if op.Kind != diffSame {
						assert.True(t, strings.HasSuffix(op.Text, "\n"), "whole lines: %q", op.Text)
					}
				}
			}
		})
	}
}

func FuzzDiffText(f *testing.F) {
	f.Add("You are kind.", "You are very kind.")
	f.Add("a  b\n", "a b\n\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		old, new := sides(diffText(a, b).Ops)
		if old != a || new != b {
			t.Fatalf("diff of %q and %q rebuilds %q and %q", a, b, old, new)
		}
	})
}

func BenchmarkDiffText(b *testing.B) {
	old := strings.Repeat("You are a helpful support agent. Answer briefly.\n", 40)
	new := strings.Replace(old, "briefly", "in full", 20)
	for b.Loop() {
		diffText(old, new)
	}
}
