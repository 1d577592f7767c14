package llm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/llm"
)

func TestVision(t *testing.T) {
	for model, want := range map[string]bool{
		"openai/gpt-4o-mini": true, "gpt-4.1": true, "openai/gpt-5": true, "o3": true, "o4-mini": true,
		"openai/o3-mini": false, "o1-mini": false, "gpt-3.5-turbo": false,
		"anthropic/claude-sonnet-4-5": true, "claude-3-5-sonnet-20241022": true, "claude-3-5-haiku-20241022": false,
		"bedrock/us.anthropic.claude-3-5-haiku-20241022-v1:0": false, "us.anthropic.claude-sonnet-4-20250514-v1:0": true,
		"bedrock/amazon.nova-lite-v1:0": true, "amazon.nova-micro-v1:0": false,
		"gemini/gemini-2.0-flash": true, "groq/llama-3.3-70b-versatile": false, "groq/llama-4-scout-17b": true,
		"openrouter/meta-llama/llama-3.2-90b-vision-instruct": true, "ollama/llava": true,
		"zeroeval/gpt-4o": true, "vllm/some-private-model": false, "": false,
	} {
		assert.Equal(t, want, llm.Vision(model), model)
	}
}
