package llm

import (
	"cmp"
	"strings"
)

// Endpoint is how to reach one provider.
type Endpoint struct {
	// BaseURL is the API's base URL; empty means the provider's default (DefaultBaseURLs).
	// For Chat Completions it ends before "/chat/completions" ("https://api.openai.com/v1");
	// for Anthropic, before "/v1/messages"; for Bedrock, before "/model/{id}/converse".
	BaseURL string
	// APIKey is the provider's key: a Bearer token, Azure's api-key header, Anthropic's
	// x-api-key header. Bedrock uses AWS credentials instead (Options.AWSCredentials).
	APIKey string
	// APIVersion is Azure OpenAI's api-version query parameter ("2024-10-21"); empty sends
	// none, as Azure's v1 API ("https://{resource}.openai.azure.com/openai/v1") wants.
	APIVersion string
	// Region is Bedrock's AWS region; it names the default endpoint and signs requests.
	Region string
}

// DefaultBaseURLs are the base URLs of providers whose Endpoint has none. Azure has no
// default: its base URL names the resource ("https://{resource}.openai.azure.com/openai/v1"
// or ".../openai/deployments/{deployment}"). Bedrock's default is regional:
// https://bedrock-runtime.{region}.amazonaws.com.
var DefaultBaseURLs = map[string]string{
	ProviderOpenAI:     "https://api.openai.com/v1",
	ProviderOpenRouter: "https://openrouter.ai/api/v1",
	ProviderGroq:       "https://api.groq.com/openai/v1",
	ProviderTogether:   "https://api.together.xyz/v1",
	ProviderFireworks:  "https://api.fireworks.ai/inference/v1",
	ProviderOllama:     "http://localhost:11434/v1",
	ProviderVLLM:       "http://localhost:8000/v1",
	ProviderGemini:     "https://generativelanguage.googleapis.com/v1beta/openai",
	ProviderAnthropic:  "https://api.anthropic.com",
}

// keyless are the providers that are called without a key by default (local servers).
var keyless = map[string]bool{ProviderOllama: true, ProviderVLLM: true}

// DefaultJudgeModel is the judge model when PLUME_JUDGE_MODEL is not set.
const DefaultJudgeModel = "openai/gpt-4o-mini"

// Config is where the providers are and which model judges by default. A deployment builds it
// from its secret; locally and in tests ConfigFromEnv reads the standard variables.
type Config struct {
	// Providers holds each provider's Endpoint, keyed by the Provider constants.
	Providers map[string]Endpoint
	// JudgeModel is the model a judge uses when it names none.
	JudgeModel string
}

// ConfigFromEnv reads a Config from environment variables through getenv (os.Getenv):
//
//	OPENAI_API_KEY, OPENAI_BASE_URL            OpenAI (the base URL may point at any
//	                                           OpenAI-compatible server, such as the fake model)
//	ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL      Anthropic
//	AZURE_OPENAI_API_KEY, AZURE_OPENAI_BASE_URL, OPENAI_API_VERSION
//	                                           Azure OpenAI (the base URL is required)
//	OPENROUTER_API_KEY, OPENROUTER_BASE_URL    OpenRouter
//	GROQ_API_KEY, GROQ_BASE_URL                Groq
//	TOGETHER_API_KEY, TOGETHER_BASE_URL        Together
//	FIREWORKS_API_KEY, FIREWORKS_BASE_URL      Fireworks
//	GEMINI_API_KEY, GEMINI_BASE_URL            Gemini's OpenAI-compatible endpoint
//	OLLAMA_HOST                                Ollama ("127.0.0.1:11434"; /v1 is appended)
//	VLLM_API_KEY, VLLM_BASE_URL                vLLM (the key only if the server wants one)
//	AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_ENDPOINT_URL, AWS_REGION, AWS_DEFAULT_REGION
//	                                           Bedrock's endpoint and region, as the AWS SDK
//	                                           reads them; credentials come from the caller
//	PLUME_JUDGE_MODEL                          the default judge model (DefaultJudgeModel)
//
// An unset variable leaves the provider's default.
func ConfigFromEnv(getenv func(string) string) Config {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	c := Config{Providers: map[string]Endpoint{}, JudgeModel: cmp.Or(env("PLUME_JUDGE_MODEL"), DefaultJudgeModel)}
	for provider, prefix := range map[string]string{
		ProviderOpenAI: "OPENAI", ProviderAnthropic: "ANTHROPIC", ProviderAzure: "AZURE_OPENAI",
		ProviderOpenRouter: "OPENROUTER", ProviderGroq: "GROQ", ProviderTogether: "TOGETHER",
		ProviderFireworks: "FIREWORKS", ProviderGemini: "GEMINI", ProviderVLLM: "VLLM",
	} {
		e := Endpoint{BaseURL: env(prefix + "_BASE_URL"), APIKey: env(prefix + "_API_KEY")}
		if provider == ProviderAzure {
			e.APIVersion = env("OPENAI_API_VERSION")
		}
		if e != (Endpoint{}) {
			c.Providers[provider] = e
		}
	}
	if host := env("OLLAMA_HOST"); host != "" {
		if !strings.Contains(host, "://") {
			host = "http://" + host
		}
		c.Providers[ProviderOllama] = Endpoint{BaseURL: strings.TrimSuffix(host, "/") + "/v1"}
	}
	bedrock := Endpoint{
		BaseURL: cmp.Or(env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME"), env("AWS_ENDPOINT_URL")),
		Region:  cmp.Or(env("AWS_REGION"), env("AWS_DEFAULT_REGION")),
	}
	if bedrock != (Endpoint{}) {
		c.Providers[ProviderBedrock] = bedrock
	}
	return c
}

// endpoint returns the provider's Endpoint with its defaults filled in.
func (c Config) endpoint(provider string) Endpoint {
	e := c.Providers[provider]
	e.BaseURL = strings.TrimSuffix(cmp.Or(e.BaseURL, DefaultBaseURLs[provider]), "/")
	if provider == ProviderBedrock && e.BaseURL == "" && e.Region != "" {
		e.BaseURL = "https://bedrock-runtime." + e.Region + ".amazonaws.com"
	}
	return e
}
