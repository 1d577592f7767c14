package fakemodel

import (
	"encoding/json"
	"strings"
	"time"
)

// Rule answers the model calls it matches.
type Rule struct {
	// Match reports whether the rule answers call; nil matches every call. It runs while the
	// server holds its lock, so it must not call the Server's methods.
	Match Matcher
	// Reply is what a matched call gets.
	Reply Reply
	// Times, when positive, limits the rule to the first Times calls it matches; later calls
	// fall through to the next rules. Zero means no limit.
	Times int
}

// Reply is the answer a rule gives. A non-zero Status makes it an error reply; otherwise the
// content is the first of Refusal, JSON and Text that is set, or the default answer when none
// is. Latency applies to every kind.
type Reply struct {
	// Text is the assistant's text, sent as it is (also to a structured-output request, so a
	// test can feed a client text that is not valid JSON).
	Text string
	// JSON is the structured answer: the message content for a response_format or
	// output_config.format request, or the arguments (OpenAI) or input (Anthropic) of a forced
	// tool call. It is sent as it is, valid against the request's schema or not.
	JSON json.RawMessage
	// Refusal makes the model refuse: OpenAI's message.refusal with null content, Anthropic's
	// stop_reason "refusal".
	Refusal string
	// Truncate cuts the content in half and ends it as a model that ran out of tokens does:
	// finish_reason "length", stop_reason "max_tokens". A request's own max_tokens cuts the
	// content the same way when the answer is longer.
	Truncate bool
	// CachedTokens is the part of the prompt reported as read from the prompt cache
	// (prompt_tokens_details.cached_tokens, cache_read_input_tokens), at most the whole prompt.
	CachedTokens int

	// Status, when non-zero, is the HTTP status of an error reply in the provider's shape,
	// such as 429, 500, 503 or Anthropic's 529.
	Status int
	// RetryAfter is sent with an error reply as Retry-After (whole seconds, rounded up) and
	// retry-after-ms, which the official SDKs read first.
	RetryAfter time.Duration
	// ErrorMessage replaces the default message of an error reply.
	ErrorMessage string

	// Latency delays the reply. The wait ends early when the request's context ends, and then
	// nothing is written.
	Latency time.Duration
	// ChunkInterval paces a streamed reply: the server waits this long before each event after
	// the first, so a test can tell chunks passed on as they come from chunks held back. A
	// client that goes away ends the wait, and nothing more is written.
	ChunkInterval time.Duration
}

// Matcher reports whether a rule answers a call.
type Matcher func(Call) bool

// Contains matches calls whose last user message contains s.
func Contains(s string) Matcher {
	return func(c Call) bool { return strings.Contains(c.LastUser(), s) }
}

// SystemContains matches calls whose system prompt contains s.
func SystemContains(s string) Matcher {
	return func(c Call) bool { return strings.Contains(c.System, s) }
}

// AnyContains matches calls where the system prompt or any message contains s.
func AnyContains(s string) Matcher {
	return func(c Call) bool {
		if strings.Contains(c.System, s) {
			return true
		}
		for _, m := range c.Messages {
			if strings.Contains(m.Text, s) {
				return true
			}
		}
		return false
	}
}

// ModelIs matches calls for the model id.
func ModelIs(model string) Matcher {
	return func(c Call) bool { return c.Model == model }
}

// SchemaIs matches structured-output calls whose schema (or forced tool) has the name.
func SchemaIs(name string) Matcher {
	return func(c Call) bool { return c.SchemaName == name }
}

// APIIs matches calls made to one provider's API.
func APIIs(api API) Matcher {
	return func(c Call) bool { return c.API == api }
}

// All matches calls that every one of ms matches.
func All(ms ...Matcher) Matcher {
	return func(c Call) bool {
		for _, m := range ms {
			if m != nil && !m(c) {
				return false
			}
		}
		return true
	}
}
