package pricing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/trace"
)

func TestCost(t *testing.T) {
	gpt4o := Price{ID: "gpt-4o", Input: 2.50, Output: 10, CachedInput: 1.25}
	noCache := Price{ID: "plain", Input: 2, Output: 8}
	sonnet := Price{ID: "claude-sonnet-4-5", Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75,
		LongContext: &Tier{ThresholdTokens: 200_000, Input: 6, Output: 22.50, CachedInput: 0.60, CacheWrite: 7.50}}
	gemini := Price{ID: "gemini-1.5-pro", Input: 1.25, Output: 5, CachedInput: 0.3125,
		LongContext: &Tier{ThresholdTokens: 128_000, Input: 2.50, Output: 10, CachedInput: 0.625}}
	tierNoCache := Price{ID: "tiered", Input: 1, Output: 2, LongContext: &Tier{ThresholdTokens: 100, Input: 10, Output: 20}}

	tests := []struct {
		name  string
		price Price
		usage trace.LLMUsage
		want  float64
	}{
		{"zero tokens", gpt4o, trace.LLMUsage{}, 0},
		// Spec §4.3: (1000 × 2.50 + 500 × 10) / 1e6 = (2500 + 5000) / 1e6.
		{"spec formula", gpt4o, trace.LLMUsage{InputTokens: 1000, OutputTokens: 500}, 0.0075},
		{"one million each", gpt4o, trace.LLMUsage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, 12.50},
		{"output only", gpt4o, trace.LLMUsage{OutputTokens: 2000}, 0.02},
		// 600 uncached × 2.50 + 400 cached × 1.25 + 100 × 10 = 1500 + 500 + 1000.
		{"cached input", gpt4o, trace.LLMUsage{InputTokens: 1000, CachedInputTokens: 400, OutputTokens: 100}, 0.003},
		// No cached price: cached tokens cost Input. (1000 × 2 + 100 × 8) / 1e6.
		{"cached without cached price", noCache, trace.LLMUsage{InputTokens: 1000, CachedInputTokens: 400, OutputTokens: 100}, 0.0028},
		// 10000 uncached × 3 + 50000 read × 0.30 + 20000 write × 3.75 + 1000 × 15
		// = 30000 + 15000 + 75000 + 15000 = 135000.
		{"cache read and write", sonnet, trace.LLMUsage{InputTokens: 80_000, CachedInputTokens: 50_000, CacheWriteTokens: 20_000, OutputTokens: 1000}, 0.135},
		// Cache writes without a write price cost Input: (100 × 2 + 0) / 1e6.
		{"cache write without write price", noCache, trace.LLMUsage{InputTokens: 100, CacheWriteTokens: 100}, 0.0002},
		// At the threshold the base prices apply: 200000 × 3 + 1000 × 15 = 615000.
		{"long context at threshold", sonnet, trace.LLMUsage{InputTokens: 200_000, OutputTokens: 1000}, 0.615},
		// Above it the whole request uses the tier: 200001 × 6 + 1000 × 22.50 = 1222506.
		{"long context above threshold", sonnet, trace.LLMUsage{InputTokens: 200_001, OutputTokens: 1000}, 1.222506},
		// 100000 uncached × 6 + 100000 read × 0.60 + 50000 write × 7.50 + 2000 × 22.50
		// = 600000 + 60000 + 375000 + 45000 = 1080000.
		{"long context with cache", sonnet, trace.LLMUsage{InputTokens: 250_000, CachedInputTokens: 100_000, CacheWriteTokens: 50_000, OutputTokens: 2000}, 1.08},
		// 150000 uncached × 2.50 + 50000 cached × 0.625 + 1000 × 10 = 375000 + 31250 + 10000.
		{"gemini above 128k", gemini, trace.LLMUsage{InputTokens: 200_000, CachedInputTokens: 50_000, OutputTokens: 1000}, 0.41625},
		// 100000 × 1.25 + 1000 × 5 = 130000.
		{"gemini below 128k", gemini, trace.LLMUsage{InputTokens: 100_000, OutputTokens: 1000}, 0.13},
		// Tier without cached price: cached tokens cost the tier's Input. (1000 × 10 + 10 × 20).
		{"tier without cached price", tierNoCache, trace.LLMUsage{InputTokens: 1000, CachedInputTokens: 500, OutputTokens: 10}, 0.0102},
		// Reasoning tokens are part of OutputTokens and not counted twice: (100 × 2.50 + 1000 × 10).
		{"reasoning tokens", gpt4o, trace.LLMUsage{InputTokens: 100, OutputTokens: 1000, ReasoningTokens: 800}, 0.01025},
		// More cached than input: uncached floors at 0, cached tokens are still billed.
		{"cached above input", gpt4o, trace.LLMUsage{InputTokens: 100, CachedInputTokens: 200}, 0.00025},
		{"negative counts", gpt4o, trace.LLMUsage{InputTokens: -5, OutputTokens: -5, CachedInputTokens: -1, CacheWriteTokens: -1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, tt.price.Cost(tt.usage), 1e-12)
		})
	}
}

