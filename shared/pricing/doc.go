// Package pricing prices language-model calls: a table of list prices per model, and the cost
// of one call's token usage (spec §4.3, "Language-model cost").
//
// The table ships in the repository as prices.json and is embedded in the binary; Default
// returns it. Prices are list prices in USD per 1M tokens as published by each provider
// (for open-weight models that the provider does not sell itself, such as Llama, the price of
// the host named in the entry's note). They change without notice: re-check them and update
// last_checked in prices.json. Parse reads another table in the same format, for tests and
// for overrides.
//
// The prices are those of standard, on-demand text tokens. Not modelled: batch and flex
// discounts, priority tiers, regional surcharges, audio and image token prices, per-request
// tool fees (web search, grounding) and Anthropic's 1-hour cache writes (2x input; the table
// has the 5-minute price, 1.25x).
//
// Each entry has a canonical id and a list of anchored regular expressions, matched
// case-insensitively against a model id as SDKs report it: bare names, provider prefixes
// ("openai/gpt-4o", "models/gemini-1.5-pro"), OpenRouter ids, dated snapshots, "-latest"
// aliases, Amazon Bedrock ids ("us.anthropic.claude-3-5-sonnet-20241022-v2:0") and Vertex AI
// ids ("claude-3-5-sonnet-v2@20241022"). The first entry, in file order, with a matching
// pattern wins, so more specific entries ("gpt-4o-mini") come before more general ones.
package pricing
