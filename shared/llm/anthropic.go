package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropicVersion is the anthropic-version header sent
// (https://docs.anthropic.com/en/api/versioning).
const anthropicVersion = "2023-06-01"

// messages calls Anthropic's Messages API: POST {base}/v1/messages
// (https://docs.anthropic.com/en/api/messages). A structured call forces a tool whose
// input_schema is the Schema (https://docs.anthropic.com/en/docs/build-with-claude/tool-use):
// the answer is the tool_use block's input.
type messages struct {
	endpoint Endpoint
}

type amRequest struct {
	Model       string      `json:"model"`
	System      string      `json:"system,omitempty"`
	Messages    []amMessage `json:"messages"`
	MaxTokens   int         `json:"max_tokens"`
	Temperature *float64    `json:"temperature,omitempty"`
	Tools       []amTool    `json:"tools,omitempty"`
	ToolChoice  *amChoice   `json:"tool_choice,omitempty"`
}

// amMessage.Content is a string, or a list of amBlocks when the message has images.
type amMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type amBlock struct {
	Type   string    `json:"type"` // "text" or "image"
	Text   string    `json:"text,omitempty"`
	Source *amSource `json:"source,omitempty"`
}

type amSource struct {
	Type      string `json:"type"` // "base64" or "url"
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type amTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type amChoice struct {
	Type string `json:"type"` // "tool"
	Name string `json:"name"`
}

type amResponse struct {
	Model   string `json:"model"`
	Content []struct {
		Type  string          `json:"type"` // "text", "tool_use", "thinking", ...
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

func (m *messages) encode(model string, req Request, schemaName string) ([]byte, error) {
	body := amRequest{Model: model, System: req.System, Temperature: req.Temperature,
		MaxTokens: cmp.Or(req.MaxTokens, DefaultMaxTokens)}
	for _, msg := range req.Messages {
		if len(msg.Images) == 0 {
			body.Messages = append(body.Messages, amMessage{Role: msg.Role, Content: msg.Text})
			continue
		}
		blocks := make([]amBlock, 0, len(msg.Images)+1)
		for _, img := range msg.Images {
			src := &amSource{Type: "url", URL: img.URL}
			if len(img.Data) > 0 {
				src = &amSource{Type: "base64", MediaType: img.MediaType, Data: base64.StdEncoding.EncodeToString(img.Data)}
			}
			blocks = append(blocks, amBlock{Type: "image", Source: src})
		}
		if msg.Text != "" {
			blocks = append(blocks, amBlock{Type: "text", Text: msg.Text})
		}
		body.Messages = append(body.Messages, amMessage{Role: msg.Role, Content: blocks})
	}
	if s := req.Schema; s != nil {
		body.Tools = []amTool{{Name: schemaName, Description: s.Description, InputSchema: s.JSON}}
		body.ToolChoice = &amChoice{Type: "tool", Name: schemaName}
	}
	return json.Marshal(body)
}

func (m *messages) newRequest(ctx context.Context, _ string, body []byte) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint.BaseURL+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: anthropic base URL: %v", ErrNotConfigured, err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("x-api-key", m.endpoint.APIKey)
	r.Header.Set("anthropic-version", anthropicVersion)
	return r, nil
}

func (m *messages) decode(data []byte, _ bool) (answer, error) {
	var res amResponse
	if err := json.Unmarshal(data, &res); err != nil {
		return answer{}, err
	}
	u := res.Usage
	a := answer{model: res.Model, stopReason: res.StopReason, usage: Usage{
		// input_tokens counts only the tokens after the last cache breakpoint.
		InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens:      u.OutputTokens,
		CachedInputTokens: u.CacheReadInputTokens,
		CacheWriteTokens:  u.CacheCreationInputTokens,
	}}
	var text strings.Builder
	for _, b := range res.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			if a.json == nil {
				a.json = b.Input
			}
		}
	}
	a.text = text.String()
	switch res.StopReason {
	case "max_tokens", "model_context_window_exceeded":
		return a, &Error{Provider: ProviderAnthropic, Code: CodeTruncated,
			Message: fmt.Sprintf("the answer hit the token limit after %d tokens", u.OutputTokens)}
	case "refusal":
		return a, &Error{Provider: ProviderAnthropic, Code: CodeRefused, Message: cmp.Or(a.text, "the model refused to answer")}
	}
	// A structured answer without a tool_use block is validated as text: it fails, and gets
	// the repair retry.
	return a, nil
}
