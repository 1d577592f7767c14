package wire

import (
	"bytes"
	"encoding/json"
)

// OpenAI's Chat Completions (https://platform.openai.com/docs/api-reference/chat), as the model
// client sends it and the gateway reads and answers it.

// ChatRequest is a chat completion request as the model client sends it. The gateway reads its
// callers' requests field by field (their fields are checked one by one), into the same
// message, tool and format types.
type ChatRequest struct {
	Model               string              `json:"model"`
	Messages            []ChatMessage       `json:"messages"`
	Temperature         *float64            `json:"temperature,omitempty"`
	MaxTokens           int                 `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                 `json:"max_completion_tokens,omitempty"`
	ResponseFormat      *ChatResponseFormat `json:"response_format,omitempty"`
}

// ChatMessage is a message of a request. Content is a string, an array of ChatParts, or null.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []ChatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// ChatPart is a content part: "text", "image_url", "refusal", ...
type ChatPart struct {
	Type     string       `json:"type"`
	Text     string       `json:"text,omitempty"`
	Refusal  string       `json:"refusal,omitempty"`
	ImageURL ChatImageURL `json:"image_url,omitzero"`
}

// ChatImageURL is an image_url part's image: {"url": ...}. A bare string, as some clients
// send, is read as the URL.
type ChatImageURL struct {
	URL string `json:"url"`
}

// UnmarshalJSON reads {"url": ...} or a bare string.
func (u *ChatImageURL) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &u.URL)
	}
	var v struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	u.URL = v.URL
	return nil
}

// ChatTool is a tool a request offers: a function and its JSON Schema.
type ChatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// ChatToolCall is an assistant message's tool call, in a request or an answer.
type ChatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function ChatFunctionCall `json:"function"`
}

// ChatFunctionCall is the function a tool call calls, its arguments JSON text.
type ChatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChatResponseFormat is response_format: "text", "json_object" or "json_schema".
type ChatResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *ChatJSONSchema `json:"json_schema,omitempty"`
}

// ChatJSONSchema is response_format.json_schema.
type ChatJSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict,omitempty"`
}

// ChatCompletion is an answer (object "chat.completion"). Error is set instead of the rest in
// an error body, which some OpenAI-compatible servers send with status 200.
type ChatCompletion struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []ChatChoice    `json:"choices"`
	Usage   *ChatUsage      `json:"usage,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// ChatChoice is a choice of an answer.
type ChatChoice struct {
	Index        int               `json:"index"`
	Message      ChatAnswerMessage `json:"message"`
	Logprobs     *struct{}         `json:"logprobs"`
	FinishReason string            `json:"finish_reason"`
}

// ChatAnswerMessage is an answer's message: Content is null when the model only called tools.
type ChatAnswerMessage struct {
	Role      string         `json:"role"`
	Content   *ChatText      `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []ChatToolCall `json:"tool_calls,omitempty"`
}

// ChatText is the content of an answer's message or delta: a string, written as one. It reads
// leniently, as answers of OpenAI-compatible servers vary: a string is its value, any other
// JSON value its compact JSON text (an array of content parts, for one).
type ChatText string

// UnmarshalJSON reads a string, or keeps another value's compact JSON text.
func (t *ChatText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, (*string)(t))
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return err
	}
	*t = ChatText(out.String())
	return nil
}

// ChatUsage is an answer's usage. prompt_tokens counts the cached tokens too.
type ChatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// ChatChunk is one event of a streamed answer (object "chat.completion.chunk",
// https://platform.openai.com/docs/api-reference/chat-streaming). The usage chunk, sent last
// when the request asked for stream_options.include_usage, has no choices. Error is set in an
// error line.
type ChatChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []ChatChunkChoice `json:"choices"`
	Usage   *ChatUsage        `json:"usage,omitempty"`
	Error   json.RawMessage   `json:"error,omitempty"`
}

// ChatChunkChoice is a chunk's part of a choice.
type ChatChunkChoice struct {
	Index        int       `json:"index"`
	Delta        ChatDelta `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// ChatDelta is what a chunk adds to a choice's message.
type ChatDelta struct {
	Role      string              `json:"role,omitempty"`
	Content   *ChatText           `json:"content,omitempty"`
	ToolCalls []ChatToolCallDelta `json:"tool_calls,omitempty"`
}

// ChatToolCallDelta is what a chunk adds to the tool call of index Index: its id, type and
// name come with its first delta.
type ChatToolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ChatErrorBody is OpenAI's error body, which OpenAI clients parse: {"error": {...}}.
type ChatErrorBody struct {
	Error ChatError `json:"error"`
}

// ChatError is the error of a ChatErrorBody.
type ChatError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}
