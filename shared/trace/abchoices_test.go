package trace

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMergeChoices(t *testing.T) {
	a := ABChoice{Name: "t1", Variant: "a"}
	b := ABChoice{Name: "t2", Variant: "b"}
	tests := []struct {
		name          string
		stored, later []ABChoice
		want          []ABChoice
	}{
		{name: "none", want: nil},
		{name: "a later write adds its choices", stored: []ABChoice{a}, later: []ABChoice{b}, want: []ABChoice{a, b}},
		{name: "a write without choices keeps them", stored: []ABChoice{a, b}, want: []ABChoice{a, b}},
		{name: "the stored variant of a test stays", stored: []ABChoice{a}, later: []ABChoice{{Name: "t1", Variant: "z"}, b}, want: []ABChoice{a, b}},
		{name: "the earliest are kept at the limit", stored: choicesN(MaxABChoices), later: []ABChoice{b}, want: choicesN(MaxABChoices)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(Span{ABChoices: tt.stored}, Span{ABChoices: tt.later}).ABChoices
			assert.Equal(t, tt.want, got)
			assert.NoError(t, checkChoices(got))
		})
	}
}

func choicesN(n int) []ABChoice {
	out := make([]ABChoice, n)
	for i := range out {
		out[i] = ABChoice{Name: string(rune('a' + i)), Variant: "v"}
	}
	return out
}
