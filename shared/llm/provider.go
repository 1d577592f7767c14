package llm

import "strings"

// Providers recognised by ProviderOf, as they appear in "provider/model" ids.
var knownProviders = map[string]string{
	"openai": "openai", "anthropic": "anthropic", "google": "google", "gemini": "google",
	"vertex_ai": "google", "vertex": "google", "mistral": "mistral", "mistralai": "mistral",
	"meta": "meta", "meta-llama": "meta", "deepseek": "deepseek", "deepseek-ai": "deepseek",
	"xai": "xai", "x-ai": "xai", "cohere": "cohere", "amazon": "amazon", "bedrock": "amazon",
	"groq": "groq", "together": "together", "togetherai": "together", "fireworks": "fireworks",
	"openrouter": "openrouter", "azure": "azure", "perplexity": "perplexity", "qwen": "alibaba",
	"alibaba": "alibaba", "moonshotai": "moonshot", "ollama": "ollama",
}

// hosts are "provider/" prefixes of platforms that serve many providers' models.
var hosts = map[string]bool{
	"bedrock": true, "vertex_ai": true, "vertex": true, "openrouter": true, "together": true,
	"togetherai": true, "groq": true, "fireworks": true, "azure": true, "ollama": true,
}

// modelFamilies maps a model-name prefix to its provider, checked in order.
var modelFamilies = []struct{ prefix, provider string }{
	{"gpt-", "openai"}, {"chatgpt-", "openai"}, {"o1", "openai"}, {"o3", "openai"}, {"o4", "openai"},
	{"text-embedding-", "openai"}, {"davinci", "openai"}, {"babbage", "openai"}, {"dall-e", "openai"},
	{"whisper", "openai"}, {"tts-", "openai"}, {"codex-", "openai"},
	{"claude", "anthropic"},
	{"gemini", "google"}, {"gemma", "google"}, {"palm", "google"}, {"text-bison", "google"},
	{"mistral", "mistral"}, {"mixtral", "mistral"}, {"codestral", "mistral"}, {"pixtral", "mistral"},
	{"ministral", "mistral"}, {"magistral", "mistral"}, {"devstral", "mistral"}, {"open-mistral", "mistral"},
	{"llama", "meta"}, {"meta-llama", "meta"},
	{"deepseek", "deepseek"},
	{"grok", "xai"},
	{"command", "cohere"}, {"embed-", "cohere"}, {"rerank-", "cohere"}, {"c4ai-", "cohere"},
	{"amazon.", "amazon"}, {"nova-", "amazon"}, {"titan", "amazon"},
	{"anthropic.", "anthropic"}, {"meta.", "meta"}, {"mistral.", "mistral"}, {"cohere.", "cohere"},
	{"qwen", "alibaba"}, {"kimi", "moonshot"},
}

// ProviderOf returns the provider of a model id, or "" when it cannot tell. An explicit
// "provider/model" id names its provider (known aliases are folded: "gemini/..." is google);
// Bedrock ids ("us.anthropic.claude-...") and bare model names are recognised by family.
func ProviderOf(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if m == "" {
		return ""
	}
	if p, rest, ok := strings.Cut(m, "/"); ok {
		if known, ok := knownProviders[p]; ok {
			// Hosts such as Bedrock, Vertex or OpenRouter serve other providers' models: the
			// model's own family names the provider when it is recognisable.
			if fam := family(rest); fam != "" && hosts[p] {
				return fam
			}
			return known
		}
		if fam := family(rest); fam != "" {
			return fam
		}
		return p
	}
	return family(m)
}

func family(m string) string {
	m = strings.TrimPrefix(m, "models/") // Google's "models/gemini-..."
	// Bedrock cross-region inference profiles: "us.anthropic.claude-3-5-sonnet-...".
	for _, region := range []string{"us.", "eu.", "apac.", "global."} {
		m = strings.TrimPrefix(m, region)
	}
	for _, f := range modelFamilies {
		if strings.HasPrefix(m, f.prefix) {
			return f.provider
		}
	}
	return ""
}
