package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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

type ccRequest struct {
	Model               string      `json:"model"`
	Messages            []ccMessage `json:"messages"`
	Temperature         *float64    `json:"temperature,omitempty"`
	MaxTokens           int         `json:"max_tokens,omitempty"`
	MaxCompletionTokens int         `json:"max_completion_tokens,omitempty"`
	ResponseFormat      *ccFormat   `json:"response_format,omitempty"`
}

// ccMessage.Content is a string, or a list of ccParts when the message has images.
type ccMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type ccPart struct {
	Type     string      `json:"type"` // "text" or "image_url"
	Text     string      `json:"text,omitempty"`
	ImageURL *ccImageURL `json:"image_url,omitempty"`
}

type ccImageURL struct {
	URL string `json:"url"`
}

type ccFormat struct {
	Type       string        `json:"type"` // "json_schema"
	JSONSchema *ccJSONSchema `json:"json_schema"`
}

type ccJSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict"`
}

type ccResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

func (c *chatCompletions) encode(model string, req Request, schemaName string) ([]byte, error) {
	body := ccRequest{Model: model, Temperature: req.Temperature}
	if isReasoningModel(model) {
		body.MaxCompletionTokens, body.Temperature = req.MaxTokens, nil
	} else {
		body.MaxTokens = req.MaxTokens
	}
	if req.System != "" {
		body.Messages = append(body.Messages, ccMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		if len(m.Images) == 0 {
			body.Messages = append(body.Messages, ccMessage{Role: m.Role, Content: m.Text})
			continue
		}
		parts := make([]ccPart, 0, len(m.Images)+1)
		for _, img := range m.Images {
			parts = append(parts, ccPart{Type: "image_url", ImageURL: &ccImageURL{URL: imageURL(img)}})
		}
		if m.Text != "" {
			parts = append(parts, ccPart{Type: "text", Text: m.Text})
		}
		body.Messages = append(body.Messages, ccMessage{Role: m.Role, Content: parts})
	}
	if s := req.Schema; s != nil {
		body.ResponseFormat = &ccFormat{Type: "json_schema", JSONSchema: &ccJSONSchema{
			Name: schemaName, Description: s.Description, Schema: s.JSON, Strict: true}}
	}
	return json.Marshal(body)
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
	var res ccResponse
	if err := json.Unmarshal(data, &res); err != nil {
		return answer{}, err
	}
	a := answer{model: res.Model, usage: Usage{
		InputTokens:       res.Usage.PromptTokens,
		OutputTokens:      res.Usage.CompletionTokens,
		CachedInputTokens: res.Usage.PromptTokensDetails.CachedTokens,
	}}
	if len(res.Choices) == 0 {
		return a, fmt.Errorf("no choices")
	}
	choice := res.Choices[0]
	a.stopReason = choice.FinishReason
	if r := choice.Message.Refusal; r != nil && *r != "" {
		return a, &Error{Provider: c.provider, Code: CodeRefused, Message: *r}
	}
	if choice.Message.Content != nil {
		a.text = *choice.Message.Content
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
