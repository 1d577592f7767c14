package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/plumehq/plume/shared/llm/wire"
)

// chatCompletions calls an OpenAI-compatible Chat Completions API:
// POST {base}/chat/completions (https://platform.openai.com/docs/api-reference/chat/create).
// The key is a Bearer token, except on Azure OpenAI, which takes it in the api-key header and
// the API version in the api-version query parameter
// (https://learn.microsoft.com/azure/ai-services/openai/reference).
type chatCompletions struct {
	provider string
	endpoint Endpoint
}

func (c *chatCompletions) encode(model string, req Request, schemaName string) ([]byte, error) {
	body := wire.ChatRequest{Model: model, Temperature: req.Temperature}
	if isReasoningModel(model) {
		body.MaxCompletionTokens, body.Temperature = req.MaxTokens, nil
	} else {
		body.MaxTokens = req.MaxTokens
	}
	if req.System != "" {
		body.Messages = append(body.Messages, wire.ChatMessage{Role: "system", Content: jsonOf(req.System)})
	}
	for _, m := range req.Messages {
		if len(m.Images) == 0 {
			body.Messages = append(body.Messages, wire.ChatMessage{Role: m.Role, Content: jsonOf(m.Text)})
			continue
		}
		parts := make([]wire.ChatPart, 0, len(m.Images)+1)
		for _, img := range m.Images {
			parts = append(parts, wire.ChatPart{Type: "image_url", ImageURL: wire.ChatImageURL{URL: imageURL(img)}})
		}
		if m.Text != "" {
			parts = append(parts, wire.ChatPart{Type: "text", Text: m.Text})
		}
		body.Messages = append(body.Messages, wire.ChatMessage{Role: m.Role, Content: jsonOf(parts)})
	}
	if s := req.Schema; s != nil {
		body.ResponseFormat = &wire.ChatResponseFormat{Type: "json_schema", JSONSchema: &wire.ChatJSONSchema{
			Name: schemaName, Description: s.Description, Schema: s.JSON, Strict: true}}
	}
	return json.Marshal(body)
}

// jsonOf is v's JSON: a message's content, a string or parts, which cannot fail to encode.
func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// imageURL is an image's URL, or its data: URL.
func imageURL(img Image) string {
	if len(img.Data) == 0 {
		return img.URL
	}
	return "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

func (c *chatCompletions) newRequest(ctx context.Context, _ string, body []byte) (*http.Request, error) {
	u := c.endpoint.BaseURL + "/chat/completions"
	if c.endpoint.APIVersion != "" {
		u += "?api-version=" + url.QueryEscape(c.endpoint.APIVersion)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %s base URL: %v", ErrNotConfigured, c.provider, err)
	}
	r.Header.Set("Content-Type", "application/json")
	switch {
	case c.endpoint.APIKey == "":
	case c.provider == ProviderAzure:
		r.Header.Set("api-key", c.endpoint.APIKey)
	default:
		r.Header.Set("Authorization", "Bearer "+c.endpoint.APIKey)
	}
	return r, nil
}

func (c *chatCompletions) decode(data []byte, structured bool) (answer, error) {
	var res wire.ChatCompletion
	if err := json.Unmarshal(data, &res); err != nil {
		return answer{}, err
	}
	a := answer{model: res.Model}
	if u := res.Usage; u != nil {
		a.usage = Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedInputTokens: u.PromptTokensDetails.CachedTokens}
	}
	if len(res.Choices) == 0 {
		return a, fmt.Errorf("no choices")
	}
	choice := res.Choices[0]
	a.stopReason = choice.FinishReason
	if r := choice.Message.Refusal; r != nil && *r != "" {
		return a, &Error{Provider: c.provider, Code: CodeRefused, Message: *r}
	}
	if choice.Message.Content != nil {
		a.text = string(*choice.Message.Content)
	}
	switch choice.FinishReason {
	case "length":
		return a, &Error{Provider: c.provider, Code: CodeTruncated,
			Message: fmt.Sprintf("the answer hit the token limit after %d tokens", a.usage.OutputTokens)}
	case "content_filter":
		return a, &Error{Provider: c.provider, Code: CodeRefused, Message: "the provider's content filter stopped the answer"}
	}
	if choice.Message.Content == nil {
		return a, fmt.Errorf("the answer has no content")
	}
	return a, nil
}
