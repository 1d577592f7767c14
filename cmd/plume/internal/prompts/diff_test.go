package prompts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUnified(t *testing.T) {
	lines := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + i))
		}
		return out
	}
	base := lines(12) // a..l
	changed := append([]string(nil), base...)
	changed[1], changed[10] = "B", "K" // two changes 9 lines apart: two hunks

	tests := []struct {
		name string
		a, b string
		want string
	}{
		{"equal", "x\ny", "x\ny", ""},
		{"added line", "x", "x\ny", "--- a\n+++ b\n@@ -1,1 +1,2 @@\n x\n+y\n"},
		{"two hunks", strings.Join(base, "\n"), strings.Join(changed, "\n"),
			"--- a\n+++ b\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -8,5 +8,5 @@\n h\n i\n j\n-k\n+K\n l\n"},
		{"close changes, one hunk", "a\nb\nc\nd\ne", "A\nb\nc\nd\nE",
			"--- a\n+++ b\n@@ -1,5 +1,5 @@\n-a\n+A\n b\n c\n d\n-e\n+E\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, unified("a", "b", tt.a, tt.b))
		})
	}
}
