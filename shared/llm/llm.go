package llm

import (
	"encoding/json"
	"time"
)

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Request is one call to a model.
type Request struct {
	// Model is the model id: "provider/model" ("openai/gpt-4o-mini", "groq/llama-3.3-70b"),
	// a bare name recognised by family ("gpt-4o-mini", "claude-sonnet-4-5") or a Bedrock id
	// ("us.anthropic.claude-3-5-haiku-20241022-v1:0"). See Route.
	Model string
	// System is the system prompt; empty for none.
	System string
	// Messages is the conversation, oldest first; it must not be empty.
	Messages []Message
	// Temperature is the sampling temperature; nil leaves the provider's default. It is not
	// sent to OpenAI reasoning models (o1, o3, o4, gpt-5), which reject it.
	Temperature *float64
	// MaxTokens caps the answer's tokens; 0 leaves the provider's default (Anthropic requires
	// one: DefaultMaxTokens is sent).
	MaxTokens int
	// Schema, when set, asks for a JSON answer that satisfies it (structured output) and
	// validates the answer; Response.JSON holds it.
	Schema *Schema
}

// Message is one turn of a conversation.
type Message struct {
	// Role is RoleUser or RoleAssistant.
	Role string
	// Text is the message's text.
	Text string
	// Images are sent with the text, before it; only user messages may have images.
	Images []Image
}

// Image is an image attached to a message: inline bytes, or a URL for the providers that fetch
// images themselves (OpenAI-compatible and Anthropic; Bedrock needs bytes).
type Image struct {
	// MediaType is the image's type: image/png, image/jpeg, image/gif or image/webp.
	MediaType string
	// Data is the image; it is sent base64-encoded.
	Data []byte
	// URL is where the provider fetches the image when Data is empty.
	URL string
}

// Schema describes the JSON answer a program expects.
type Schema struct {
	// Name names the answer (the tool name for Anthropic and Bedrock, json_schema.name for
	// OpenAI-compatible providers): letters, digits, "_" and "-", at most 64; "answer" when
	// empty.
	Name string
	// Description tells the model what the answer is for.
	Description string
	// JSON is a JSON Schema object. OpenAI's strict mode, which is requested, needs every
	// property listed in required and "additionalProperties": false on every object. The
	// answer is checked against type, properties, required, additionalProperties, items,
	// enum, minimum and maximum; other keywords are left to the provider.
	JSON json.RawMessage
}

// Usage is the token usage of a call, summed over the attempts the provider billed.
type Usage struct {
	// InputTokens counts all input tokens, cached ones included.
	InputTokens int64
	// OutputTokens counts all output tokens, reasoning ones included.
	OutputTokens int64
	// CachedInputTokens counts input tokens read from a prompt cache (part of InputTokens).
	CachedInputTokens int64
	// CacheWriteTokens counts input tokens written to a prompt cache (part of InputTokens;
	// Anthropic and Bedrock report them).
	CacheWriteTokens int64
}

func (u *Usage) add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CachedInputTokens += v.CachedInputTokens
	u.CacheWriteTokens += v.CacheWriteTokens
}

// Cost sources of a Response, the same words as span cost sources (pricing.SourceTable,
// pricing.SourceUnknownModel).
const (
	CostSourceTable        = "price_table"
	CostSourceUnknownModel = "unknown_model"
)

// Response is a model's answer.
type Response struct {
	// Text is the answer's text; with a Schema, the JSON answer as text.
	Text string
	// JSON is the validated answer when Request.Schema was set.
	JSON json.RawMessage
	// Model is the model that answered, as the provider reports it (often a dated snapshot).
	Model string
	// Usage is the token usage of every billed attempt, the repair retry's included.
	Usage Usage
	// Cost is the cost of Usage in USD; 0 when the model is not priced.
	Cost float64
	// CostSource is CostSourceTable when Cost comes from the price table,
	// CostSourceUnknownModel when the model is not in it, and empty without a Pricer.
	CostSource string
	// StopReason is why the model stopped, in the provider's words ("stop", "end_turn",
	// "tool_use", ...).
	StopReason string
	// Attempts is the number of HTTP requests sent, retries and the repair retry included.
	Attempts int
	// Duration is the wall time of the call, waits between attempts included.
	Duration time.Duration
}
