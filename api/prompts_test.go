package api_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/api"
)

func TestSlugsAndTags(t *testing.T) {
	for _, tt := range []struct {
		s         string
		slug, tag bool
	}{
		{"support-bot", true, true},
		{"v2", true, true},
		{"", false, false},
		{"Support", false, false},
		{"a_b", false, false},
		{"é", false, false},
		{strings.Repeat("a", 64), true, true},
		{strings.Repeat("a", 65), true, false},
		{strings.Repeat("a", 128), true, false},
		{strings.Repeat("a", 129), false, false},
	} {
		assert.Equal(t, tt.slug, api.IsSlug(tt.s), "IsSlug(%q)", tt.s)
		assert.Equal(t, tt.tag, api.IsTag(tt.s), "IsTag(%q)", tt.s)
	}
}
