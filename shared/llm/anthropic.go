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

	"github.com/plumehq/plume/shared/llm/wire"
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

func (m *messages) encode(model string, req Request, schemaName string) ([]byte, error) {
	body := wire.MessagesRequest{Model: model, Temperature: req.Temperature, MaxTokens: cmp.Or(req.MaxTokens, DefaultMaxTokens)}
	if req.System != "" {
		body.System = []wire.MessagesBlock{{Type: "text", Text: req.System}}
	}
	for _, msg := range req.Messages {
		blocks := make([]wire.MessagesBlock, 0, len(msg.Images)+1)
		for _, img := range msg.Images {
			src := &wire.MessagesSource{Type: "url", URL: img.URL}
			if len(img.Data) > 0 {
				src = &wire.MessagesSource{Type: "base64", MediaType: img.MediaType, Data: base64.StdEncoding.EncodeToString(img.Data)}
			}
			blocks = append(blocks, wire.MessagesBlock{Type: "image", Source: src})
		}
		if msg.Text != "" {
			blocks = append(blocks, wire.MessagesBlock{Type: "text", Text: msg.Text})
		}
		body.Messages = append(body.Messages, wire.MessagesMessage{Role: msg.Role, Content: blocks})
	}
	if s := req.Schema; s != nil {
		body.Tools = []wire.MessagesTool{{Name: schemaName, Description: s.Description, InputSchema: s.JSON}}
		body.ToolChoice = &wire.MessagesToolChoice{Type: "tool", Name: schemaName}
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
	var res wire.MessagesResponse
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
