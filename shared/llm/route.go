package llm

import (
	"fmt"
	"strings"
)

// APIs a Target is called with.
const (
	APIChatCompletions = "chat_completions" // OpenAI-compatible Chat Completions
	APIMessages        = "messages"         // Anthropic Messages
	APIConverse        = "converse"         // Amazon Bedrock Converse
)

// Providers that Route names, the keys of Config.Providers.
const (
	ProviderOpenAI     = "openai"
	ProviderAzure      = "azure"
	ProviderOpenRouter = "openrouter"
	ProviderGroq       = "groq"
	ProviderTogether   = "together"
	ProviderFireworks  = "fireworks"
	ProviderOllama     = "ollama"
	ProviderVLLM       = "vllm"
	ProviderGemini     = "gemini"
	ProviderAnthropic  = "anthropic"
	ProviderBedrock    = "bedrock"
)

// apiOf is the API of each provider Route knows.
var apiOf = map[string]string{
	ProviderOpenAI: APIChatCompletions, ProviderAzure: APIChatCompletions,
	ProviderOpenRouter: APIChatCompletions, ProviderGroq: APIChatCompletions,
	ProviderTogether: APIChatCompletions, ProviderFireworks: APIChatCompletions,
	ProviderOllama: APIChatCompletions, ProviderVLLM: APIChatCompletions,
	ProviderGemini:    APIChatCompletions,
	ProviderAnthropic: APIMessages,
	ProviderBedrock:   APIConverse,
}

// Target is where a model id is sent.
type Target struct {
	// Provider is the provider called, one of the Provider constants.
	Provider string
	// API is the API it is called with: APIChatCompletions, APIMessages or APIConverse.
	API string
	// Model is the model name the provider knows (the id without its provider prefix).
	Model string
}

// Route tells where a model id is sent. A "provider/model" id names its provider (the rest,
// slashes included, is the provider's model name: "openrouter/meta-llama/llama-3-8b"); the
// "plume/" and "zeroeval/" prefixes are looked through. A bare name goes by family, to the
// provider's own API: gpt-*, chatgpt-*, o1, o3 and o4 to OpenAI, claude-* to Anthropic,
// gemini-* to Gemini's OpenAI endpoint, and Bedrock ids ("anthropic.claude-...",
// "amazon.nova-...", "us.anthropic.claude-...", Bedrock ARNs) to Bedrock. Anything else is
// ErrUnknownModel.
func Route(model string) (Target, error) {
	id := lookThrough(strings.TrimSpace(model))
	if id == "" {
		return Target{}, fmt.Errorf("%w: empty model id", ErrUnknownModel)
	}
	if p, rest, ok := strings.Cut(id, "/"); ok && !strings.HasPrefix(strings.ToLower(id), "arn:") {
		provider := strings.ToLower(p)
		api, known := apiOf[provider]
		if !known || rest == "" {
			return Target{}, fmt.Errorf("%w: %q: unknown provider %q (want one of openai, azure, "+
				"openrouter, groq, together, fireworks, ollama, vllm, gemini, anthropic, bedrock)",
				ErrUnknownModel, model, p)
		}
		return Target{Provider: provider, API: api, Model: rest}, nil
	}
	if provider := bareProvider(strings.ToLower(id)); provider != "" {
		return Target{Provider: provider, API: apiOf[provider], Model: id}, nil
	}
	return Target{}, fmt.Errorf("%w: %q: name the provider, as in \"openai/%s\"", ErrUnknownModel, model, id)
}

// bedrockVendors are the vendor prefixes of Bedrock model ids ("anthropic.claude-...").
var bedrockVendors = []string{
	"anthropic.", "amazon.", "meta.", "mistral.", "cohere.", "ai21.", "deepseek.", "qwen.",
	"openai.", "writer.", "twelvelabs.", "stability.",
}

// bareProvider is the provider of a lower-case model name without a provider prefix.
func bareProvider(m string) string {
	if strings.HasPrefix(m, "arn:aws") && strings.Contains(m, ":bedrock:") {
		return ProviderBedrock
	}
	name := m
	// Cross-region inference profiles: "us.anthropic.claude-...", "global.anthropic...".
	for _, region := range []string{"us.", "eu.", "apac.", "au.", "jp.", "ca.", "us-gov.", "global."} {
		name = strings.TrimPrefix(name, region)
	}
	for _, v := range bedrockVendors {
		if strings.HasPrefix(name, v) {
			return ProviderBedrock
		}
	}
	switch {
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "chatgpt-"), isReasoningSeries(m):
		return ProviderOpenAI
	case strings.HasPrefix(m, "claude-"):
		return ProviderAnthropic
	case strings.HasPrefix(m, "gemini-"):
		return ProviderGemini
	}
	return ""
}

// isReasoningSeries reports whether an OpenAI model name is of the o1, o3 or o4 series.
func isReasoningSeries(m string) bool {
	for _, s := range []string{"o1", "o3", "o4"} {
		if m == s || strings.HasPrefix(m, s+"-") {
			return true
		}
	}
	return false
}

// isReasoningModel reports whether an OpenAI-compatible model takes max_completion_tokens and
// rejects temperature: the o-series and gpt-5 ("openai/o3-mini" on OpenRouter included).
func isReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return isReasoningSeries(m) || strings.HasPrefix(m, "gpt-5")
}
