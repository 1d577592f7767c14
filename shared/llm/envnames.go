package llm

import "slices"

// envNames are the variables ConfigFromEnv reads, in the order its doc comment lists them.
// TestEnvNames fails when ConfigFromEnv reads a variable missing here, or stops reading one.
var envNames = []string{
	"OPENAI_API_KEY", "OPENAI_BASE_URL",
	"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
	"AZURE_OPENAI_API_KEY", "AZURE_OPENAI_BASE_URL", "OPENAI_API_VERSION",
	"OPENROUTER_API_KEY", "OPENROUTER_BASE_URL",
	"GROQ_API_KEY", "GROQ_BASE_URL",
	"TOGETHER_API_KEY", "TOGETHER_BASE_URL",
	"FIREWORKS_API_KEY", "FIREWORKS_BASE_URL",
	"GEMINI_API_KEY", "GEMINI_BASE_URL",
	"OLLAMA_HOST",
	"VLLM_API_KEY", "VLLM_BASE_URL",
	"AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
	"PLUME_JUDGE_MODEL",
}

// EnvNames returns the names of the environment variables ConfigFromEnv reads: the only names
// a deployment's provider secret may hold (config.ProviderSecretEnv), and how plume-local
// tells whether any provider is configured. The slice is the caller's.
func EnvNames() []string {
	return slices.Clone(envNames)
}
