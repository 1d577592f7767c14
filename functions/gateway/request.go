package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/plumehq/plume/shared/llm/wire"
)

// This file reads an OpenAI chat completion request (https://platform.openai.com/docs/api-reference/chat)
// for the relays that translate it (Anthropic's, Bedrock's): readOAChat checks each field's
// JSON type, and readConversation (conversation.go) reads its messages and tools once for both.

// oaChat is an OpenAI chat completion request as the translating relays (Anthropic's,
// Bedrock's) read it: every field they translate, each checked for its JSON type.
type oaChat struct {
	Messages          []wire.ChatMessage
	Tools             []wire.ChatTool
	Format            wire.ChatResponseFormat
	Temperature, TopP *float64
	// MaxTokens is max_completion_tokens, else max_tokens; nil when neither is set.
	MaxTokens *int
	// Parallel is parallel_tool_calls; nil when unset.
	Parallel *bool
	Stream   bool
	// IncludeUsage is stream_options.include_usage of a streamed request.
	IncludeUsage bool
	User         string
	Stop         []string
	ToolChoice   json.RawMessage
}

// invalidError is a request a relay cannot translate: a 400 whose message names the parameter.
type invalidError struct{ msg string }

// Error is the message, which a 400 sends as it is.
func (e *invalidError) Error() string { return e.msg }

// invalidf is an *invalidError with a formatted message.
func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

// readOAChat reads fields for a relay to provider, which answers one choice per request.
// Refused, as *invalidError: a field of the wrong type, no messages or only system ones (the
// translated request would have no turn, which the provider refuses after a call for nothing),
// n other than 1, and the deprecated functions and function_call.
func readOAChat(fields map[string]json.RawMessage, provider string) (*oaChat, error) {
	c := &oaChat{ToolChoice: fields["tool_choice"]}
	var (
		maxTokens, maxOut *int
		n                 *int
		streamOptions     struct {
			IncludeUsage bool `json:"include_usage"`
		}
	)
	for _, f := range []struct {
		name, want string
		dst        any
	}{
		{"messages", "an array of messages", &c.Messages},
		{"tools", "an array of tools", &c.Tools},
		{"response_format", "an object", &c.Format},
		{"temperature", "a number", &c.Temperature},
		{"top_p", "a number", &c.TopP},
		{"max_tokens", "an integer", &maxTokens},
		{"max_completion_tokens", "an integer", &maxOut},
		{"n", "an integer", &n},
		{"parallel_tool_calls", "a boolean", &c.Parallel},
		{"stream", "a boolean", &c.Stream},
		{"stream_options", "an object", &streamOptions},
		{"user", "a string", &c.User},
	} {
		if err := readField(fields, f.name, f.want, f.dst); err != nil {
			return nil, err
		}
	}
	switch {
	case len(c.Messages) == 0:
		return nil, invalidf("messages: at least one message is required")
	case !slices.ContainsFunc(c.Messages, isTurn):
		return nil, invalidf("messages: %s needs a user message besides the system ones", provider)
	case n != nil && *n != 1:
		return nil, invalidf("n: %s answers one choice per request: n must be 1", provider)
	case fields["functions"] != nil || fields["function_call"] != nil:
		return nil, invalidf("functions: the deprecated functions and function_call are not translated: use tools and tool_choice")
	}
	c.MaxTokens = cmp.Or(maxOut, maxTokens)
	c.IncludeUsage = c.Stream && streamOptions.IncludeUsage
	stop, err := readStop(fields["stop"])
	if err != nil {
		return nil, err
	}
	c.Stop = stop
	return c, nil
}

// isTurn reports whether m is a turn of the conversation rather than a system prompt.
func isTurn(m wire.ChatMessage) bool { return m.Role != "system" && m.Role != "developer" }

// readField decodes fields[name] into dst; a missing or null field leaves dst as it is.
func readField(fields map[string]json.RawMessage, name, want string, dst any) error {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return invalidf("%s: must be %s", name, want)
	}
	return nil
}

// readStop reads stop: a string, an array of strings, or null.
func readStop(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if raw[0] == '"' && json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, invalidf("stop: must be a string or an array of strings")
	}
	return list, nil
}

// readContent reads a message's content: a string, an array of parts, or null.
func readContent(raw json.RawMessage) (string, []wire.ChatPart, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", nil, fmt.Errorf("not a valid string")
		}
		return s, nil, nil
	case raw[0] == '[':
		var parts []wire.ChatPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", nil, fmt.Errorf("not a valid array of content parts")
		}
		return "", parts, nil
	}
	return "", nil, fmt.Errorf("must be a string or an array of content parts")
}
