package wire

import "encoding/json"

// Anthropic's Messages (https://docs.anthropic.com/en/api/messages), as the model client and
// the gateway send it and read its answers.

// MessagesRequest is a Messages request. max_tokens is required.
type MessagesRequest struct {
	Model         string              `json:"model"`
	System        []MessagesBlock     `json:"system,omitempty"`
	Messages      []MessagesMessage   `json:"messages"`
	MaxTokens     int                 `json:"max_tokens"`
	Temperature   *float64            `json:"temperature,omitempty"`
	TopP          *float64            `json:"top_p,omitempty"`
	StopSequences []string            `json:"stop_sequences,omitempty"`
	Tools         []MessagesTool      `json:"tools,omitempty"`
	ToolChoice    *MessagesToolChoice `json:"tool_choice,omitempty"`
	Metadata      *MessagesMetadata   `json:"metadata,omitempty"`
	Stream        bool                `json:"stream,omitempty"`
}

// MessagesMessage is a turn: Role is "user" or "assistant".
type MessagesMessage struct {
	Role    string          `json:"role"`
	Content []MessagesBlock `json:"content"`
}

// MessagesBlock is a request's content block: text, image, tool_use or tool_result.
type MessagesBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Source    *MessagesSource `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []MessagesBlock `json:"content,omitempty"`
}

// MessagesSource is an image block's image: "base64" data or a "url" Anthropic fetches.
type MessagesSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// MessagesTool is a tool a request offers (https://docs.anthropic.com/en/docs/build-with-claude/tool-use).
type MessagesTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// MessagesToolChoice is tool_choice: Type "auto", "any", "tool" (Name) or "none".
type MessagesToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// MessagesMetadata is a request's metadata.
type MessagesMetadata struct {
	UserID string `json:"user_id"`
}

// MessagesResponse is an answer (type "message"), or a stream's message_start message.
type MessagesResponse struct {
	ID         string             `json:"id"`
	Model      string             `json:"model"`
	Content    []MessagesOutBlock `json:"content"`
	StopReason string             `json:"stop_reason"`
	Usage      MessagesUsage      `json:"usage"`
}

// MessagesOutBlock is an answer's content block: "text", "tool_use", "thinking", ...
type MessagesOutBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// MessagesUsage is an answer's usage. input_tokens counts only the tokens after the last cache
// breakpoint: the prompt is it plus the tokens read from and written to the cache.
type MessagesUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// MessagesErrorBody is an error's body (https://docs.anthropic.com/en/api/errors), and the
// error of a stream's error event.
type MessagesErrorBody struct {
	Error MessagesError `json:"error"`
}

// MessagesError is the error of a MessagesErrorBody: its type ("overloaded_error", ...) and
// message.
type MessagesError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// MessagesEvent is one event of a stream
// (https://docs.anthropic.com/en/docs/build-with-claude/streaming), its fields by type.
type MessagesEvent struct {
	Type         string            `json:"type"`
	Message      *MessagesResponse `json:"message"`       // message_start
	Index        int               `json:"index"`         // content_block_*
	ContentBlock *MessagesOutBlock `json:"content_block"` // content_block_start
	Delta        *MessagesDelta    `json:"delta"`         // content_block_delta, message_delta
	Usage        *MessagesUsage    `json:"usage"`         // message_delta
	Error        *MessagesError    `json:"error"`         // error
}

// MessagesDelta is a content block's delta ("text_delta", "input_json_delta", ...) or, in
// message_delta, the stop reason.
type MessagesDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}
