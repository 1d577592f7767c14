package pricing

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var providers = map[string]bool{
	"openai": true, "anthropic": true, "google": true, "mistral": true, "meta": true,
	"deepseek": true, "xai": true, "cohere": true, "amazon": true,
}

func TestDefaultTable(t *testing.T) {
	tbl, err := Parse(pricesJSON)
	require.NoError(t, err, "embedded prices.json must parse")
	require.Same(t, Default(), Default())
	assert.Equal(t, tbl.Len(), Default().Len())

	assert.GreaterOrEqual(t, tbl.Len(), 100)
	_, err = time.Parse(time.DateOnly, tbl.LastChecked())
	assert.NoError(t, err, "last_checked is a date")
	assert.Equal(t, "2026-11-21", tbl.LastChecked())

	for i, p := range tbl.prices {
		t.Run(p.ID, func(t *testing.T) {
			assert.True(t, providers[p.Provider], "provider %q", p.Provider)
			assert.Positive(t, p.Input)
			assert.Positive(t, p.Output)
			assert.GreaterOrEqual(t, p.CachedInput, 0.0)
			assert.GreaterOrEqual(t, p.CacheWrite, 0.0)
			assert.LessOrEqual(t, p.CachedInput, p.Input, "cache reads cost less than input")
			if lc := p.LongContext; lc != nil {
				assert.Positive(t, lc.ThresholdTokens)
				assert.GreaterOrEqual(t, lc.Input, p.Input)
				assert.GreaterOrEqual(t, lc.Output, p.Output)
			}
			// Every canonical id resolves to its own entry.
			got, ok := tbl.Lookup("", p.ID)
			if assert.True(t, ok, "canonical id %q not found", p.ID) {
				assert.Equal(t, p.ID, got.ID)
			}
			// Parse compiled the patterns; each entry has at least one, anchored.
			n := 0
			for _, r := range tbl.rules {
				if r.entry == i {
					n++
					assert.Regexp(t, `^\(\?i\)\^.*\$$`, r.re.regexp().String())
				}
			}
			assert.Positive(t, n)
		})
	}
}

