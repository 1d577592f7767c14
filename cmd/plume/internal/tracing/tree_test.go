package tracing

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/api"
)

func TestTree(t *testing.T) {
	span := func(id, parent string) api.Span {
		s := api.Span{ID: id, Name: id}
		if parent != "" {
			s.ParentSpanID = &parent
		}
		return s
	}
	tests := []struct {
		name  string
		spans []api.Span
		want  []string
	}{
		{"children under their parents, in the order listed",
			[]api.Span{span("root", ""), span("b", "root"), span("a", "root"), span("b1", "b"), span("a1", "a")},
			[]string{"root", "└─ b", "│ └─ b1", "└─ a", "│ └─ a1"}},
		{"a child listed before its parent", []api.Span{span("child", "root"), span("root", "")}, []string{"root", "└─ child"}},
		{"a parent that is not listed: a root", []api.Span{span("orphan", "gone"), span("root", "")}, []string{"orphan", "root"}},
		{"its own parent", []api.Span{span("self", "self")}, []string{"self"}},
		{"a cycle of parents", []api.Span{span("x", "y"), span("y", "x")}, []string{"x", "└─ y"}},
		{"nothing", nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{}
			for _, r := range tree(tt.spans) {
				got = append(got, r.Tree)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
