package sdkcompat_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestZeroevalModelBinding replays the zeroeval Python SDK's flow for a prompt whose version is
// bound to zeroeval/<model> (COMPAT.md "Model binding"): it reads the version's model, strips
// zeroeval/ and sends {"model": <model>, "messages": [...]} to the gateway with the service
// key, and gets an OpenAI answer from the bound model's provider, whichever it is.
func TestZeroevalModelBinding(t *testing.T) {
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			bound := "zeroeval/" + f.bare
			task := "binding-" + string(f.api)

			// The version, bound to the model through the REST API.
			var version struct {
				ID      string  `json:"id"`
				ModelID *string `json:"model_id"`
			}
			rest(t, http.MethodPost, "/v1/tasks/"+task+"/prompt/versions/ensure",
				map[string]any{"content": "You are a support agent for {{product}}.", "model_id": bound}, &version)
			require.NotEmpty(t, version.ID)
			require.NotNil(t, version.ModelID)
			assert.Equal(t, bound, *version.ModelID)

			// The SDK reads the version's model...
			var binding struct {
				Model   *string `json:"model"`
				ModelID *string `json:"model_id"`
			}
			rest(t, http.MethodGet, "/v1/prompt-versions/"+version.ID+"/model", nil, &binding)
			require.NotNil(t, binding.Model, "the SDKs read model")
			assert.Equal(t, bound, *binding.Model)
			assert.Equal(t, binding.Model, binding.ModelID, "the spec's model_id")

			// ...strips zeroeval/ and calls the gateway with the service key, the system message
			// stripped of the linkage metadata and its variables substituted.
			model, ok := strings.CutPrefix(*binding.Model, "zeroeval/")
			require.True(t, ok)
			client := gatewayClient(plumeKey)
			useFake()
			res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
				Model: model,
				Messages: []openai.ChatCompletionMessageParamUnion{
					openai.SystemMessage("You are a support agent for Plume."),
					openai.UserMessage("How do I reset my password?"),
				},
			})
			require.NoError(t, err)

			call := onlyCall(t, f)
			assert.Equal(t, "You are a support agent for Plume.", call.System)
			assert.Equal(t, "How do I reset my password?", call.LastUser())
			assert.Equal(t, "chat.completion", string(res.Object))
			require.Len(t, res.Choices, 1)
			assert.Equal(t, "assistant", string(res.Choices[0].Message.Role))
			assert.True(t, strings.HasPrefix(res.Choices[0].Message.Content, "Simulated answer from "+f.bare+" "), res.Choices[0].Message.Content)
			assert.Equal(t, "stop", res.Choices[0].FinishReason)
			assert.Positive(t, res.Usage.TotalTokens)
		})
	}
}

// rest calls plume-local's REST API with the Plume key, body as JSON (none when nil), and
// decodes the JSON answer into out; anything but 200 fails t.
func rest(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = strings.NewReader(mustJSON(t, body))
	}
	req, err := http.NewRequest(method, plume.url+path, r)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+plumeKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s %s: %s", method, path, data)
	require.NoError(t, json.Unmarshal(data, out), "%s %s: %s", method, path, data)
}
