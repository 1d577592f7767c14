package llm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProviderOf(t *testing.T) {
	tests := []struct{ model, want string }{
		{"gpt-4o-mini", "openai"},
		{"gpt-4.1-2025-04-14", "openai"},
		{"o3-mini", "openai"},
		{"claude-3-5-sonnet-20241022", "anthropic"},
		{"Claude-Opus-4", "anthropic"},
		{"gemini-2.5-pro", "google"},
		{"models/gemini-1.5-flash", "google"},
		{"mistral-large-latest", "mistral"},
		{"llama-3.3-70b-instruct", "meta"},
		{"deepseek-chat", "deepseek"},
		{"grok-3", "xai"},
		{"command-r-plus", "cohere"},
		{"amazon.nova-pro-v1:0", "amazon"},
		{"us.anthropic.claude-3-5-sonnet-20241022-v2:0", "anthropic"},
		{"bedrock/anthropic.claude-3-haiku", "anthropic"},
		{"vertex_ai/claude-3-opus", "anthropic"},
		{"openrouter/meta-llama/llama-3-8b", "meta"},
		{"anthropic/claude-3-haiku", "anthropic"},
		{"openai/gpt-4o", "openai"},
		{"gemini/gemini-pro", "google"},
		{"acme/secret-model", "acme"},
		{"my-finetune", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			assert.Equal(t, tt.want, ProviderOf(tt.model))
		})
	}
}