func TestCostFromDefaultTable(t *testing.T) {
	tests := []struct {
		provider, model string
		usage           trace.LLMUsage
		want            float64
	}{
		// (1000 × 0.15 + 500 × 0.60) / 1e6
		{"openai", "gpt-4o-mini", trace.LLMUsage{InputTokens: 1000, OutputTokens: 500}, 0.00045},
		// (1000 × 2.50 + 500 × 10) / 1e6
		{"openai", "gpt-4o-2024-08-06", trace.LLMUsage{InputTokens: 1000, OutputTokens: 500}, 0.0075},
		// (1000 × 2 + 1000 × 0.50 + 1000 × 8) / 1e6
		{"openai", "gpt-4.1", trace.LLMUsage{InputTokens: 2000, CachedInputTokens: 1000, OutputTokens: 1000}, 0.0105},
		// 1000 × 3 + 1000 × 0.30 + 1000 × 3.75 + 1000 × 15 = 22050.
		{"bedrock", "us.anthropic.claude-3-5-sonnet-20241022-v2:0", trace.LLMUsage{InputTokens: 3000, CachedInputTokens: 1000, CacheWriteTokens: 1000, OutputTokens: 1000}, 0.02205},
		// 2.5 Pro above 200k: 300000 × 2.50 + 1000 × 15 = 765000.
		{"google", "gemini-2.5-pro", trace.LLMUsage{InputTokens: 300_000, OutputTokens: 1000}, 0.765},
		// 2.5 Pro below: 100000 × 1.25 + 1000 × 10 = 135000.
		{"google", "gemini-2.5-pro", trace.LLMUsage{InputTokens: 100_000, OutputTokens: 1000}, 0.135},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			p, ok := Default().Lookup(tt.provider, tt.model)
			require.True(t, ok)
			assert.InDelta(t, tt.want, p.Cost(tt.usage), 1e-12)
		})
	}
}

func BenchmarkLookupCost(b *testing.B) {
	tbl := Default()
	ids := []struct{ provider, model string }{
		{"openai", "gpt-4o-mini"},
		{"openai", "gpt-4o-2024-08-06"},
		{"anthropic", "claude-sonnet-4-5-20250929"},
		{"bedrock", "us.anthropic.claude-3-5-sonnet-20241022-v2:0"},
		{"google", "models/gemini-2.5-flash"},
		{"groq", "llama-3.3-70b-versatile"},
		{"openai", "GPT-4.1"},
		{"acme", "my-fine-tune"}, // unknown
	}
	u := trace.LLMUsage{InputTokens: 1200, CachedInputTokens: 200, OutputTokens: 300}
	b.ReportAllocs()
	var sum float64
	i := 0
	for b.Loop() {
		id := ids[i%len(ids)]
		i++
		if p, ok := tbl.Lookup(id.provider, id.model); ok {
			sum += p.Cost(u)
		}
	}
	_ = sum
}

// BenchmarkLookupUncached is the first sight of a model id: every pattern is tried.
func BenchmarkLookupUncached(b *testing.B) {
	tbl := Default()
	ids := []string{"gpt-4o-mini", "us.anthropic.claude-3-5-sonnet-20241022-v2:0", "llama-3.3-70b-versatile", "my-fine-tune"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tbl.match(ids[i%len(ids)])
		i++
	}
}
