package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
	if readValue(raw, dst) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return invalidf("%s: must be %s", name, want)
	}
	return nil
}

// readValue reads raw, a JSON value, into dst without the decoder when it is what most
// requests send, as json.Unmarshal would: a boolean, a number that is an int or a float64, a
// string without escapes, an array of messages (readMessages). It reports false, dst left as
// it is, for anything else, which the decoder reads (or refuses). FuzzReadValue holds it to
// json.Unmarshal.
func readValue(raw []byte, dst any) bool {
	switch dst := dst.(type) {
	case *bool:
		switch string(raw) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			return false
		}
	case **int:
		n, err := strconv.ParseInt(string(raw), 10, strconv.IntSize)
		if err != nil {
			return false
		}
		*dst = ptr(int(n))
	case **float64:
		if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
			return false // ParseFloat reads Inf, NaN and hexadecimal numbers too
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return false
		}
		*dst = &f
	case *string:
		s, ok := plainString(raw)
		if !ok {
			return false
		}
		*dst = s
	case *[]wire.ChatMessage:
		messages, ok := readMessages(raw)
		if !ok {
			return false
		}
		*dst = messages
	default:
		return false
	}
	return true
}

// plainString is the string raw stands for when it is a JSON string without escapes whose
// bytes are valid UTF-8 with no control character: those bytes, as json.Unmarshal reads it.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	ascii := true
	for _, c := range inner {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
		ascii = ascii && c < 0x80
	}
	if !ascii && !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}

// readMessages reads an array of messages as json.Unmarshal does, for the messages most
// requests send: objects whose members are role, content, tool_call_id (strings without
// escapes; content any value, kept as it is) and tool_calls (decoded by json.Unmarshal), each
// at most once, and members of other names (skipped). It reports false for anything else:
// another value, a duplicate member, a name that matches a field only in another case, or a
// name with an escape or a byte outside ASCII.
func readMessages(raw []byte) ([]wire.ChatMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	messages := make([]wire.ChatMessage, 0, 4)
	if i = skipSpace(raw, i+1); i < len(raw) && raw[i] == ']' {
		return messages, skipSpace(raw, i+1) == len(raw)
	}
	for i < len(raw) {
		end := skipValue(raw, i)
		m, ok := readMessage(raw[i:end])
		if !ok {
			return nil, false
		}
		messages = append(messages, m)
		if i = skipSpace(raw, end); i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ']':
			return messages, skipSpace(raw, i+1) == len(raw)
		case ',':
			i = skipSpace(raw, i+1)
		default:
			return nil, false
		}
	}
	return nil, false
}

// readMessage reads one message of readMessages: raw is a JSON object.
func readMessage(raw []byte) (wire.ChatMessage, bool) {
	var (
		m    wire.ChatMessage
		seen [4]bool
	)
	if len(raw) < 2 || raw[0] != '{' {
		return m, false
	}
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == '}' {
		return m, i == len(raw)-1
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return m, false
		}
		keyEnd := skipValue(raw, i)
		key := raw[i+1 : keyEnd-1]
		i = skipSpace(raw, keyEnd)
		if i >= len(raw) || raw[i] != ':' {
			return m, false
		}
		start := skipSpace(raw, i+1)
		end := skipValue(raw, start)
		value := raw[start:end:end]
		field := slices.Index(messageFields[:], string(key))
		if field < 0 {
			for _, c := range key {
				if c >= 0x80 || c == '\\' {
					return m, false
				}
			}
			if slices.ContainsFunc(messageFields[:], func(f string) bool { return strings.EqualFold(f, string(key)) }) {
				return m, false
			}
		} else if seen[field] {
			return m, false
		} else {
			seen[field] = true
			var ok bool
			switch field {
			case 0:
				m.Role, ok = plainString(value)
			case 1:
				m.Content, ok = value, len(value) > 0
			case 2:
				ok = json.Unmarshal(value, &m.ToolCalls) == nil
			case 3:
				m.ToolCallID, ok = plainString(value)
			}
			if !ok {
				return m, false
			}
		}
		if i = skipSpace(raw, end); i >= len(raw) {
			return m, false
		}
		switch raw[i] {
		case '}':
			return m, i == len(raw)-1
		case ',':
			i = skipSpace(raw, i+1)
		default:
			return m, false
		}
	}
}

// messageFields are the members of wire.ChatMessage, by readMessage's field number.
var messageFields = [...]string{"role", "content", "tool_calls", "tool_call_id"}

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
		if s, ok := plainString(raw); ok {
			return s, nil, nil
		}
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