func TestParseErrors(t *testing.T) {
	const entry = `{"id": "m", "provider": "openai", "input": 1, "output": 2, "match": ["^m$"]}`
	tests := []struct {
		name string
		data string
		want string
	}{
		{"not json", `[`, "decode"},
		{"unknown field", `{"last_checked": "2026-11-21", "prices": [{"id": "m", "provider": "openai", "input": 1, "output": 2, "cache_read": 1, "match": ["^m$"]}]}`, "unknown field"},
		{"trailing data", `{"last_checked": "2026-11-21", "prices": [` + entry + `]} {}`, "after the top-level"},
		{"no date", `{"prices": [` + entry + `]}`, "last_checked"},
		{"bad date", `{"last_checked": "21/11/2026", "prices": [` + entry + `]}`, "last_checked"},
		{"no prices", `{"last_checked": "2026-11-21", "prices": []}`, "no prices"},
		{"empty id", `{"last_checked": "2026-11-21", "prices": [{"provider": "openai", "input": 1, "output": 2, "match": ["^m$"]}]}`, "empty id"},
		{"duplicate id", `{"last_checked": "2026-11-21", "prices": [` + entry + `,` + entry + `]}`, "duplicate id"},
		{"no provider", `{"last_checked": "2026-11-21", "prices": [{"id": "m", "input": 1, "output": 2, "match": ["^m$"]}]}`, "empty provider"},
		{"negative price", `{"last_checked": "2026-11-21", "prices": [{"id": "m", "provider": "openai", "input": -1, "output": 2, "match": ["^m$"]}]}`, "negative"},
		{"no patterns", `{"last_checked": "2026-11-21", "prices": [{"id": "m", "provider": "openai", "input": 1, "output": 2}]}`, "no match"},
		{"unanchored", `{"last_checked": "2026-11-21", "prices": [{"id": "m", "provider": "openai", "input": 1, "output": 2, "match": ["m$"]}]}`, "anchored"},
		{"bad regexp", `{"last_checked": "2026-11-21", "prices": [{"id": "m", "provider": "openai", "input": 1, "output": 2, "match": ["^m(?:$"]}]}`, "pattern"},
		{"tier threshold", `{"last_checked": "2026-11-21", "prices": [{"id": "m", "provider": "google", "input": 1, "output": 2, "long_context": {"input": 2, "output": 4}, "match": ["^m$"]}]}`, "threshold"},
		{"tier without cached", `{"last_checked": "2026-11-21", "prices": [{"id": "m", "provider": "google", "input": 1, "output": 2, "cached_input": 0.1, "long_context": {"threshold_tokens": 10, "input": 2, "output": 4}, "match": ["^m$"]}]}`, "cached_input missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, err := Parse([]byte(tt.data))
			require.Error(t, err)
			assert.Nil(t, tbl)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseOverride(t *testing.T) {
	tbl, err := Parse([]byte(`{"last_checked": "2026-01-02", "prices": [
		{"id": "my-model", "provider": "acme", "input": 1, "output": 2, "match": ["^(?:acme/)?my-model(?:-v\\d+)?$"]},
		{"id": "my-model-any", "provider": "acme", "input": 3, "output": 4, "match": ["^(?:acme/)?my-model.*$"]}
	]}`))
	require.NoError(t, err)
	assert.Equal(t, "2026-01-02", tbl.LastChecked())
	assert.Equal(t, 2, tbl.Len())

	tests := []struct{ provider, model, want string }{
		{"", "my-model", "my-model"},
		{"", "ACME/My-Model-V2", "my-model"},  // case-insensitive
		{"", "my-model-beta", "my-model-any"}, // first match in file order
		{"acme", "my-model", "my-model"},
	}
	for _, tt := range tests {
		p, ok := tbl.Lookup(tt.provider, tt.model)
		require.True(t, ok, tt.model)
		assert.Equal(t, tt.want, p.ID, tt.model)
	}
}

func TestLookupProviderPrefix(t *testing.T) {
	// A pattern that only matches with a provider prefix: the provider argument supplies it.
	tbl, err := Parse([]byte(`{"last_checked": "2026-01-02", "prices": [
		{"id": "acme-chat", "provider": "acme", "input": 1, "output": 2, "match": ["^acme/chat$"]}
	]}`))
	require.NoError(t, err)

	tests := []struct {
		name, provider, model string
		found                 bool
	}{
		{"prefixed id", "", "acme/chat", true},
		{"provider given", "acme", "chat", true},
		{"provider given, mixed case and spaces", " ACME ", " Chat ", true},
		{"no provider", "", "chat", false},
		{"other provider", "other", "chat", false},
		{"id already prefixed", "acme", "other/chat", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok := tbl.Lookup(tt.provider, tt.model)
			assert.Equal(t, tt.found, ok)
		})
	}
}

// realIDs are model ids as SDKs, gateways and clouds report them, with the entry each must
// resolve to. Every one is also checked against every entry, so an id that a more general,
// earlier entry would capture fails here.
var realIDs = []struct{ provider, model, want string }{
	// OpenAI
	{"openai", "gpt-4o", "gpt-4o"},
	{"openai", "gpt-4o-2024-08-06", "gpt-4o"},
	{"openai", "gpt-4o-2024-11-20", "gpt-4o"},
	{"openai", "gpt-4o-2024-05-13", "gpt-4o-2024-05-13"},
	{"", "openai/gpt-4o", "gpt-4o"},
	{"", "GPT-4o", "gpt-4o"},
	{"azure", "azure/gpt-4o", "gpt-4o"},
	{"openai", "chatgpt-4o-latest", "chatgpt-4o-latest"},
	{"openai", "gpt-4o-mini", "gpt-4o-mini"},
	{"openai", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
	{"", "openai/gpt-4o-mini", "gpt-4o-mini"},
	{"", "openrouter/openai/gpt-4o-mini", "gpt-4o-mini"},
	{"openai", "gpt-4.1", "gpt-4.1"},
	{"openai", "gpt-4.1-2025-04-14", "gpt-4.1"},
	{"openai", "gpt-4.1-mini", "gpt-4.1-mini"},
	{"openai", "gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"},
	{"", "openai/gpt-4.1-nano", "gpt-4.1-nano"},
	{"openai", "gpt-4.5-preview-2025-02-27", "gpt-4.5-preview"},
	{"openai", "gpt-4-turbo", "gpt-4-turbo"},
	{"openai", "gpt-4-turbo-2024-04-09", "gpt-4-turbo"},
	{"openai", "gpt-4-0125-preview", "gpt-4-turbo"},
	{"openai", "gpt-4", "gpt-4"},
	{"openai", "gpt-4-0613", "gpt-4"},
	{"openai", "gpt-4-32k", "gpt-4-32k"},
	{"openai", "gpt-3.5-turbo", "gpt-3.5-turbo"},
	{"openai", "gpt-3.5-turbo-0125", "gpt-3.5-turbo"},
	{"azure", "gpt-35-turbo", "gpt-3.5-turbo"},
	{"openai", "gpt-3.5-turbo-instruct", "gpt-3.5-turbo-instruct"},
	{"openai", "o1", "o1"},
	{"openai", "o1-2024-12-17", "o1"},
	{"openai", "o1-preview", "o1"},
	{"openai", "o1-mini", "o1-mini"},
	{"openai", "o1-pro", "o1-pro"},
	{"openai", "o3", "o3"},
	{"openai", "o3-2025-04-16", "o3"},
	{"openai", "o3-mini", "o3-mini"},
	{"", "openai/o3-mini-high", "o3-mini"},
	{"openai", "o3-pro-2025-06-10", "o3-pro"},
	{"openai", "o3-deep-research", "o3-deep-research"},
	{"openai", "o4-mini", "o4-mini"},
	{"openai", "o4-mini-2025-04-16", "o4-mini"},
	{"openai", "o4-mini-deep-research-2025-06-26", "o4-mini-deep-research"},
	{"openai", "codex-mini-latest", "codex-mini-latest"},
	{"openai", "gpt-5", "gpt-5"},
	{"openai", "gpt-5-2025-08-07", "gpt-5"},
	{"openai", "gpt-5-chat-latest", "gpt-5"},
	{"openai", "gpt-5-codex", "gpt-5"},
	{"openai", "gpt-5-mini", "gpt-5-mini"},
	{"openai", "gpt-5-mini-2025-08-07", "gpt-5-mini"},
	{"openai", "gpt-5-nano", "gpt-5-nano"},
	{"openai", "gpt-5-pro", "gpt-5-pro"},
	{"openai", "gpt-5.1", "gpt-5.1"},
	{"openai", "gpt-5.1-2025-11-13", "gpt-5.1"},
	{"openai", "gpt-5.1-codex", "gpt-5.1"},
	{"openai", "gpt-5.1-codex-mini", "gpt-5.1-codex-mini"},
	{"", "openai/gpt-5.2", "gpt-5.2"},
	{"groq", "openai/gpt-oss-120b", "gpt-oss-120b"},
	{"bedrock", "openai.gpt-oss-20b-1:0", "gpt-oss-20b"},
	// Anthropic
	{"anthropic", "claude-3-haiku-20240307", "claude-3-haiku"},
	{"anthropic", "claude-3-5-haiku-20241022", "claude-3-5-haiku"},
	{"anthropic", "claude-3-5-haiku-latest", "claude-3-5-haiku"},
	{"", "anthropic/claude-3.5-haiku", "claude-3-5-haiku"},
	{"anthropic", "claude-haiku-4-5", "claude-haiku-4-5"},
	{"anthropic", "claude-haiku-4-5-20251001", "claude-haiku-4-5"},
	{"anthropic", "claude-3-sonnet-20240229", "claude-3-sonnet"},
	{"anthropic", "claude-3-5-sonnet-20240620", "claude-3-5-sonnet"},
	{"anthropic", "claude-3-5-sonnet-20241022", "claude-3-5-sonnet"},
	{"anthropic", "claude-3-5-sonnet-latest", "claude-3-5-sonnet"},
	{"", "anthropic/claude-3.5-sonnet", "claude-3-5-sonnet"},
	{"", "anthropic/claude-3.5-sonnet:beta", "claude-3-5-sonnet"},
	{"", "Claude-3-5-Sonnet-20241022", "claude-3-5-sonnet"},
	{"bedrock", "anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"},
	{"bedrock", "anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet"},
	{"bedrock", "us.anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"},
	{"", "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet"},
	{"", "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet"},
	{"vertex_ai", "claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet"},
	{"vertex_ai", "claude-3-5-sonnet@20240620", "claude-3-5-sonnet"},
	{"", "vertex_ai/claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet"},
	{"anthropic", "claude-3-7-sonnet-20250219", "claude-3-7-sonnet"},
	{"anthropic", "claude-3-7-sonnet-latest", "claude-3-7-sonnet"},
	{"", "anthropic/claude-3.7-sonnet:thinking", "claude-3-7-sonnet"},
	{"bedrock", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet"},
	{"anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4"},
	{"anthropic", "claude-sonnet-4-0", "claude-sonnet-4"},
	{"", "anthropic/claude-sonnet-4", "claude-sonnet-4"},
	{"", "claude-4-sonnet-20250514", "claude-sonnet-4"},
	{"bedrock", "eu.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4"},
	{"vertex_ai", "claude-sonnet-4@20250514", "claude-sonnet-4"},
	{"anthropic", "claude-sonnet-4-5", "claude-sonnet-4-5"},
	{"anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
	{"", "anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"},
	{"bedrock", "global.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"},
	{"vertex_ai", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5"},
	{"anthropic", "claude-3-opus-20240229", "claude-3-opus"},
	{"anthropic", "claude-3-opus-latest", "claude-3-opus"},
	{"anthropic", "claude-opus-4-20250514", "claude-opus-4"},
	{"anthropic", "claude-opus-4-0", "claude-opus-4"},
	{"anthropic", "claude-opus-4-1-20250805", "claude-opus-4-1"},
	{"", "anthropic/claude-opus-4.1", "claude-opus-4-1"},
	{"bedrock", "us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1"},
	{"anthropic", "claude-opus-4-5-20251101", "claude-opus-4-5"},
	{"anthropic", "claude-opus-4-5", "claude-opus-4-5"},
	{"bedrock", "anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"},
	{"bedrock", "anthropic.claude-3-haiku-20240307-v1:0", "claude-3-haiku"},
	// Google
	{"google", "gemini-3-pro-preview", "gemini-3-pro-preview"},
	{"google", "gemini-2.5-pro", "gemini-2.5-pro"},
	{"google", "models/gemini-2.5-pro", "gemini-2.5-pro"},
	{"google", "gemini-2.5-pro-preview-06-05", "gemini-2.5-pro"},
	{"", "google/gemini-2.5-pro", "gemini-2.5-pro"},
	{"", "gemini/gemini-2.5-pro", "gemini-2.5-pro"},
	{"google", "gemini-2.5-flash", "gemini-2.5-flash"},
	{"google", "gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash"},
	{"", "vertex_ai/gemini-2.5-flash", "gemini-2.5-flash"},
	{"google", "gemini-2.5-flash-lite", "gemini-2.5-flash-lite"},
	{"google", "gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite"},
	{"google", "gemini-2.0-flash", "gemini-2.0-flash"},
	{"google", "gemini-2.0-flash-001", "gemini-2.0-flash"},
	{"", "projects/acme/locations/us-central1/publishers/google/models/gemini-2.0-flash-001", "gemini-2.0-flash"},
	{"google", "gemini-2.0-flash-lite", "gemini-2.0-flash-lite"},
	{"google", "gemini-2.0-flash-lite-001", "gemini-2.0-flash-lite"},
	{"google", "gemini-1.5-pro", "gemini-1.5-pro"},
	{"google", "gemini-1.5-pro-002", "gemini-1.5-pro"},
	{"google", "gemini-1.5-pro-latest", "gemini-1.5-pro"},
	{"", "publishers/google/models/gemini-1.5-pro-002", "gemini-1.5-pro"},
	{"google", "models/gemini-1.5-flash", "gemini-1.5-flash"},
	{"google", "gemini-1.5-flash-002", "gemini-1.5-flash"},
	{"google", "gemini-1.5-flash-8b", "gemini-1.5-flash-8b"},
	{"google", "gemini-1.5-flash-8b-001", "gemini-1.5-flash-8b"},
	{"google", "gemini-pro", "gemini-1.0-pro"},
	// Mistral
	{"mistral", "mistral-large-latest", "mistral-large-2512"},
	{"mistral", "mistral-large-2411", "mistral-large-2411"},
	{"", "mistralai/mistral-large-2407", "mistral-large-2411"},
	{"bedrock", "mistral.mistral-large-2407-v1:0", "mistral-large-2411"},
	{"mistral", "mistral-medium-latest", "mistral-medium-3"},
	{"mistral", "mistral-medium-2505", "mistral-medium-3"},
	{"", "mistralai/mistral-medium-3.1", "mistral-medium-3"},
	{"mistral", "mistral-small-latest", "mistral-small-3"},
	{"mistral", "mistral-small-2503", "mistral-small-3"},
	{"", "mistralai/mistral-small-3.2-24b-instruct", "mistral-small-3"},
	{"", "mistralai/mistral-small-24b-instruct-2501", "mistral-small-3"},
	{"mistral", "codestral-latest", "codestral"},
	{"mistral", "codestral-2501", "codestral"},
	{"mistral", "ministral-8b-latest", "ministral-8b"},
	{"mistral", "ministral-3b-2410", "ministral-3b"},
	{"mistral", "pixtral-large-latest", "pixtral-large"},
	{"mistral", "pixtral-12b-2409", "pixtral-12b"},
	{"mistral", "open-mistral-nemo", "mistral-nemo"},
	{"", "mistralai/mistral-nemo", "mistral-nemo"},
	{"mistral", "magistral-medium-latest", "magistral-medium"},
	{"mistral", "magistral-small-2506", "magistral-small"},
	{"mistral", "devstral-small-2507", "devstral-small"},
	{"mistral", "devstral-medium-2507", "devstral-medium"},
	{"mistral", "mistral-saba-latest", "mistral-saba"},
	{"", "mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"},
	{"bedrock", "mistral.mixtral-8x7b-instruct-v0:1", "mixtral-8x7b"},
	{"mistral", "open-mixtral-8x22b", "mixtral-8x22b"},
	// Meta (Llama)
	{"bedrock", "meta.llama3-1-70b-instruct-v1:0", "llama-3.1-70b"},
	{"bedrock", "us.meta.llama3-3-70b-instruct-v1:0", "llama-3.3-70b"},
	{"bedrock", "meta.llama3-8b-instruct-v1:0", "llama-3-8b"},
	{"bedrock", "us.meta.llama3-2-11b-instruct-v1:0", "llama-3.2-11b"},
	{"bedrock", "us.meta.llama4-maverick-17b-instruct-v1:0", "llama-4-maverick"},
	{"bedrock", "meta.llama3-1-405b-instruct-v1:0", "llama-3.1-405b"},
	{"groq", "llama-3.3-70b-versatile", "llama-3.3-70b"},
	{"groq", "llama-3.1-8b-instant", "llama-3.1-8b"},
	{"groq", "llama3-70b-8192", "llama-3-70b"},
	{"groq", "meta-llama/llama-4-scout-17b-16e-instruct", "llama-4-scout"},
	{"", "groq/llama-3.3-70b-versatile", "llama-3.3-70b"},
	{"together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", "llama-3.3-70b"},
	{"together", "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo", "llama-3.1-8b"},
	{"together", "meta-llama/Llama-3.2-90B-Vision-Instruct-Turbo", "llama-3.2-90b"},
	{"together", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "llama-4-maverick"},
	{"together", "meta-llama/Llama-3-70b-chat-hf", "llama-3-70b"},
	{"", "meta-llama/llama-3.2-3b-instruct", "llama-3.2-3b"},
	{"", "meta-llama/llama-3.2-1b-instruct", "llama-3.2-1b"},
	{"", "openrouter/meta-llama/llama-4-scout", "llama-4-scout"},
	{"fireworks", "accounts/fireworks/models/llama-v3p1-405b-instruct", "llama-3.1-405b"},
	{"meta", "Llama-4-Maverick-17B-128E-Instruct-FP8", "llama-4-maverick"},
	// DeepSeek
	{"deepseek", "deepseek-chat", "deepseek-chat"},
	{"deepseek", "deepseek-reasoner", "deepseek-reasoner"},
	{"", "deepseek/deepseek-chat", "deepseek-chat"},
	{"", "deepseek/deepseek-v3.2-exp", "deepseek-v3.2"},
	{"", "deepseek/deepseek-chat-v3.1", "deepseek-v3.1"},
	{"bedrock", "deepseek.v3-v1:0", "deepseek-v3.1"},
	{"", "deepseek/deepseek-chat-v3-0324", "deepseek-v3"},
	{"together", "deepseek-ai/DeepSeek-V3", "deepseek-v3"},
	{"together", "deepseek-ai/DeepSeek-R1", "deepseek-r1"},
	{"", "deepseek/deepseek-r1-0528", "deepseek-r1"},
	{"bedrock", "us.deepseek.r1-v1:0", "deepseek-r1"},
	// xAI
	{"xai", "grok-4", "grok-4"},
	{"xai", "grok-4-0709", "grok-4"},
	{"xai", "grok-4-latest", "grok-4"},
	{"", "x-ai/grok-4", "grok-4"},
	{"", "xai/grok-4", "grok-4"},
	{"xai", "grok-4-fast-reasoning", "grok-4-fast"},
	{"xai", "grok-4-fast-non-reasoning", "grok-4-fast"},
	{"xai", "grok-4-1-fast-reasoning", "grok-4-1-fast"},
	{"", "x-ai/grok-4.1-fast", "grok-4-1-fast"},
	{"xai", "grok-code-fast-1", "grok-code-fast-1"},
	{"xai", "grok-3", "grok-3"},
	{"xai", "grok-3-beta", "grok-3"},
	{"xai", "grok-3-mini", "grok-3-mini"},
	{"xai", "grok-3-mini-beta", "grok-3-mini"},
	{"xai", "grok-3-fast-beta", "grok-3-fast"},
	{"xai", "grok-3-mini-fast", "grok-3-mini-fast"},
	{"xai", "grok-2-1212", "grok-2"},
	{"xai", "grok-2-vision-1212", "grok-2-vision"},
	{"xai", "grok-beta", "grok-beta"},
	// Cohere
	{"cohere", "command-a-03-2025", "command-a"},
	{"", "cohere/command-a", "command-a"},
	{"cohere", "command-r-plus-08-2024", "command-r-plus-08-2024"},
	{"cohere", "command-r-plus", "command-r-plus"},
	{"cohere", "command-r-plus-04-2024", "command-r-plus"},
	{"bedrock", "cohere.command-r-plus-v1:0", "command-r-plus"},
	{"cohere", "command-r-08-2024", "command-r-08-2024"},
	{"cohere", "command-r", "command-r"},
	{"bedrock", "cohere.command-r-v1:0", "command-r"},
	{"cohere", "command-r7b-12-2024", "command-r7b"},
	{"", "cohere_chat/command-r", "command-r"},
	{"cohere", "command-light", "command-light"},
	{"bedrock", "cohere.command-text-v14", "command"},
	// Amazon
	{"bedrock", "amazon.nova-pro-v1:0", "nova-pro"},
	{"bedrock", "us.amazon.nova-pro-v1:0", "nova-pro"},
	{"bedrock", "amazon.nova-lite-v1:0", "nova-lite"},
	{"bedrock", "amazon.nova-micro-v1:0", "nova-micro"},
	{"bedrock", "us.amazon.nova-premier-v1:0", "nova-premier"},
	{"", "amazon/nova-lite-v1", "nova-lite"},
	{"amazon", "nova-micro", "nova-micro"},
	{"", "bedrock/amazon.nova-pro-v1:0", "nova-pro"},
	{"bedrock", "amazon.titan-text-express-v1", "titan-text-express"},
	{"bedrock", "amazon.titan-text-lite-v1", "titan-text-lite"},
	{"bedrock", "amazon.titan-text-premier-v1:0", "titan-text-premier"},
	// Whitespace and case.
	{"", "  gpt-4o-mini\n", "gpt-4o-mini"},
	{"OpenAI", "O3-MINI", "o3-mini"},
}

// intendedOverlaps are the ids of realIDs that more than one entry matches, with the entries
// in file order: the first is the one Lookup returns.
var intendedOverlaps = map[string][]string{
	"gpt-4o-2024-05-13": {"gpt-4o-2024-05-13", "gpt-4o"}, // the first gpt-4o snapshot cost more
}

func TestLookupRealIDs(t *testing.T) {
	tbl := Default()
	require.GreaterOrEqual(t, len(realIDs), 150)
	for _, tt := range realIDs {
		t.Run(tt.provider+"|"+tt.model, func(t *testing.T) {
			got, ok := tbl.Lookup(tt.provider, tt.model)
			require.True(t, ok, "not found")
			assert.Equal(t, tt.want, got.ID)
			assert.True(t, providers[got.Provider])
			// Entries overlap only where that is intended; the more specific entry comes first.
			id := strings.ToLower(strings.TrimSpace(tt.model))
			var matched []string
			for _, r := range tbl.rules {
				if r.re.regexp().MatchString(id) && !slices.Contains(matched, tbl.prices[r.entry].ID) {
					matched = append(matched, tbl.prices[r.entry].ID)
				}
			}
			if len(matched) > 1 {
				assert.Equal(t, intendedOverlaps[id], matched, "entries matching %q", id)
			}
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	tbl := Default()
	tests := []struct{ provider, model string }{
		{"", ""},
		{"openai", "   "},
		{"openai", "gpt"},
		{"openai", "gpt-4o-mini-tts"},
		{"openai", "gpt-4o-realtime-preview"},
		{"openai", "text-embedding-3-small"},
		{"openai", "ft:gpt-4o-mini-2024-07-18:acme::abc123"},
		{"openai", "o5"},
		{"anthropic", "claude-2.1"},
		{"anthropic", "claude-instant-1.2"},
		{"google", "gemini-2.5-flash-image-preview"},
		{"google", "gemma-3-27b-it"},
		{"meta", "llama-2-70b-chat"},
		{"ollama", "llama3.1:8b"},
		{"", "meta-llama/llama-3.3-70b-instruct:free"},
		{"deepseek", "deepseek-r1-distill-llama-70b"},
		{"nvidia", "nvidia/llama-3.1-nemotron-70b-instruct"},
		{"alibaba", "qwen-max"},
		{"acme", "my-fine-tune"},
		{"", strings.Repeat("gpt-4o", 100)},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"|"+tt.model, func(t *testing.T) {
			p, ok := tbl.Lookup(tt.provider, tt.model)
			assert.False(t, ok, "found %q", p.ID)
			assert.Zero(t, p)
		})
	}
}

func TestLookupCacheBounded(t *testing.T) {
	tbl, err := Parse(pricesJSON)
	require.NoError(t, err)
	for i := range 3 * maxCached {
		_, ok := tbl.Lookup("acme", fmt.Sprintf("model-%d", i))
		require.False(t, ok)
	}
	n := 0
	tbl.cache.Range(func(_, _ any) bool { n++; return true })
	assert.LessOrEqual(t, n, maxCached)

	// Results after eviction are the same as before.
	p, ok := tbl.Lookup("openai", "gpt-4o-mini")
	require.True(t, ok)
	assert.Equal(t, "gpt-4o-mini", p.ID)
}

func TestLookupConcurrent(t *testing.T) {
	tbl, err := Parse(pricesJSON)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				tt := realIDs[(g*31+i)%len(realIDs)]
				p, ok := tbl.Lookup(tt.provider, tt.model)
				if assert.True(t, ok) {
					assert.Equal(t, tt.want, p.ID)
				}
			}
		})
	}
	wg.Wait()
}

func FuzzLookup(f *testing.F) {
	for _, tt := range realIDs {
		f.Add(tt.provider, tt.model)
	}
	f.Add("acme", "unknown-model")
	tbl := Default()
	f.Fuzz(func(t *testing.T, provider, model string) {
		p1, ok1 := tbl.Lookup(provider, model)
		p2, ok2 := tbl.Lookup(provider, model) // cached
		if ok1 != ok2 || p1.ID != p2.ID {
			t.Fatalf("Lookup(%q, %q) not stable: %q %v, then %q %v", provider, model, p1.ID, ok1, p2.ID, ok2)
		}
		if ok1 && p1.Input < 0 {
			t.Fatalf("negative price for %q", model)
		}
	})
}
