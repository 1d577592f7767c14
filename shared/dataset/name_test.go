package dataset

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIsName(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want bool
	}{
		{"one letter", "a", true},
		{"with space, dot, underscore, hyphen", "support questions_v1.2-b", true},
		{"128 bytes", "a" + strings.Repeat("b", 127), true},
		{"129 bytes", "a" + strings.Repeat("b", 128), false},
		{"empty", "", false},
		{"leading space", " a", false},
		{"leading dot", ".a", false},
		{"slash", "a/b", false},
		{"non-ASCII", "é", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, IsName(tt.s))
		})
	}
}
