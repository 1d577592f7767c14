package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/gateway"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// TestPromptVersionBinding: a call that names a prompt version, by header or by the linkage
// metadata a plain client leaves in the system message, is checked against the version's
// binding; the metadata never reaches the provider.
func TestPromptVersionBinding(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(providerKey))
	g := newGateway(t, openAI(fake.OpenAIBaseURL()))
	bound := g.api.EnsurePrompt(t, g.api.A, "support-bot", "You help with {{product}}.")
	model := "zeroeval/gpt-4o-mini"
	_, err := g.api.Env.Prompts().BindModel(t.Context(), g.api.A.ProjectID, "support-bot", 1, &model, g.api.A.UserID)
	require.NoError(t, err)
	free := g.api.EnsurePrompt(t, g.api.A, "free-bot", "You may use any model.")
	other := g.api.EnsurePrompt(t, g.api.B, "b-bot", "Project B's prompt.")

	linkage := `<zeroeval>{"task":"support-bot","prompt_slug":"support-bot","prompt_version":1,"prompt_version_id":"` + bound +
		`","variables":{"product":"Plume"}}</zeroeval>You help with {{product}}.`
	tests := []struct {
		name    string
		version string // the header's
		model   string
		system  string
		status  int
		code    string
	}{
		{"the bound model, by header", bound, "gpt-4o-mini", "s", http.StatusOK, ""},
		{"the bound model with its prefix", bound, "zeroeval/gpt-4o-mini", "s", http.StatusOK, ""},
		{"the bound model, named by provider", bound, "openai/gpt-4o-mini", "s", http.StatusOK, ""},
		{"another model", bound, "gpt-4o", "s", http.StatusBadRequest, "model_not_bound"},
		{"a version without a binding", free, "gpt-4o", "s", http.StatusOK, ""},
		{"a version of another project", other, "gpt-4o-mini", "s", http.StatusNotFound, "prompt_version_not_found"},
		{"not a version id", "v1", "gpt-4o-mini", "s", http.StatusNotFound, "prompt_version_not_found"},
		{"by linkage metadata", "", "gpt-4o-mini", linkage, http.StatusOK, ""},
		{"by linkage metadata, another model", "", "gpt-4o", linkage, http.StatusBadRequest, "model_not_bound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.Reset()
			res, body := call(t, g.url, g.api.A.Key, map[string]any{"model": tt.model, "messages": messages(tt.system, "hi")},
				header(gateway.PromptVersionHeader, tt.version))
			require.Equal(t, tt.status, res.StatusCode, "%s", body)
			if tt.code != "" {
				assert.Equal(t, tt.code, openAIErrorOf(t, body).Code)
				assert.Empty(t, fake.Calls(), "a refused call never reaches the provider")
				return
			}
			calls := fake.Calls()
			require.Len(t, calls, 1)
			assert.NotContains(t, calls[0].System, "zeroeval", "the linkage metadata is stripped")
			if strings.HasPrefix(tt.system, "<zeroeval>") {
				assert.Equal(t, "You help with Plume.", calls[0].System, "the variables are substituted")
			}
		})
	}
}
