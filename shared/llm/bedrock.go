package llm

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/plumehq/plume/shared/llm/wire"
)

// converse calls Amazon Bedrock's Converse API: POST {endpoint}/model/{modelId}/converse
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html), signed
// with SigV4 for the service "bedrock" by the AWS SDK's signer. A structured call forces a tool
// (toolConfig.toolChoice.tool) whose inputSchema is the Schema: the answer is the toolUse
// block's input.
type converse struct {
	endpoint Endpoint
	creds    aws.CredentialsProvider
	now      func() time.Time
}

func (c *converse) encode(_ string, req Request, schemaName string) ([]byte, error) {
	var body wire.ConverseRequest
	if req.System != "" {
		body.System = []wire.ConverseBlock{{Text: req.System}}
	}
	if req.MaxTokens > 0 || req.Temperature != nil {
		body.InferenceConfig = &wire.ConverseInference{Temperature: req.Temperature}
		if req.MaxTokens > 0 {
			body.InferenceConfig.MaxTokens = &req.MaxTokens
		}
	}
	for i, m := range req.Messages {
		msg := wire.ConverseMessage{Role: m.Role}
		for j, img := range m.Images {
			format, ok := strings.CutPrefix(img.MediaType, "image/")
			if len(img.Data) == 0 || !ok {
				return nil, fmt.Errorf("%w: message %d: image %d: Bedrock takes image bytes of type image/png, jpeg, gif or webp", ErrInvalidRequest, i, j)
			}
			ci := &wire.ConverseImage{Format: format}
			ci.Source.Bytes = img.Data
			msg.Content = append(msg.Content, wire.ConverseBlock{Image: ci})
		}
		// Converse rejects empty text blocks; an empty turn keeps one space.
		if m.Text != "" || len(msg.Content) == 0 {
			msg.Content = append(msg.Content, wire.ConverseBlock{Text: cmp.Or(m.Text, " ")})
		}
		body.Messages = append(body.Messages, msg)
	}
	if s := req.Schema; s != nil {
		var t wire.ConverseTool
		t.ToolSpec.Name, t.ToolSpec.Description, t.ToolSpec.InputSchema.JSON = schemaName, s.Description, s.JSON
		body.ToolConfig = &wire.ConverseToolConfig{Tools: []wire.ConverseTool{t},
			ToolChoice: &wire.ConverseToolChoice{Tool: &wire.ConverseToolNamed{Name: schemaName}}}
	}
	return json.Marshal(body)
}

func (c *converse) newRequest(ctx context.Context, model string, body []byte) (*http.Request, error) {
	return c.post(ctx, model, "converse", "application/json", body)
}

// newStreamRequest is newRequest for ConverseStream: POST
// {endpoint}/model/{modelId}/converse-stream, answered as an AWS event stream
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html).
func (c *converse) newStreamRequest(ctx context.Context, model string, body []byte) (*http.Request, error) {
	return c.post(ctx, model, "converse-stream", "application/vnd.amazon.eventstream", body)
}

// post returns the signed request of the operation op ("converse", "converse-stream") on model.
func (c *converse) post(ctx context.Context, model, op, accept string, body []byte) (*http.Request, error) {
	// The model id (an ARN, or "us.anthropic.claude-...:0") is one path segment; the signer
	// escapes the escaped path once more, as SigV4 wants for every service but S3.
	u, err := url.Parse(c.endpoint.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("%w: bedrock endpoint: %v", ErrNotConfigured, err)
	}
	u.RawPath = u.EscapedPath() + "/model/" + escapeSegment(model) + "/" + op
	u.Path += "/model/" + model + "/" + op
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: bedrock endpoint: %v", ErrNotConfigured, err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", accept)
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: bedrock: AWS credentials: %v", ErrNotConfigured, err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, r, hex.EncodeToString(sum[:]), "bedrock", c.endpoint.Region, c.now()); err != nil {
		return nil, fmt.Errorf("bedrock: sign request: %w", err)
	}
	return r, nil
}

// escapeSegment percent-encodes everything but RFC 3986's unreserved characters, as the AWS
// SDK escapes path labels.
func escapeSegment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func (c *converse) decode(data []byte, _ bool) (answer, error) {
	var res wire.ConverseResponse
	if err := json.Unmarshal(data, &res); err != nil {
		return answer{}, err
	}
	u := res.Usage
	a := answer{stopReason: res.StopReason, usage: Usage{
		// inputTokens excludes the tokens read from and written to the cache.
		InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens,
		OutputTokens:      u.OutputTokens,
		CachedInputTokens: u.CacheReadInputTokens,
		CacheWriteTokens:  u.CacheWriteInputTokens,
	}}
	var text strings.Builder
	for _, b := range res.Output.Message.Content {
		if b.Text != nil {
			text.WriteString(*b.Text)
		}
		if b.ToolUse != nil && a.json == nil {
			a.json = b.ToolUse.Input
		}
	}
	a.text = text.String()
	switch res.StopReason {
	case "max_tokens", "model_context_window_exceeded":
		return a, &Error{Provider: ProviderBedrock, Code: CodeTruncated,
			Message: fmt.Sprintf("the answer hit the token limit after %d tokens", u.OutputTokens)}
	case "content_filtered", "guardrail_intervened":
		return a, &Error{Provider: ProviderBedrock, Code: CodeRefused, Message: "stopped: " + res.StopReason}
	}
	return a, nil
}
