package mcpserver_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
)

// TestABTestTools: list-ab-tests and get-ab-test answer the API's list and report, in the
// key's project only.
func TestABTestTools(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	a := s.api.A
	for i, v := range []string{"a", "b", "b"} {
		id := uuid.NewString()
		s.api.MustDo(t, "POST", "/ab-choices", a.Key, map[string]any{"entity_type": "span", "entity_id": id, "choice_name": "tone",
			"variant_key": v, "variant_value": v, "variants": map[string]any{"a": "formal", "b": "casual"},
			"weights": map[string]any{"a": 0.5, "b": 0.5}, "duration_days": 5})
		s.api.MustDo(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": []any{
			map[string]any{"entity_type": "span", "entity_id": id, "name": "resolved", "value": i != 1}}})
	}
	cs, err := s.connect(t, a.Key)
	require.NoError(t, err)
	var list mcpserver.ListABTestsOutput
	res := call(t, cs, "list-ab-tests", map[string]any{}, &list)
	require.False(t, res.IsError, text(res))
	require.Len(t, list.Tests, 1)
	assert.Equal(t, "tone", list.Tests[0].Name)

	var got mcpserver.GetABTestOutput
	res = call(t, cs, "get-ab-test", map[string]any{"name": "tone"}, &got)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, int64(2), got.Report.Results[1].Choices)
	assert.Equal(t, 0.5, got.Report.Results[1].Signals[0].Mean)

	other, err := s.connect(t, s.api.B.Key)
	require.NoError(t, err)
	res = call(t, other, "get-ab-test", map[string]any{"name": "tone"}, nil)
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "not_found")
	res = call(t, cs, "get-ab-test", map[string]any{}, nil)
	require.True(t, res.IsError)
}
