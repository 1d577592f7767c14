package pricing

import "github.com/plumehq/plume/shared/trace"

// Price is what one model costs. All prices are in USD per 1M tokens.
type Price struct {
	// ID is the canonical model id of the table entry, such as "gpt-4o" or "claude-sonnet-4-5".
	ID string `json:"id"`
	// Provider is the model's provider: openai, anthropic, google, mistral, meta, deepseek,
	// xai, cohere or amazon.
	Provider string `json:"provider"`
	// Input is the price of an input token that was neither read from nor written to a cache.
	Input float64 `json:"input"`
	// Output is the price of an output token, reasoning tokens included.
	Output float64 `json:"output"`
	// CachedInput is the price of an input token read from a prompt cache; 0 means Input.
	CachedInput float64 `json:"cached_input,omitempty"`
	// CacheWrite is the price of an input token written to a prompt cache (Anthropic's
	// 5-minute cache write); 0 means Input.
	CacheWrite float64 `json:"cache_write,omitempty"`
	// LongContext, when set, prices the whole of a request whose input is longer than its
	// threshold. It is shared with the table: do not modify it.
	LongContext *Tier `json:"long_context,omitempty"`
}

// Tier is the pricing of long requests: when a request has more than ThresholdTokens input
// tokens (cached ones included), all its tokens are billed at the tier's prices. That is how
// Google (Gemini 1.5 above 128k, Gemini 2.5 Pro above 200k) and Anthropic (Claude Sonnet 4 and
// 4.5 above 200k) bill long context. Prices are in USD per 1M tokens.
type Tier struct {
	// ThresholdTokens is the largest input that is still billed at the base prices.
	ThresholdTokens int64 `json:"threshold_tokens"`
	// Input is the price of an uncached input token of a long request.
	Input float64 `json:"input"`
	// Output is the price of an output token of a long request.
	Output float64 `json:"output"`
	// CachedInput is the price of a cache-read input token of a long request; 0 means Input.
	CachedInput float64 `json:"cached_input,omitempty"`
	// CacheWrite is the price of a cache-write input token of a long request; 0 means Input.
	CacheWrite float64 `json:"cache_write,omitempty"`
}

// Cost returns the cost in USD of a call with usage u:
//
//	uncached = InputTokens - CachedInputTokens - CacheWriteTokens  (never below 0)
//	cost     = (uncached × Input + CachedInputTokens × CachedInput
//	            + CacheWriteTokens × CacheWrite + OutputTokens × Output) / 1,000,000
//
// where a CachedInput or CacheWrite of 0 means Input. When LongContext is set and InputTokens
// is above its threshold, the tier's prices replace all four. Negative token counts count as 0;
// reasoning tokens are part of OutputTokens and are not counted again. Nothing is rounded.
//
// With input and output tokens only, this is the spec's formula (§4.3):
// (inputTokens × inputPrice + outputTokens × outputPrice) / 1,000,000.
func (p Price) Cost(u trace.LLMUsage) float64 {
	in, out, cached, write := p.Input, p.Output, p.CachedInput, p.CacheWrite
	if lc := p.LongContext; lc != nil && u.InputTokens > lc.ThresholdTokens {
		in, out, cached, write = lc.Input, lc.Output, lc.CachedInput, lc.CacheWrite
	}
	if cached == 0 {
		cached = in
	}
	if write == 0 {
		write = in
	}
	inputTokens := max(u.InputTokens, 0)
	cachedTokens := max(u.CachedInputTokens, 0)
	writeTokens := max(u.CacheWriteTokens, 0)
	uncachedTokens := max(inputTokens-cachedTokens-writeTokens, 0)
	outputTokens := max(u.OutputTokens, 0)
	return (float64(uncachedTokens)*in + float64(cachedTokens)*cached +
		float64(writeTokens)*write + float64(outputTokens)*out) / 1e6
}
