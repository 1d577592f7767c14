package trace

// This file reads what Plume itself uses of a span's attributes: the model usage (Span.LLM) and
// the prompt link (Span.Link).

import (
	"math"
	"strings"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/jsonscan"
)

// parseLLMUsage reads the model usage of the attributes (Span.LLM). There is none (false)
// unless the attributes name a model (a non-empty string). Then:
//
//   - Provider and Model are the provider and model strings.
//   - InputTokens and OutputTokens are inputTokens and outputTokens (the spec's fields: integral
//     numbers or numeric strings, >= 0; other values count as absent). When absent, they come
//     from the usage object.
//   - usage with OpenAI Chat names: prompt_tokens, completion_tokens,
//     prompt_tokens_details.cached_tokens, completion_tokens_details.reasoning_tokens.
//     With OpenAI Responses names (input_tokens and input_tokens_details or
//     output_tokens_details): input_tokens includes the cached ones.
//     With Anthropic names (input_tokens, output_tokens, cache_read_input_tokens,
//     cache_creation_input_tokens): input_tokens excludes cache reads and writes, so
//     InputTokens = input_tokens + cache reads + cache writes.
//   - The cached, cache-write and reasoning counts always come from usage; they are capped so
//     that they never exceed the totals they are part of.
func (t *spanText) parseLLMUsage(a *wireAttributes) (LLMUsage, bool) {
	model, _ := t.stringValue(a.model)
	if model == "" {
		return LLMUsage{}, false
	}
	provider, _ := t.stringValue(a.provider)
	u := LLMUsage{Provider: provider, Model: model}
	usage := parseUsage(a.usage)
	u.InputTokens, u.OutputTokens = usage.InputTokens, usage.OutputTokens
	if n, ok := tokenCount(a.inputTokens); ok {
		u.InputTokens = n
	}
	if n, ok := tokenCount(a.outputTokens); ok {
		u.OutputTokens = n
	}
	u.CachedInputTokens = min(usage.CachedInputTokens, u.InputTokens)
	u.CacheWriteTokens = min(usage.CacheWriteTokens, u.InputTokens-u.CachedInputTokens)
	u.ReasoningTokens = min(usage.ReasoningTokens, u.OutputTokens)
	return u, true
}

// parseUsage reads a provider usage object (see parseLLMUsage); zero when raw is not one.
func parseUsage(raw []byte) LLMUsage {
	var f struct {
		promptTokens, completionTokens, promptDetails, completionDetails []byte
		inputTokens, outputTokens, inputDetails, outputDetails           []byte
		cacheRead, cacheCreation                                         []byte
	}
	for it := jsonscan.Members(raw); it.Next(); {
		switch string(it.Key) {
		case "prompt_tokens":
			f.promptTokens = it.Value
		case "completion_tokens":
			f.completionTokens = it.Value
		case "prompt_tokens_details":
			f.promptDetails = it.Value
		case "completion_tokens_details":
			f.completionDetails = it.Value
		case "input_tokens":
			f.inputTokens = it.Value
		case "output_tokens":
			f.outputTokens = it.Value
		case "input_tokens_details":
			f.inputDetails = it.Value
		case "output_tokens_details":
			f.outputDetails = it.Value
		case "cache_read_input_tokens":
			f.cacheRead = it.Value
		case "cache_creation_input_tokens":
			f.cacheCreation = it.Value
		}
	}
	var u LLMUsage
	switch {
	case f.promptTokens != nil || f.completionTokens != nil: // OpenAI Chat Completions
		u.InputTokens = count(f.promptTokens)
		u.OutputTokens = count(f.completionTokens)
		u.CachedInputTokens = count(member(f.promptDetails, "cached_tokens"))
		u.ReasoningTokens = count(member(f.completionDetails, "reasoning_tokens"))
	case f.inputDetails != nil || f.outputDetails != nil: // OpenAI Responses
		u.InputTokens = count(f.inputTokens)
		u.OutputTokens = count(f.outputTokens)
		u.CachedInputTokens = count(member(f.inputDetails, "cached_tokens"))
		u.ReasoningTokens = count(member(f.outputDetails, "reasoning_tokens"))
	default: // Anthropic
		u.CachedInputTokens = count(f.cacheRead)
		u.CacheWriteTokens = count(f.cacheCreation)
		u.InputTokens = count(f.inputTokens) + u.CachedInputTokens + u.CacheWriteTokens
		u.OutputTokens = count(f.outputTokens)
	}
	return u
}

// member returns the raw value of the member name of the object raw (nil when absent).
func member(raw []byte, name string) []byte {
	var v []byte
	for it := jsonscan.Members(raw); it.Next(); {
		if string(it.Key) == name {
			v = it.Value
		}
	}
	return v
}

// count is tokenCount, 0 when raw is not a count.
func count(raw []byte) int64 {
	n, _ := tokenCount(raw)
	return n
}

// tokenCount reads a non-negative integral token count (number or numeric string).
func tokenCount(raw []byte) (int64, bool) {
	if isAbsent(raw) {
		return 0, false
	}
	n, ok := integerValue(raw)
	if !ok || n < 0 || n > MaxTokens {
		return 0, false
	}
	return n, true
}

// parseLink reads attributes.zeroeval (COMPAT.md, "Hidden linkage metadata"): task,
// prompt_slug, prompt_version (integer or numeric string), prompt_version_id (a UUID is
// normalised), content_hash (lowercased). A top-level task attribute fills Task when zeroeval
// has none. Values of the wrong type are ignored; false when nothing is known (Span.Link nil).
func (t *spanText) parseLink(a *wireAttributes) (PromptLink, bool) {
	var l PromptLink
	var f struct{ task, slug, version, versionID, hash []byte }
	for it := jsonscan.Members(a.zeroeval); it.Next(); {
		switch string(it.Key) {
		case api.LinkageKeyTask:
			f.task = it.Value
		case api.LinkageKeyPromptSlug:
			f.slug = it.Value
		case api.LinkageKeyPromptVersion:
			f.version = it.Value
		case api.LinkageKeyPromptVersionID:
			f.versionID = it.Value
		case api.LinkageKeyContentHash:
			f.hash = it.Value
		}
	}
	l.Task, _ = t.stringValue(f.task)
	if l.Task == "" {
		l.Task, _ = t.stringValue(a.task)
	}
	l.PromptSlug, _ = t.stringValue(f.slug)
	if n, ok := integerValue(f.version); ok && n > 0 && n <= math.MaxInt32 {
		l.PromptVersion = int(n)
	}
	l.PromptVersionID, _ = t.stringValue(f.versionID)
	if id, ok := normalizeUUID(l.PromptVersionID); ok {
		l.PromptVersionID = id
	}
	hash, _ := t.stringValue(f.hash)
	l.ContentHash = strings.ToLower(hash)
	return l, l != PromptLink{}
}
