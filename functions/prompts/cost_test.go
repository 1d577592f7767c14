package prompts_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDynamoDBRequestsPerCall counts the DynamoDB requests of each SDK-facing call with the auth
// cache warm (the steady state of a Lambda instance), and of a cold first call.
func TestDynamoDBRequestsPerCall(t *testing.T) {
	api := newTestAPI(t)
	key := api.a.key
	cold := api.do(t, "GET", "/v1/prompts/support-bot", key, nil)
	require.Equal(t, http.StatusNotFound, cold.status)
	assert.Equal(t, 2, api.counter.Total(), "cold: one GetItem for the key and one Query: %s", api.counter)

	require.Equal(t, http.StatusOK, api.do(t, "POST", ensurePath, key, map[string]any{"content": "v1"}).status)
	require.Equal(t, http.StatusOK, api.do(t, "POST", "/projects/"+api.a.projectID+"/prompts/support-bot/tags/production:pin", key, map[string]any{"version": 1}).status)

	tests := []struct {
		name         string
		method, path string
		body         any
		want         int
	}{
		{"get prompt, tag latest", "GET", "/v1/prompts/support-bot", nil, 1},
		{"get prompt, tag production", "GET", "/v1/prompts/support-bot?tag=production", nil, 2},
		{"get prompt, version 1", "GET", "/v1/prompts/support-bot?version=1", nil, 1},
		{"latest", "GET", "/v1/tasks/support-bot/prompt/latest", nil, 1},
		{"ensure existing content", "POST", ensurePath, map[string]any{"content": "v1"}, 2},
		{"ensure new content", "POST", ensurePath, map[string]any{"content": "v2"}, 2},
		{"by hash", "GET", "/v1/tasks/support-bot/prompt/versions/by-hash/" + "a0b1c2d3e4f5a0b1c2d3e4f5a0b1c2d3e4f5a0b1c2d3e4f5a0b1c2d3e4f5a0b1", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api.counter.Reset()
			api.do(t, tt.method, tt.path, key, tt.body)
			assert.Equal(t, tt.want, api.counter.Total(), "requests: %s", api.counter)
			t.Logf("%s: %s", tt.name, api.counter)
		})
	}
}
