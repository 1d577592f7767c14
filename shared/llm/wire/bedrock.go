package wire

import "encoding/json"

// Amazon Bedrock's Converse
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html) and
// ConverseStream, as the model client and the gateway send it and read its answers. The model
// is in the URL, not the body.

// ConverseRequest is a Converse request.
type ConverseRequest struct {
	Messages        []ConverseMessage   `json:"messages"`
	System          []ConverseBlock     `json:"system,omitempty"`
	InferenceConfig *ConverseInference  `json:"inferenceConfig,omitempty"`
	ToolConfig      *ConverseToolConfig `json:"toolConfig,omitempty"`
}

// ConverseMessage is a turn: Role is "user" or "assistant".
type ConverseMessage struct {
	Role    string          `json:"role"`
	Content []ConverseBlock `json:"content"`
}

// ConverseBlock is a content block, a union: exactly one member is set. Text is never empty
// (Converse refuses blank text blocks).
type ConverseBlock struct {
	Text       string              `json:"text,omitempty"`
	Image      *ConverseImage      `json:"image,omitempty"`
	ToolUse    *ConverseToolUse    `json:"toolUse,omitempty"`
	ToolResult *ConverseToolResult `json:"toolResult,omitempty"`
}

// ConverseImage is an image block: png, jpeg, gif or webp, its bytes base64 in JSON.
type ConverseImage struct {
	Format string `json:"format"`
	Source struct {
		Bytes []byte `json:"bytes"`
	} `json:"source"`
}

// ConverseToolUse is a tool call, in a request's assistant turn or an answer.
type ConverseToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

// ConverseToolResult is a tool's result, in a user turn.
type ConverseToolResult struct {
	ToolUseID string          `json:"toolUseId"`
	Content   []ConverseBlock `json:"content"`
}

// ConverseInference is inferenceConfig.
type ConverseInference struct {
	MaxTokens     *int     `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

// ConverseToolConfig is toolConfig: the tools, and which the model must use.
type ConverseToolConfig struct {
	Tools      []ConverseTool      `json:"tools"`
	ToolChoice *ConverseToolChoice `json:"toolChoice,omitempty"`
}

// ConverseTool is a tool's spec and its JSON Schema.
type ConverseTool struct {
	ToolSpec struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		InputSchema struct {
			JSON json.RawMessage `json:"json"`
		} `json:"inputSchema"`
	} `json:"toolSpec"`
}

// ConverseToolChoice is a union: {"auto": {}}, {"any": {}} or {"tool": {"name": ...}}.
type ConverseToolChoice struct {
	Auto *struct{}          `json:"auto,omitempty"`
	Any  *struct{}          `json:"any,omitempty"`
	Tool *ConverseToolNamed `json:"tool,omitempty"`
}

// ConverseToolNamed is the tool a ConverseToolChoice names.
type ConverseToolNamed struct {
	Name string `json:"name"`
}

// ConverseResponse is an answer.
type ConverseResponse struct {
	Output struct {
		Message struct {
			Content []ConverseOutBlock `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string        `json:"stopReason"`
	Usage      ConverseUsage `json:"usage"`
}

// ConverseOutBlock is an answer's content block; reasoning and other blocks are left unread.
type ConverseOutBlock struct {
	Text    *string          `json:"text"`
	ToolUse *ConverseToolUse `json:"toolUse"`
}

// ConverseUsage is an answer's usage. inputTokens excludes the tokens read from and written to
// the prompt cache.
type ConverseUsage struct {
	InputTokens           int64 `json:"inputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	CacheReadInputTokens  int64 `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"`
}

// ConverseErrorBody is an error's body
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html): {"message": ...}
// ("Message" from some AWS front ends, which encoding/json matches too), the type in the
// x-amzn-ErrorType header or in __type.
type ConverseErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"__type"`
}

// ConverseEvent is the payload of one ConverseStream event
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html),
// its fields by event type. Events also carry a "p" of padding letters, left unread.
type ConverseEvent struct {
	ContentBlockIndex int                 `json:"contentBlockIndex"` // contentBlock*
	Start             *ConverseBlockStart `json:"start"`             // contentBlockStart
	Delta             *ConverseBlockDelta `json:"delta"`             // contentBlockDelta
	StopReason        string              `json:"stopReason"`        // messageStop
	Usage             *ConverseUsage      `json:"usage"`             // metadata
	// Message and OriginalMessage are an exception's.
	Message         string `json:"message"`
	OriginalMessage string `json:"originalMessage"`
}

// ConverseBlockStart starts a content block: a tool call's id and name.
type ConverseBlockStart struct {
	ToolUse *ConverseToolUse `json:"toolUse"`
}

// ConverseBlockDelta is what an event adds to a content block: text, or a tool call's input
// JSON text.
type ConverseBlockDelta struct {
	Text    *string `json:"text"`
	ToolUse *struct {
		Input string `json:"input"`
	} `json:"toolUse"`
}
