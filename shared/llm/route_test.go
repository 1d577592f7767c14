package llm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm"
)

func TestRoute(t *testing.T) {
	tests := []struct {
		model         string
		provider, api string
		name          string
	}{
		{"gpt-4o-mini", "openai", llm.APIChatCompletions, "gpt-4o-mini"},
		{"o3-mini", "openai", llm.APIChatCompletions, "o3-mini"},
		{"o1", "openai", llm.APIChatCompletions, "o1"},
		{"chatgpt-4o-latest", "openai", llm.APIChatCompletions, "chatgpt-4o-latest"},
		{"openai/gpt-4.1", "openai", llm.APIChatCompletions, "gpt-4.1"},
		{"azure/my-gpt4o-deployment", "azure", llm.APIChatCompletions, "my-gpt4o-deployment"},
		{"openrouter/meta-llama/llama-3.3-70b-instruct", "openrouter", llm.APIChatCompletions, "meta-llama/llama-3.3-70b-instruct"},
		{"groq/llama-3.3-70b-versatile", "groq", llm.APIChatCompletions, "llama-3.3-70b-versatile"},
		{"together/meta-llama/Llama-3.3-70B-Instruct-Turbo", "together", llm.APIChatCompletions, "meta-llama/Llama-3.3-70B-Instruct-Turbo"},
		{"fireworks/accounts/fireworks/models/llama-v3p1-8b-instruct", "fireworks", llm.APIChatCompletions, "accounts/fireworks/models/llama-v3p1-8b-instruct"},
		{"ollama/llama3.2", "ollama", llm.APIChatCompletions, "llama3.2"},
		{"vllm/Qwen/Qwen2.5-7B-Instruct", "vllm", llm.APIChatCompletions, "Qwen/Qwen2.5-7B-Instruct"},
		{"gemini/gemini-2.5-flash", "gemini", llm.APIChatCompletions, "gemini-2.5-flash"},
		{"gemini-2.5-pro", "gemini", llm.APIChatCompletions, "gemini-2.5-pro"},
		{"claude-3-5-haiku-20241022", "anthropic", llm.APIMessages, "claude-3-5-haiku-20241022"},
		{"anthropic/claude-sonnet-4-5", "anthropic", llm.APIMessages, "claude-sonnet-4-5"},
		{"bedrock/anthropic.claude-3-haiku-20240307-v1:0", "bedrock", llm.APIConverse, "anthropic.claude-3-haiku-20240307-v1:0"},
		{"us.anthropic.claude-3-5-haiku-20241022-v1:0", "bedrock", llm.APIConverse, "us.anthropic.claude-3-5-haiku-20241022-v1:0"},
		{"anthropic.claude-3-haiku-20240307-v1:0", "bedrock", llm.APIConverse, "anthropic.claude-3-haiku-20240307-v1:0"},
		{"amazon.nova-lite-v1:0", "bedrock", llm.APIConverse, "amazon.nova-lite-v1:0"},
		{"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0", "bedrock", llm.APIConverse,
			"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0"},
		{"plume/gpt-4o-mini", "openai", llm.APIChatCompletions, "gpt-4o-mini"},
		{"zeroeval/anthropic/claude-3-5-haiku-latest", "anthropic", llm.APIMessages, "claude-3-5-haiku-latest"},
		{"  OpenAI/gpt-4o ", "openai", llm.APIChatCompletions, "gpt-4o"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, err := llm.Route(tt.model)
			require.NoError(t, err)
			assert.Equal(t, llm.Target{Provider: tt.provider, API: tt.api, Model: tt.name}, got)
		})
	}
}

func TestRouteUnknown(t *testing.T) {
	for _, model := range []string{"", "plume/", "my-finetune", "llama-3.3-70b", "acme/secret-model", "openai/", "mistral-large-latest"} {
		t.Run(model, func(t *testing.T) {
			_, err := llm.Route(model)
			assert.ErrorIs(t, err, llm.ErrUnknownModel)
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY": "sk-1", "OPENAI_BASE_URL": "http://127.0.0.1:9999/v1",
		"ANTHROPIC_API_KEY": "sk-ant-1", "GROQ_API_KEY": "gsk-1",
		"AZURE_OPENAI_API_KEY": "az-1", "AZURE_OPENAI_BASE_URL": "https://res.openai.azure.com/openai/v1",
		"OPENAI_API_VERSION": "preview", "OLLAMA_HOST": "127.0.0.1:11434",
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": "http://127.0.0.1:4566", "AWS_REGION": "eu-west-1",
		"PLUME_JUDGE_MODEL": "anthropic/claude-3-5-haiku-latest",
	}
	got := llm.ConfigFromEnv(func(k string) string { return env[k] })
	assert.Equal(t, llm.Config{
		JudgeModel: "anthropic/claude-3-5-haiku-latest",
		Providers: map[string]llm.Endpoint{
			"openai":    {BaseURL: "http://127.0.0.1:9999/v1", APIKey: "sk-1"},
			"anthropic": {APIKey: "sk-ant-1"},
			"groq":      {APIKey: "gsk-1"},
			"azure":     {BaseURL: "https://res.openai.azure.com/openai/v1", APIKey: "az-1", APIVersion: "preview"},
			"ollama":    {BaseURL: "http://127.0.0.1:11434/v1"},
			"bedrock":   {BaseURL: "http://127.0.0.1:4566", Region: "eu-west-1"},
		},
	}, got)

	empty := llm.ConfigFromEnv(func(string) string { return "" })
	assert.Equal(t, llm.DefaultJudgeModel, empty.JudgeModel)
	assert.Empty(t, empty.Providers)
}
