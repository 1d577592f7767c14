package gateway

import (
	"cmp"
	"encoding/json"
	"slices"
)

// oaChat is an OpenAI chat completion request as the translating relays (Anthropic's,
// Bedrock's) read it: every field they translate, each checked for its JSON type.
type oaChat struct {
	Messages          []oaMessage
	Tools             []oaTool
	Format            oaFormat
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

// readOAChat reads fields for a relay to provider, which answers one choice per request.
// Refused, as *amInvalid: a field of the wrong type, no messages or only system ones (the
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
		if err := amField(fields, f.name, f.want, f.dst); err != nil {
			return nil, err
		}
	}
	switch {
	case len(c.Messages) == 0:
		return nil, amInvalidf("messages: at least one message is required")
	case !slices.ContainsFunc(c.Messages, isTurn):
		return nil, amInvalidf("messages: %s needs a user message besides the system ones", provider)
	case n != nil && *n != 1:
		return nil, amInvalidf("n: %s answers one choice per request: n must be 1", provider)
	case fields["functions"] != nil || fields["function_call"] != nil:
		return nil, amInvalidf("functions: the deprecated functions and function_call are not translated: use tools and tool_choice")
	}
	c.MaxTokens = cmp.Or(maxOut, maxTokens)
	c.IncludeUsage = c.Stream && streamOptions.IncludeUsage
	stop, err := amStopSequences(fields["stop"])
	if err != nil {
		return nil, err
	}
	c.Stop = stop
	return c, nil
}

// isTurn reports whether m is a turn of the conversation rather than a system prompt.
func isTurn(m oaMessage) bool { return m.Role != "system" && m.Role != "developer" }
