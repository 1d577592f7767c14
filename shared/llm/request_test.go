package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm"
)

var verdictSchema = &llm.Schema{
	Name:        "verdict",
	Description: "The judge's verdict.",
	JSON: json.RawMessage(`{"type":"object","properties":{` +
		`"score":{"type":"integer","minimum":1,"maximum":5},` +
		`"label":{"type":"string","enum":["good","bad"]},` +
		`"reason":{"type":"string"}},` +
		`"required":["score","label","reason"],"additionalProperties":false}`),
}

func ptr[T any](v T) *T { return &v }

// pixel is a 1x1 PNG's first bytes; its base64 is "iVBORw0KGgo=".
var pixel = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}

// TestRequestBodies checks that each transport sends the provider's documented wire shape.
func TestRequestBodies(t *testing.T) {
	tests := []struct {
		name       string
		req        llm.Request
		reply      string
		wantPath   string
		wantQuery  string
		wantHeader map[string]string
		wantBody   string
	}{
		{
			name: "openai text with system and temperature",
			req: llm.Request{Model: "gpt-4o-mini", System: "Be brief.", Temperature: ptr(0.2), MaxTokens: 100,
				Messages: []llm.Message{{Role: "user", Text: "Capital of France?"}}},
			reply:      "openai_text.json",
			wantPath:   "/chat/completions",
			wantHeader: map[string]string{"Authorization": "Bearer test-key", "Content-Type": "application/json"},
			wantBody: `{"model":"gpt-4o-mini","temperature":0.2,"max_tokens":100,"messages":[
				{"role":"system","content":"Be brief."},
				{"role":"user","content":"Capital of France?"}]}`,
		},
		{
			name: "openai schema and image",
			req: llm.Request{Model: "openai/gpt-4o-mini", Schema: verdictSchema, Messages: []llm.Message{
				{Role: "user", Text: "Judge this screenshot.", Images: []llm.Image{{MediaType: "image/png", Data: pixel}}}}},
			reply:    "openai_json.json",
			wantPath: "/chat/completions",
			wantBody: `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[
					{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
					{"type":"text","text":"Judge this screenshot."}]}],
				"response_format":{"type":"json_schema","json_schema":{"name":"verdict",
					"description":"The judge's verdict.","schema":` + string(verdictSchema.JSON) + `,"strict":true}}}`,
		},
		{
			name: "openai reasoning model takes max_completion_tokens and no temperature",
			req: llm.Request{Model: "o3-mini", Temperature: ptr(0.0), MaxTokens: 2000,
				Messages: []llm.Message{{Role: "user", Text: "hi"}}},
			reply:    "openai_text.json",
			wantPath: "/chat/completions",
			wantBody: `{"model":"o3-mini","max_completion_tokens":2000,"messages":[{"role":"user","content":"hi"}]}`,
		},
		{
			name: "azure takes api-key and api-version",
			req: llm.Request{Model: "azure/my-deployment",
				Messages: []llm.Message{{Role: "user", Text: "hi"}, {Role: "assistant", Text: "hello"}, {Role: "user", Text: "bye"}}},
			reply:      "openai_text.json",
			wantPath:   "/chat/completions",
			wantQuery:  "api-version=2024-10-21",
			wantHeader: map[string]string{"api-key": "test-key", "Authorization": ""},
			wantBody: `{"model":"my-deployment","messages":[{"role":"user","content":"hi"},
				{"role":"assistant","content":"hello"},{"role":"user","content":"bye"}]}`,
		},
		{
			name:       "ollama without a key",
			req:        llm.Request{Model: "ollama/llama3.2", Messages: []llm.Message{{Role: "user", Text: "hi"}}},
			reply:      "openai_text.json",
			wantPath:   "/chat/completions",
			wantHeader: map[string]string{"Authorization": ""},
			wantBody:   `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}]}`,
		},
		{
			name: "anthropic text with system",
			req: llm.Request{Model: "claude-3-5-haiku-20241022", System: "Be brief.", Temperature: ptr(0.0),
				Messages: []llm.Message{{Role: "user", Text: "Capital of France?"}}},
			reply:    "anthropic_text.json",
			wantPath: "/v1/messages",
			wantHeader: map[string]string{"x-api-key": "test-key", "anthropic-version": "2023-06-01",
				"Content-Type": "application/json", "Authorization": ""},
			// System and content as text blocks, the one form the gateway's relay sends too.
			wantBody: `{"model":"claude-3-5-haiku-20241022","system":[{"type":"text","text":"Be brief."}],"max_tokens":4096,"temperature":0,
				"messages":[{"role":"user","content":[{"type":"text","text":"Capital of France?"}]}]}`,
		},
		{
			name: "anthropic schema and image",
			req: llm.Request{Model: "anthropic/claude-3-5-haiku-latest", MaxTokens: 500, Schema: verdictSchema,
				Messages: []llm.Message{{Role: "user", Text: "Judge this screenshot.", Images: []llm.Image{
					{MediaType: "image/png", Data: pixel}, {URL: "https://example.com/a.jpg"}}}}},
			reply:    "anthropic_tool_use.json",
			wantPath: "/v1/messages",
			wantBody: `{"model":"claude-3-5-haiku-latest","max_tokens":500,"messages":[{"role":"user","content":[
					{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
					{"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}},
					{"type":"text","text":"Judge this screenshot."}]}],
				"tools":[{"name":"verdict","description":"The judge's verdict.","input_schema":` + string(verdictSchema.JSON) + `}],
				"tool_choice":{"type":"tool","name":"verdict"}}`,
		},
		{
			name: "bedrock converse with schema, system and image",
			req: llm.Request{Model: "us.anthropic.claude-3-5-haiku-20241022-v1:0", System: "Be fair.", MaxTokens: 300,
				Temperature: ptr(0.5), Schema: verdictSchema,
				Messages: []llm.Message{{Role: "user", Text: "Judge.", Images: []llm.Image{{MediaType: "image/png", Data: pixel}}}}},
			reply:    "bedrock_tool_use.json",
			wantPath: "/model/us.anthropic.claude-3-5-haiku-20241022-v1:0/converse",
			wantBody: `{"system":[{"text":"Be fair."}],"inferenceConfig":{"maxTokens":300,"temperature":0.5},
				"messages":[{"role":"user","content":[{"image":{"format":"png","source":{"bytes":"iVBORw0KGgo="}}},{"text":"Judge."}]}],
				"toolConfig":{"tools":[{"toolSpec":{"name":"verdict","description":"The judge's verdict.",
					"inputSchema":{"json":` + string(verdictSchema.JSON) + `}}}],"toolChoice":{"tool":{"name":"verdict"}}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, reply{file: tt.reply})
			_, err := p.client().Complete(context.Background(), tt.req)
			require.NoError(t, err)
			got := p.requests()
			require.Len(t, got, 1)
			assert.Equal(t, "POST", got[0].Method)
			assert.Equal(t, tt.wantPath, got[0].Path)
			assert.Equal(t, tt.wantQuery, got[0].Query)
			for k, v := range tt.wantHeader {
				assert.Equal(t, v, got[0].Header.Get(k), k)
			}
			assert.JSONEq(t, tt.wantBody, string(got[0].Body))
		})
	}
}

// TestBedrockSigned checks that Converse requests carry a SigV4 signature for "bedrock" and
// the model id escaped in the path.
func TestBedrockSigned(t *testing.T) {
	p := newProvider(t, reply{file: "bedrock_text.json"})
	resp, err := p.client().Complete(context.Background(), llm.Request{Model: "bedrock/anthropic.claude-3-haiku-20240307-v1:0",
		Messages: []llm.Message{{Role: "user", Text: "Capital of France?"}}})
	require.NoError(t, err)
	assert.Equal(t, "Paris.", resp.Text)

	got := p.requests()[0]
	assert.Equal(t, "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse", got.RawPath)
	auth := got.Header.Get("Authorization")
	assert.True(t, strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261121/us-east-1/bedrock/aws4_request"), auth)
	assert.Equal(t, "20261121T120000Z", got.Header.Get("X-Amz-Date"))
	assert.Contains(t, auth, "SignedHeaders=")
}

func TestInvalidRequests(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
		want error
	}{
		{"no messages", llm.Request{Model: "gpt-4o"}, llm.ErrInvalidRequest},
		{"bad role", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: "system", Text: "x"}}}, llm.ErrInvalidRequest},
		{"assistant image", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: "assistant",
			Images: []llm.Image{{MediaType: "image/png", Data: pixel}}}}}, llm.ErrInvalidRequest},
		{"image without data", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: "user",
			Images: []llm.Image{{MediaType: "image/png"}}}}}, llm.ErrInvalidRequest},
		{"bedrock image URL", llm.Request{Model: "amazon.nova-lite-v1:0", Messages: []llm.Message{{Role: "user",
			Images: []llm.Image{{URL: "https://example.com/a.png"}}}}}, llm.ErrInvalidRequest},
		{"schema not JSON", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: "user", Text: "x"}},
			Schema: &llm.Schema{JSON: json.RawMessage(`{`)}}, llm.ErrInvalidRequest},
		{"schema not an object", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: "user", Text: "x"}},
			Schema: &llm.Schema{JSON: json.RawMessage(`{"type":"string"}`)}}, llm.ErrInvalidRequest},
		{"schema bad name", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: "user", Text: "x"}},
			Schema: &llm.Schema{Name: "a verdict", JSON: json.RawMessage(`{"type":"object"}`)}}, llm.ErrInvalidRequest},
		{"unknown model", llm.Request{Model: "my-finetune", Messages: []llm.Message{{Role: "user", Text: "x"}}}, llm.ErrUnknownModel},
		{"no key", llm.Request{Model: "together/meta-llama/Llama-3.3-70B-Instruct-Turbo",
			Messages: []llm.Message{{Role: "user", Text: "x"}}}, llm.ErrNotConfigured},
		{"azure without base URL", llm.Request{Model: "azure/x", Messages: []llm.Message{{Role: "user", Text: "x"}}}, llm.ErrNotConfigured},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t)
			c := p.client()
			if tt.name == "azure without base URL" {
				c = llm.New(llm.Config{Providers: map[string]llm.Endpoint{"azure": {APIKey: "k"}}}, llm.Options{})
			}
			resp, err := c.Complete(context.Background(), tt.req)
			assert.ErrorIs(t, err, tt.want)
			assert.Zero(t, resp.Attempts)
			assert.Empty(t, p.requests())
		})
	}
}
