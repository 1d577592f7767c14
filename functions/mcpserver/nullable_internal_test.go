package mcpserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSchemaAllowsNilMaps: a nil map encodes as null, which the output schema must accept; a
// struct stays an object.
func TestSchemaAllowsNilMaps(t *testing.T) {
	type inner struct {
		Tags map[string]string `json:"tags"`
	}
	type out struct {
		Inner  inner          `json:"inner"`
		Scores map[string]int `json:"scores"`
		List   []inner        `json:"list"`
	}
	s := schemaFor[out]()
	assert.Equal(t, "object", s.Type, "the root stays an object")
	assert.Equal(t, []string{"null", "object"}, s.Properties["scores"].Types)
	assert.Equal(t, "object", s.Properties["inner"].Type)
	assert.Equal(t, []string{"null", "object"}, s.Properties["inner"].Properties["tags"].Types)
	resolved, err := s.Resolve(nil)
	require.NoError(t, err)
	assert.NoError(t, resolved.Validate(map[string]any{"inner": map[string]any{"tags": nil}, "scores": nil, "list": nil}))
}
