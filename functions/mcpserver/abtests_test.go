package mcpserver_test

import (
	"net/http/httptest"
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

// TestPromptSplitTools: split-prompt-tag and end-prompt-split change nothing without confirm:
// true (and say what they would do); with it they start and end a split, which get-ab-test
// reports as a test of the prompt's versions; another project's key cannot end it.
func TestPromptSplitTools(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	a := s.api.A
	s.api.EnsurePrompt(t, a, "support-bot", "You help.")
	s.api.EnsurePrompt(t, a, "support-bot", "You help, kindly.")
	s.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/prompts/support-bot/tags/production:pin", a.Key, map[string]any{"version": 1})
	cs, err := s.connect(t, a.Key)
	require.NoError(t, err)
	args := map[string]any{"prompt_slug": "support-bot", "tag": "production", "duration_days": 7, "name": "bot-v2",
		"variants": []any{map[string]any{"version": 1, "weight": 0.5}, map[string]any{"version": 2, "weight": 0.5}}}

	res := call(t, cs, "split-prompt-tag", args, nil)
	require.True(t, res.IsError)
	assert.Contains(t, text(res), `not confirmed, nothing changed: would split tag "production" of prompt support-bot between version 1 (weight 0.5), version 2 (weight 0.5) for 7 days`)
	var list mcpserver.ListABTestsOutput
	call(t, cs, "list-ab-tests", map[string]any{}, &list)
	assert.Empty(t, list.Tests, "nothing started")

	args["confirm"] = true
	var split map[string]any
	res = call(t, cs, "split-prompt-tag", args, &split)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "bot-v2", split["test"])
	assert.Equal(t, "running", split["status"])
	var got mcpserver.GetABTestOutput
	res = call(t, cs, "get-ab-test", map[string]any{"name": "bot-v2"}, &got)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "support-bot", got.Report.Prompt)
	assert.Equal(t, []string{"v1", "v2"}, []string{got.Report.Results[0].Key, got.Report.Results[1].Key})

	res = call(t, cs, "split-prompt-tag", map[string]any{"prompt_slug": "support-bot", "tag": "production", "duration_days": 7,
		"variants": []any{map[string]any{"version": 1, "weight": 1}}, "confirm": true}, nil)
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "invalid_request")

	other, err := s.connect(t, s.api.B.Key)
	require.NoError(t, err)
	res = call(t, other, "end-prompt-split", map[string]any{"prompt_slug": "support-bot", "tag": "production", "confirm": true}, nil)
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "not_found")

	res = call(t, cs, "end-prompt-split", map[string]any{"prompt_slug": "support-bot", "tag": "production"}, nil)
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "not confirmed, nothing changed: would end the running split")
	res = call(t, cs, "end-prompt-split", map[string]any{"prompt_slug": "support-bot", "tag": "production", "confirm": true}, &split)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "completed", split["status"])
}

// TestABTestToolsDeployed: the A/B test tools work in MCPFunction as deployed (the areas it
// mounts), not only beside the whole API.
func TestABTestToolsDeployed(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	h, err := mcpserver.Function.Build(a.Env)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &toolStack{api: a, url: srv.URL + "/mcp"}
	a.MustDo(t, "POST", "/ab-choices", a.A.Key, map[string]any{"entity_type": "span", "entity_id": uuid.NewString(), "choice_name": "tone",
		"variant_key": "a", "variant_value": "formal", "variants": map[string]any{"a": "formal", "b": "casual"},
		"weights": map[string]any{"a": 0.5, "b": 0.5}, "duration_days": 5})
	cs, err := s.connect(t, a.A.Key)
	require.NoError(t, err)
	var list mcpserver.ListABTestsOutput
	res := call(t, cs, "list-ab-tests", map[string]any{}, &list)
	require.False(t, res.IsError, text(res))
	require.Len(t, list.Tests, 1)
	var got mcpserver.GetABTestOutput
	res = call(t, cs, "get-ab-test", map[string]any{"name": "tone"}, &got)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, int64(1), got.Report.Results[0].Choices)
}
