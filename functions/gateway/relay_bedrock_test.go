package gateway_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/gateway"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
	"github.com/plumehq/plume/shared/pricing"
)

// bedrockKeyID is the access key id of the deployment's AWS credentials in these tests.
const bedrockKeyID = "AKIDGATEWAYTEST"

// bedrockGateway serves the gateway with Bedrock's endpoint at base, signing with static AWS
// credentials of key id keyID: newGateway's stack, with the AWS credentials its llm.Options
// lack.
func bedrockGateway(t testing.TB, base, keyID string) *gatewayStack {
	t.Helper()
	a := apitest.New(t, apitest.Options{})
	models := llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderBedrock: {BaseURL: base, Region: "us-east-1"}}},
		llm.Options{BaseDelay: time.Millisecond, AWSCredentials: credentials.NewStaticCredentialsProvider(keyID, "test-secret", "")})
	h := gateway.NewHandler(gateway.Deps{
		Models:   func(context.Context) (*llm.Client, error) { return models, nil },
		Prices:   pricing.Default(),
		Pricer:   a.Env.Pricer(),
		Bindings: a.Env.Prompts(),
		Authn:    a.Env.Authn(),
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &gatewayStack{api: a, url: srv.URL}
}

// chatCompletion is a chat completion, or an error, as an OpenAI client reads it.
type chatCompletion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// content is the first choice's content, "" when it is null.
func (c chatCompletion) content() string {
	if len(c.Choices) == 0 || c.Choices[0].Message.Content == nil {
		return ""
	}
	return *c.Choices[0].Message.Content
}

// sentConverse is the Converse request the fake received, as Bedrock reads it.
type sentConverse struct {
	System   []struct{ Text string } `json:"system"`
	Messages []struct {
		Role    string              `json:"role"`
		Content []sentConverseBlock `json:"content"`
	} `json:"messages"`
	InferenceConfig *struct {
		MaxTokens     *int     `json:"maxTokens"`
		Temperature   *float64 `json:"temperature"`
		TopP          *float64 `json:"topP"`
		StopSequences []string `json:"stopSequences"`
	} `json:"inferenceConfig"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				InputSchema struct {
					JSON json.RawMessage `json:"json"`
				} `json:"inputSchema"`
			} `json:"toolSpec"`
		} `json:"tools"`
		ToolChoice json.RawMessage `json:"toolChoice"`
	} `json:"toolConfig"`
}

// sentConverseBlock is a content block of a sent message.
type sentConverseBlock struct {
	Text  *string `json:"text"`
	Image *struct {
		Format string `json:"format"`
		Source struct {
			Bytes []byte `json:"bytes"`
		} `json:"source"`
	} `json:"image"`
	ToolUse *struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"toolUse"`
	ToolResult *struct {
		ToolUseID string              `json:"toolUseId"`
		Content   []sentConverseBlock `json:"content"`
	} `json:"toolResult"`
}

// textBlock is a text block.
func textBlock(s string) sentConverseBlock { return sentConverseBlock{Text: &s} }

// lastConverse is the fake's last call and the Converse request it received.
func lastConverse(t *testing.T, fake *fakemodeltest.Server) (fakemodel.Call, sentConverse) {
	t.Helper()
	calls := fake.Calls()
	require.NotEmpty(t, calls)
	c := calls[len(calls)-1]
	require.Equal(t, fakemodel.Bedrock, c.API)
	var sent sentConverse
	require.NoError(t, json.Unmarshal(c.Body, &sent), "%s", c.Body)
	return c, sent
}

// decodeCompletion reads an answer in one piece: a chat completion or an error.
func decodeCompletion(t *testing.T, res *http.Response) chatCompletion {
	t.Helper()
	var c chatCompletion
	require.NoError(t, json.NewDecoder(res.Body).Decode(&c))
	return c
}

const (
	pngBase64         = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	verdictJSONSchema = `{"type":"object","properties":{"pass":{"type":"boolean"},"score":{"type":"integer"}},"required":["pass","score"]}`
	weatherJSONSchema = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
)

// weatherTools are two function tools of an OpenAI request.
var weatherTools = []map[string]any{
	{"type": "function", "function": map[string]any{"name": "get_weather", "description": "The weather in a city.", "parameters": json.RawMessage(weatherJSONSchema)}},
	{"type": "function", "function": map[string]any{"name": "lookup"}},
}

// toolHistory is a conversation with two tool calls and their results.
var toolHistory = []map[string]any{
	{"role": "user", "content": "Weather in Paris and Rome?"},
	{"role": "assistant", "content": "Checking.", "tool_calls": []map[string]any{
		{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}},
		{"id": "call_2", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Rome"}`}},
	}},
	{"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
	{"role": "tool", "tool_call_id": "call_2", "content": []map[string]any{{"type": "text", "text": "21°C"}}},
	{"role": "user", "content": "And tomorrow?"},
}

// TestConverseRequests: OpenAI requests reach the fake as valid Converse requests (the fake
// checks them as Bedrock does), and its answers come back in OpenAI's shape.
func TestConverseRequests(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(bedrockKeyID), fakemodel.WithRules(
		fakemodel.Rule{Match: fakemodel.Contains("refuse"), Reply: fakemodel.Reply{Refusal: "No."}},
		fakemodel.Rule{Match: fakemodel.SchemaIs("verdict"), Reply: fakemodel.Reply{JSON: json.RawMessage(`{"pass":true,"score":7}`)}},
		fakemodel.Rule{Match: fakemodel.Contains("cache"), Reply: fakemodel.Reply{Text: "cached", CachedTokens: 3}},
	))
	g := bedrockGateway(t, fake.URL, bedrockKeyID)
	const model = "bedrock/amazon.nova-lite-v1:0"
	user := func(s string) []map[string]any { return []map[string]any{{"role": "user", "content": s}} }

	tests := []struct {
		name  string
		body  map[string]any
		check func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse)
	}{
		{"plain text", map[string]any{"model": model, "messages": user("Hello")}, func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
			assert.Equal(t, "chat.completion", a.Object)
			assert.Regexp(t, `^chatcmpl-fakemodel-`, a.ID, "the provider's request id")
			assert.Equal(t, "amazon.nova-lite-v1:0", a.Model)
			require.Len(t, a.Choices, 1)
			assert.Equal(t, "assistant", a.Choices[0].Message.Role)
			assert.Contains(t, a.content(), "Simulated answer from amazon.nova-lite-v1:0")
			assert.Equal(t, "stop", a.Choices[0].FinishReason)
			assert.Equal(t, fakemodel.Tokens("Hello"), a.Usage.PromptTokens)
			assert.Equal(t, fakemodel.Tokens(a.content()), a.Usage.CompletionTokens)
			assert.Equal(t, a.Usage.PromptTokens+a.Usage.CompletionTokens, a.Usage.TotalTokens)

			assert.Equal(t, "/model/amazon.nova-lite-v1:0/converse", c.Path)
			assert.Equal(t, "amazon.nova-lite-v1:0", c.Model)
			assert.False(t, c.Stream)
			assert.Contains(t, c.Header.Get("Authorization"), "Credential="+bedrockKeyID+"/", "signed with the deployment's credentials")
			require.Len(t, sent.Messages, 1)
			assert.Equal(t, []sentConverseBlock{textBlock("Hello")}, sent.Messages[0].Content)
			assert.Nil(t, sent.System)
			assert.Nil(t, sent.InferenceConfig, "no parameters: the model's defaults")
			assert.Nil(t, sent.ToolConfig)
		}},
		{"system and turns", map[string]any{"model": "us.anthropic.claude-3-5-haiku-20241022-v1:0", "messages": []map[string]any{
			{"role": "system", "content": "Be brief."},
			{"role": "user", "content": "a"},
			{"role": "developer", "content": []map[string]any{{"type": "text", "text": "Answer in English."}}},
			{"role": "assistant", "content": "b"},
			{"role": "assistant", "content": ""},
			{"role": "user", "content": "c"},
			{"role": "user", "content": []map[string]any{{"type": "text", "text": "d"}}},
		}}, func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
			assert.Equal(t, "us.anthropic.claude-3-5-haiku-20241022-v1:0", c.Model, "a bare Bedrock id")
			assert.Equal(t, "Be brief.\nAnswer in English.", c.System)
			require.Len(t, sent.Messages, 3, "consecutive turns of one role merged, empty ones dropped")
			assert.Equal(t, "user", sent.Messages[0].Role)
			assert.Equal(t, "assistant", sent.Messages[1].Role)
			assert.Equal(t, []sentConverseBlock{textBlock("c"), textBlock("d")}, sent.Messages[2].Content)
			want := fakemodel.Tokens("Be brief.\nAnswer in English.") + fakemodel.Tokens("a") + fakemodel.Tokens("b") + fakemodel.Tokens("c\nd")
			assert.Equal(t, want, a.Usage.PromptTokens)
		}},
		{"image", map[string]any{"model": model, "messages": []map[string]any{{"role": "user", "content": []map[string]any{
			{"type": "text", "text": "What is this?"},
			{"type": "image_url", "image_url": map[string]string{"url": "data:image/png;base64," + pngBase64}},
		}}}}, func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
			require.Len(t, sent.Messages[0].Content, 2)
			img := sent.Messages[0].Content[1].Image
			require.NotNil(t, img)
			assert.Equal(t, "png", img.Format)
			want, _ := base64.StdEncoding.DecodeString(pngBase64)
			assert.Equal(t, want, img.Source.Bytes, "the image's bytes")
			assert.Equal(t, 1, c.Messages[0].Images)
			assert.Equal(t, fakemodel.Tokens("What is this?")+85, a.Usage.PromptTokens)
		}},
		{"inference parameters", map[string]any{"model": model, "messages": user("Hello"), "temperature": 0.3, "top_p": 0.8,
			"max_tokens": 50, "max_completion_tokens": 1, "stop": []string{"END", ""}},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				ic := sent.InferenceConfig
				require.NotNil(t, ic)
				assert.Equal(t, 1, *ic.MaxTokens, "max_completion_tokens wins")
				assert.InDelta(t, 0.3, *ic.Temperature, 1e-9)
				assert.InDelta(t, 0.8, *ic.TopP, 1e-9)
				assert.Equal(t, []string{"END"}, ic.StopSequences, "empty stop sequences dropped")
				assert.Equal(t, "length", a.Choices[0].FinishReason, "max_tokens: the answer was cut")
				assert.Equal(t, "Simu", a.content())
			}},
		{"stop as a string", map[string]any{"model": model, "messages": user("Hello"), "stop": "END", "max_tokens": 500},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				require.NotNil(t, sent.InferenceConfig)
				assert.Equal(t, []string{"END"}, sent.InferenceConfig.StopSequences)
				assert.Equal(t, 500, c.MaxTokens)
				assert.Equal(t, "stop", a.Choices[0].FinishReason)
			}},
		{"tool required", map[string]any{"model": model, "messages": user("Weather in Paris?"), "tools": weatherTools, "tool_choice": "required"},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				require.NotNil(t, sent.ToolConfig)
				assert.JSONEq(t, `{"any":{}}`, string(sent.ToolConfig.ToolChoice))
				require.Len(t, sent.ToolConfig.Tools, 2)
				spec := sent.ToolConfig.Tools[0].ToolSpec
				assert.Equal(t, "get_weather", spec.Name)
				assert.Equal(t, "The weather in a city.", spec.Description)
				assert.JSONEq(t, weatherJSONSchema, string(spec.InputSchema.JSON))
				assert.JSONEq(t, `{"type":"object","properties":{}}`, string(sent.ToolConfig.Tools[1].ToolSpec.InputSchema.JSON),
					"a tool without parameters takes an empty object")

				require.Len(t, a.Choices[0].Message.ToolCalls, 1)
				tc := a.Choices[0].Message.ToolCalls[0]
				assert.Regexp(t, `^tooluse_`, tc.ID)
				assert.Equal(t, "function", tc.Type)
				assert.Equal(t, "get_weather", tc.Function.Name)
				assert.True(t, json.Valid([]byte(tc.Function.Arguments)), tc.Function.Arguments)
				assert.Nil(t, a.Choices[0].Message.Content)
				assert.Equal(t, "tool_calls", a.Choices[0].FinishReason)
			}},
		{"tool named", map[string]any{"model": model, "messages": user("Look it up."), "tools": weatherTools,
			"tool_choice": map[string]any{"type": "function", "function": map[string]string{"name": "lookup"}}},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				assert.JSONEq(t, `{"tool":{"name":"lookup"}}`, string(sent.ToolConfig.ToolChoice))
				require.Len(t, a.Choices[0].Message.ToolCalls, 1)
				assert.Equal(t, "lookup", a.Choices[0].Message.ToolCalls[0].Function.Name)
			}},
		{"tool auto", map[string]any{"model": model, "messages": user("Hi."), "tools": weatherTools, "tool_choice": "auto"},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				assert.JSONEq(t, `{"auto":{}}`, string(sent.ToolConfig.ToolChoice))
				assert.Equal(t, []string{"get_weather", "lookup"}, c.Tools)
				assert.Empty(t, a.Choices[0].Message.ToolCalls)
				assert.Equal(t, "stop", a.Choices[0].FinishReason)
			}},
		{"tool none", map[string]any{"model": model, "messages": user("Hi."), "tools": weatherTools, "tool_choice": "none"},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				assert.Nil(t, sent.ToolConfig, "Converse has no none: no tools")
			}},
		{"tool results", map[string]any{"model": model, "messages": toolHistory, "tools": weatherTools},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				require.Len(t, sent.Messages, 3, "the tool results and the next question are one user turn")
				calls := sent.Messages[1].Content
				require.Len(t, calls, 3)
				assert.Equal(t, textBlock("Checking."), calls[0])
				require.NotNil(t, calls[1].ToolUse)
				assert.Equal(t, "call_1", calls[1].ToolUse.ToolUseID)
				assert.Equal(t, "get_weather", calls[1].ToolUse.Name)
				assert.JSONEq(t, `{"city":"Paris"}`, string(calls[1].ToolUse.Input))
				results := sent.Messages[2].Content
				require.Len(t, results, 3)
				require.NotNil(t, results[0].ToolResult)
				assert.Equal(t, "call_1", results[0].ToolResult.ToolUseID)
				assert.Equal(t, []sentConverseBlock{textBlock("18°C")}, results[0].ToolResult.Content)
				assert.Equal(t, []sentConverseBlock{textBlock("21°C")}, results[1].ToolResult.Content)
				assert.Equal(t, textBlock("And tomorrow?"), results[2])
				assert.Nil(t, sent.ToolConfig.ToolChoice)
				assert.Equal(t, "18°C\n21°C\nAnd tomorrow?", c.LastUser())
			}},
		{"tool results with tool_choice none", map[string]any{"model": model, "messages": toolHistory, "tools": weatherTools, "tool_choice": "none"},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				require.NotNil(t, sent.ToolConfig, "Converse wants the tools of a conversation holding tool calls")
				assert.Nil(t, sent.ToolConfig.ToolChoice)
			}},
		{"json_schema", map[string]any{"model": model, "messages": user("Judge it."), "response_format": map[string]any{
			"type": "json_schema", "json_schema": map[string]any{"name": "verdict", "schema": json.RawMessage(verdictJSONSchema)}}},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				require.NotNil(t, sent.ToolConfig)
				require.Len(t, sent.ToolConfig.Tools, 1)
				assert.Equal(t, "verdict", sent.ToolConfig.Tools[0].ToolSpec.Name)
				assert.JSONEq(t, verdictJSONSchema, string(sent.ToolConfig.Tools[0].ToolSpec.InputSchema.JSON))
				assert.JSONEq(t, `{"tool":{"name":"verdict"}}`, string(sent.ToolConfig.ToolChoice))
				assert.Equal(t, fakemodel.FormatTool, c.Format)
				assert.JSONEq(t, `{"pass":true,"score":7}`, a.content(), "the forced tool's input is the content")
				assert.Empty(t, a.Choices[0].Message.ToolCalls)
				assert.Equal(t, "stop", a.Choices[0].FinishReason)
			}},
		{"json_schema with tools", map[string]any{"model": model, "messages": user("Judge it."), "tools": weatherTools[:1], "response_format": map[string]any{
			"type": "json_schema", "json_schema": map[string]any{"name": "verdict", "schema": json.RawMessage(verdictJSONSchema)}}},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				assert.Equal(t, []string{"get_weather", "verdict"}, c.Tools)
				assert.JSONEq(t, `{"any":{}}`, string(sent.ToolConfig.ToolChoice), "a tool or the answer")
			}},
		{"json_object", map[string]any{"model": model, "messages": user("Give me a JSON object."), "response_format": map[string]string{"type": "json_object"}},
			func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
				require.NotEmpty(t, sent.System)
				assert.Contains(t, sent.System[len(sent.System)-1].Text, "single JSON object", "an instruction: Converse has no JSON mode")
				assert.Nil(t, sent.ToolConfig)
			}},
		{"refusal", map[string]any{"model": model, "messages": user("Please refuse.")}, func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
			assert.Equal(t, "content_filter", a.Choices[0].FinishReason, "content_filtered")
			assert.Equal(t, "No.", a.content())
		}},
		{"cached prompt", map[string]any{"model": model, "messages": user("Use the cache, please.")}, func(t *testing.T, a chatCompletion, c fakemodel.Call, sent sentConverse) {
			assert.Equal(t, fakemodel.Tokens("Use the cache, please."), a.Usage.PromptTokens, "the cache reads are in the prompt")
			assert.Equal(t, 3, a.Usage.PromptTokensDetails.CachedTokens)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fake.Count()
			res := g.post(t, g.api.A.Key, tt.body)
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			a := decodeCompletion(t, res)
			require.Nil(t, a.Error)
			require.Equal(t, before+1, fake.Count(), "one Converse call")
			c, sent := lastConverse(t, fake)
			require.Equal(t, http.StatusOK, c.Status)
			tt.check(t, a, c, sent)
		})
	}
}

// TestConverseRefusesUntranslatable: what Converse cannot take is refused with 400 before any
// call.
func TestConverseRefusesUntranslatable(t *testing.T) {
	fake := fakemodeltest.Start(t)
	g := bedrockGateway(t, fake.URL, bedrockKeyID)
	image := func(url string) []map[string]any {
		return []map[string]any{{"role": "user", "content": []map[string]any{{"type": "image_url", "image_url": map[string]string{"url": url}}}}}
	}
	hi := []map[string]any{{"role": "user", "content": "hi"}}
	tests := []struct {
		name, wantInMsg string
		body            map[string]any
	}{
		{"n above 1", "n must be 1", map[string]any{"messages": hi, "n": 2}},
		{"image URL", "no image URLs", map[string]any{"messages": image("https://example.com/cat.png")}},
		{"image type", "image/png, image/jpeg", map[string]any{"messages": image("data:image/bmp;base64,Qk0=")}},
		{"image data", "base64", map[string]any{"messages": image("data:image/png;base64,not base64!")}},
		{"audio", `"input_audio" parts`, map[string]any{"messages": []map[string]any{{"role": "user", "content": []map[string]any{{"type": "input_audio"}}}}}},
		{"tool message without id", "tool_call_id", map[string]any{"messages": []map[string]any{{"role": "user", "content": "hi"}, {"role": "tool", "content": "42"}}}},
		{"functions", "functions", map[string]any{"messages": hi, "functions": []map[string]any{{"name": "f"}}}},
		{"no messages", "messages", map[string]any{}},
		{"system messages only", "a user message besides the system ones", map[string]any{"messages": []map[string]any{{"role": "system", "content": "Say hi"}}}},
		{"assistant first", "starts with a user message", map[string]any{"messages": []map[string]any{
			{"role": "system", "content": "s"}, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "hi"}}}},
		{"unknown named tool", "not among the tools", map[string]any{"messages": hi, "tools": weatherTools,
			"tool_choice": map[string]any{"type": "function", "function": map[string]string{"name": "nope"}}}},
		{"bad arguments", "tool_calls[0]", map[string]any{"messages": []map[string]any{{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": []map[string]any{
			{"id": "call_1", "type": "function", "function": map[string]any{"name": "f", "arguments": "[1]"}}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.body["model"] = "bedrock/amazon.nova-lite-v1:0"
			res := g.post(t, g.api.A.Key, tt.body)
			assert.Equal(t, http.StatusBadRequest, res.StatusCode)
			a := decodeCompletion(t, res)
			require.NotNil(t, a.Error)
			assert.Equal(t, "invalid_request_error", a.Error.Type)
			assert.Contains(t, a.Error.Message, tt.wantInMsg)
			assert.Zero(t, fake.Count(), "refused before any call")
		})
	}
}

// bedrockReply is a provider answer a test's own upstream writes.
type bedrockReply struct {
	status int
	header map[string]string
	body   string
}

// bedrockReplies is an upstream answering each Converse call with replies[its first text].
func bedrockReplies(t *testing.T, replies map[string]bedrockReply) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		reply, ok := bedrockReply{}, false
		if len(req.Messages) > 0 && len(req.Messages[0].Content) > 0 {
			reply, ok = replies[req.Messages[0].Content[0].Text]
		}
		if !ok {
			http.Error(w, `{"message":"unexpected request"}`, http.StatusTeapot)
			return
		}
		for k, v := range reply.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(reply.status)
		_, _ = io.WriteString(w, reply.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestConverseErrors: Bedrock's errors in OpenAI's shape, with the status an OpenAI client
// acts on; the deployment's refused credentials are a 502 that names no AWS detail.
func TestConverseErrors(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(bedrockKeyID), fakemodel.WithModels("amazon.nova-lite-v1:0"), fakemodel.WithRules(
		fakemodel.Rule{Match: fakemodel.Contains("busy"), Reply: fakemodel.Reply{Status: 429, RetryAfter: 2 * time.Second, ErrorMessage: "Too many requests."}},
		fakemodel.Rule{Match: fakemodel.Contains("invalid"), Reply: fakemodel.Reply{Status: 400, ErrorMessage: "Malformed input request."}},
		fakemodel.Rule{Match: fakemodel.Contains("denied"), Reply: fakemodel.Reply{Status: 403, ErrorMessage: "User: arn:aws:iam::123456789012:role/plume is not authorized"}},
		fakemodel.Rule{Match: fakemodel.Contains("slow"), Reply: fakemodel.Reply{Status: 408}},
		fakemodel.Rule{Match: fakemodel.Contains("failing"), Reply: fakemodel.Reply{Status: 424}},
		fakemodel.Rule{Match: fakemodel.Contains("broken"), Reply: fakemodel.Reply{Status: 500}},
		fakemodel.Rule{Match: fakemodel.Contains("down"), Reply: fakemodel.Reply{Status: 503}},
	))
	g := bedrockGateway(t, fake.URL, bedrockKeyID)
	wrongKey := bedrockGateway(t, fake.URL, "AKIDREVOKED")
	raw := bedrockGateway(t, bedrockReplies(t, map[string]bedrockReply{
		"not ready": {429, map[string]string{"X-Amzn-Errortype": "ModelNotReadyException:http://internal.amazon.com/coral/com.amazon.bedrock/"},
			`{"message":"Model is not ready for inference."}`},
		"quota":   {400, map[string]string{"X-Amzn-Errortype": "ServiceQuotaExceededException"}, `{"message":"Quota exceeded."}`},
		"expired": {403, nil, `{"__type":"com.amazon.coral.service#ExpiredTokenException","Message":"The security token included in the request is expired"}`},
		"untyped": {502, nil, `<html>Bad Gateway</html>`},
	}), bedrockKeyID)

	tests := []struct {
		name       string
		g          *gatewayStack
		model      string
		user       string
		status     int
		typ, code  string
		inMsg      string
		notInMsg   string
		retryAfter string
	}{
		{name: "throttled", g: g, user: "busy", status: 429, typ: "rate_limit_error", code: "rate_limit_exceeded", inMsg: "Too many requests.", retryAfter: "2"},
		{name: "validation", g: g, user: "invalid", status: 400, typ: "invalid_request_error", inMsg: "ValidationException"},
		{name: "access denied", g: g, user: "denied", status: 502, typ: "api_error", code: "upstream_auth", inMsg: "AccessDeniedException", notInMsg: "arn:aws"},
		{name: "unrecognized client", g: wrongKey, user: "hi", status: 502, typ: "api_error", code: "upstream_auth", inMsg: "UnrecognizedClientException"},
		{name: "unknown model", g: g, model: "bedrock/amazon.nova-micro-v1:0", user: "hi", status: 404, typ: "invalid_request_error", code: "model_not_found"},
		{name: "model timeout", g: g, user: "slow", status: 504, typ: "api_error", code: "timeout"},
		{name: "model error", g: g, user: "failing", status: 502, typ: "api_error", code: "upstream_error"},
		{name: "internal", g: g, user: "broken", status: 500, typ: "api_error"},
		{name: "unavailable", g: g, user: "down", status: 503, typ: "api_error"},
		{name: "model not ready", g: raw, user: "not ready", status: 503, typ: "api_error", code: "model_not_ready", inMsg: "not ready"},
		{name: "quota", g: raw, user: "quota", status: 429, typ: "rate_limit_error", code: "insufficient_quota"},
		{name: "type in the body", g: raw, user: "expired", status: 502, typ: "api_error", code: "upstream_auth", inMsg: "ExpiredTokenException"},
		{name: "no type", g: raw, user: "untyped", status: 502, typ: "api_error", inMsg: "502"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.g.post(t, tt.g.api.A.Key, map[string]any{"model": cmp.Or(tt.model, "bedrock/amazon.nova-lite-v1:0"),
				"messages": []map[string]any{{"role": "user", "content": tt.user}}})
			assert.Equal(t, tt.status, res.StatusCode)
			assert.Equal(t, tt.retryAfter, res.Header.Get("Retry-After"))
			a := decodeCompletion(t, res)
			require.NotNil(t, a.Error, "OpenAI's error shape")
			assert.Equal(t, tt.typ, a.Error.Type)
			if tt.code == "" {
				assert.Nil(t, a.Error.Code)
			} else if assert.NotNil(t, a.Error.Code) {
				assert.Equal(t, tt.code, *a.Error.Code)
			}
			assert.Contains(t, a.Error.Message, tt.inMsg)
			if tt.notInMsg != "" {
				assert.NotContains(t, a.Error.Message, tt.notInMsg)
			}
		})
	}
}

// streamChunk is a chat.completion.chunk, or the error a stream ends with.
type streamChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// chunkStream is an SSE answer read whole: its chunks, and whether it ended with [DONE].
type chunkStream struct {
	chunks []streamChunk
	done   bool
}

// readChunks reads an SSE answer: every event is one data line and a blank line, [DONE] last.
func readChunks(t *testing.T, res *http.Response) chunkStream {
	t.Helper()
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	var s chunkStream
	lines := bufio.NewScanner(res.Body)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			require.Empty(t, lines.Text(), "an SSE line")
			continue
		}
		require.False(t, s.done, "nothing after [DONE]")
		if data == "[DONE]" {
			s.done = true
			continue
		}
		var c streamChunk
		require.NoError(t, json.Unmarshal([]byte(data), &c), data)
		s.chunks = append(s.chunks, c)
	}
	require.NoError(t, lines.Err())
	return s
}

// text is the content of the stream's deltas, arguments its tool calls' arguments.
func (s chunkStream) text() (content, arguments string) {
	var c, a strings.Builder
	for _, ch := range s.chunks {
		for _, choice := range ch.Choices {
			if choice.Delta.Content != nil {
				c.WriteString(*choice.Delta.Content)
			}
			for _, tc := range choice.Delta.ToolCalls {
				a.WriteString(tc.Function.Arguments)
			}
		}
	}
	return c.String(), a.String()
}

// finish is the stream's finish reason.
func (s chunkStream) finish() string {
	for _, ch := range s.chunks {
		for _, choice := range ch.Choices {
			if choice.FinishReason != nil {
				return *choice.FinishReason
			}
		}
	}
	return ""
}

// TestConverseStream: a stream is ConverseStream's answer as chat.completion.chunk events: the
// same content as the answer in one piece, the usage chunk when asked for, [DONE] last.
func TestConverseStream(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(bedrockKeyID), fakemodel.WithRules(
		fakemodel.Rule{Match: fakemodel.SchemaIs("verdict"), Reply: fakemodel.Reply{JSON: json.RawMessage(`{"pass":true,"score":7}`)}},
		fakemodel.Rule{Match: fakemodel.Contains("busy"), Reply: fakemodel.Reply{Status: 429}},
	))
	g := bedrockGateway(t, fake.URL, bedrockKeyID)
	const model = "bedrock/amazon.nova-lite-v1:0"
	user := []map[string]any{{"role": "user", "content": "Tell me about Paris."}}
	verdict := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "verdict", "schema": json.RawMessage(verdictJSONSchema)}}

	tests := []struct {
		name         string
		body         map[string]any
		includeUsage bool
		finish       string
		tool         bool
	}{
		{name: "text with usage", body: map[string]any{"model": model, "messages": user}, includeUsage: true, finish: "stop"},
		{name: "text", body: map[string]any{"model": model, "messages": user}, finish: "stop"},
		{name: "cut", body: map[string]any{"model": model, "messages": user, "max_tokens": 3}, includeUsage: true, finish: "length"},
		{name: "tool call", body: map[string]any{"model": model, "messages": user, "tools": weatherTools, "tool_choice": "required"},
			includeUsage: true, finish: "tool_calls", tool: true},
		{name: "json_schema", body: map[string]any{"model": model, "messages": user, "response_format": verdict}, finish: "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole := decodeCompletion(t, g.post(t, g.api.A.Key, tt.body))
			require.Nil(t, whole.Error)

			stream := map[string]any{"stream": true}
			if tt.includeUsage {
				stream["stream_options"] = map[string]bool{"include_usage": true}
			}
			for k, v := range tt.body {
				stream[k] = v
			}
			res := g.post(t, g.api.A.Key, stream)
			require.Equal(t, http.StatusOK, res.StatusCode)
			s := readChunks(t, res)
			c, _ := lastConverse(t, fake)
			assert.True(t, c.Stream)
			assert.Equal(t, "/model/amazon.nova-lite-v1:0/converse-stream", c.Path)

			require.NotEmpty(t, s.chunks)
			assert.True(t, s.done, "[DONE] last")
			first := s.chunks[0]
			assert.Equal(t, "chat.completion.chunk", first.Object)
			assert.Regexp(t, `^chatcmpl-fakemodel-`, first.ID)
			assert.Equal(t, "amazon.nova-lite-v1:0", first.Model)
			assert.Equal(t, "assistant", first.Choices[0].Delta.Role)
			for _, ch := range s.chunks {
				assert.Equal(t, first.ID, ch.ID, "one id for the stream")
				assert.Nil(t, ch.Error)
			}
			assert.Equal(t, tt.finish, s.finish())
			assert.Equal(t, whole.Choices[0].FinishReason, s.finish(), "as the answer in one piece")
			content, arguments := s.text()
			if tt.tool {
				require.Len(t, whole.Choices[0].Message.ToolCalls, 1)
				call := whole.Choices[0].Message.ToolCalls[0]
				var opened bool
				for _, ch := range s.chunks {
					for _, choice := range ch.Choices {
						for _, tc := range choice.Delta.ToolCalls {
							assert.Equal(t, 0, tc.Index)
							if tc.ID != "" {
								opened = true
								assert.Equal(t, "function", tc.Type)
								assert.Equal(t, call.Function.Name, tc.Function.Name)
							}
						}
					}
				}
				assert.True(t, opened, "the tool call opens with its id and name")
				assert.JSONEq(t, call.Function.Arguments, arguments)
			} else {
				assert.Equal(t, whole.content(), content)
			}

			last := s.chunks[len(s.chunks)-1]
			if !tt.includeUsage {
				assert.Nil(t, last.Usage, "no usage chunk unless asked for")
				return
			}
			require.NotNil(t, last.Usage, "the usage chunk is the last")
			assert.Empty(t, last.Choices, "the usage chunk has no choices")
			assert.Equal(t, whole.Usage.PromptTokens, last.Usage.PromptTokens)
			assert.Equal(t, whole.Usage.CompletionTokens, last.Usage.CompletionTokens)
		})
	}

	t.Run("error before the stream", func(t *testing.T) {
		res := g.post(t, g.api.A.Key, map[string]any{"model": model, "stream": true, "messages": []map[string]any{{"role": "user", "content": "busy"}}})
		assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
		a := decodeCompletion(t, res)
		require.NotNil(t, a.Error)
		assert.Equal(t, "rate_limit_error", a.Error.Type)
	})
}

// converseEvent encodes a ConverseStream event message as Bedrock sends it.
func converseEvent(t testing.TB, typ, payload string) []byte {
	t.Helper()
	return eventStreamMessage(t, payload, ":event-type", typ, ":content-type", "application/json", ":message-type", "event")
}

// eventStreamMessage encodes a message of an AWS event stream with the AWS SDK's encoder, its
// headers given as name and value pairs.
func eventStreamMessage(t testing.TB, payload string, headers ...string) []byte {
	t.Helper()
	msg := eventstream.Message{Payload: []byte(payload)}
	for i := 0; i+1 < len(headers); i += 2 {
		msg.Headers.Set(headers[i], eventstream.StringValue(headers[i+1]))
	}
	var b bytes.Buffer
	require.NoError(t, eventstream.NewEncoder().Encode(&b, msg))
	return b.Bytes()
}

// joinFrames joins encoded messages.
func joinFrames(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// corruptFrame flips a byte of a message's payload: its CRC no longer holds.
func corruptFrame(msg []byte) []byte {
	out := bytes.Clone(msg)
	out[len(out)-6] ^= 0xff
	return out
}

// converseStreamUpstream is a Bedrock upstream whose ConverseStream answer is body().
func converseStreamUpstream(t testing.TB, body func() []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/converse-stream") {
			http.Error(w, `{"message":"not a stream"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(body())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The events of a short answer, "Hi there".
func converseEvents(t testing.TB) (start, hi, there, stop, metadata []byte) {
	return converseEvent(t, "messageStart", `{"role":"assistant","p":"abc"}`),
		converseEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abcdef"}`),
		converseEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":" there"}}`),
		joinFrames(converseEvent(t, "contentBlockStop", `{"contentBlockIndex":0}`), converseEvent(t, "messageStop", `{"stopReason":"end_turn"}`)),
		converseEvent(t, "metadata", `{"usage":{"inputTokens":5,"outputTokens":2,"totalTokens":7},"metrics":{"latencyMs":12}}`)
}

// TestConverseStreamFailures: a broken stream (a bad CRC, a cut message, a hostile length, an
// exception) ends with OpenAI's error object as its last data line and no [DONE] once chunks
// are out, or as an HTTP error before; never a panic, never a hang.
func TestConverseStreamFailures(t *testing.T) {
	start, hi, there, stop, metadata := converseEvents(t)
	hostile := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 1<<30), 0)
	hostile = binary.BigEndian.AppendUint32(hostile, crc32.ChecksumIEEE(hostile))
	tests := []struct {
		name    string
		body    []byte
		status  int    // of the answer; 200: a stream
		content string // streamed before the end
		errType string // of the error the stream ends with, "" for none
		inMsg   string
	}{
		{name: "whole", body: joinFrames(start, hi, there, stop, metadata), status: 200, content: "Hi there"},
		{name: "reasoning and unknown events skipped", body: joinFrames(start,
			converseEvent(t, "contentBlockStart", `{"contentBlockIndex":0,"start":{"reasoningContent":{}}}`),
			converseEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"hmm"}}}`),
			converseEvent(t, "somethingNew", `{}`),
			converseEvent(t, "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":"Hi"}}`),
			stop, metadata), status: 200, content: "Hi"},
		{name: "no metadata", body: joinFrames(start, hi, stop), status: 200, content: "Hi"},
		{name: "bad CRC", body: joinFrames(start, hi, corruptFrame(there), stop, metadata), status: 200, content: "Hi", errType: "api_error", inMsg: "checksum"},
		{name: "cut message", body: joinFrames(start, hi, there[:len(there)/2]), status: 200, content: "Hi", errType: "api_error", inMsg: "cut short"},
		{name: "cut prelude", body: joinFrames(start, hi, there[:5]), status: 200, content: "Hi", errType: "api_error", inMsg: "cut short"},
		{name: "hostile length", body: joinFrames(start, hi, hostile), status: 200, content: "Hi", errType: "api_error", inMsg: "bytes"},
		{name: "ended early", body: joinFrames(start, hi), status: 200, content: "Hi", errType: "api_error", inMsg: "ended before"},
		{name: "exception", body: joinFrames(start, hi, eventStreamMessage(t, `{"message":"Too many tokens, please wait."}`,
			":exception-type", "throttlingException", ":content-type", "application/json", ":message-type", "exception")),
			status: 200, content: "Hi", errType: "rate_limit_error", inMsg: "Too many tokens"},
		{name: "model stream error", body: joinFrames(start, eventStreamMessage(t, `{"message":"","originalStatusCode":400,"originalMessage":"model failed"}`,
			":exception-type", "modelStreamErrorException", ":message-type", "exception")), status: 200, errType: "api_error", inMsg: "model failed"},
		{name: "error message", body: joinFrames(start, hi, eventStreamMessage(t, "", ":error-code", "InternalFailure", ":error-message", "oops", ":message-type", "error")),
			status: 200, content: "Hi", errType: "api_error", inMsg: "oops"},
		{name: "corrupt first message", body: joinFrames(corruptFrame(start), hi), status: 502, inMsg: "checksum"},
		{name: "exception first", body: eventStreamMessage(t, `{"message":"slow down"}`, ":exception-type", "throttlingException", ":message-type", "exception"),
			status: 429, inMsg: "slow down"},
		{name: "empty", body: nil, status: 502, inMsg: "ended before"},
	}
	var body atomic.Pointer[[]byte]
	g := bedrockGateway(t, converseStreamUpstream(t, func() []byte { return *body.Load() }), bedrockKeyID)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body.Store(&tt.body)
			res := g.post(t, g.api.A.Key, map[string]any{"model": "bedrock/amazon.nova-lite-v1:0", "stream": true,
				"stream_options": map[string]bool{"include_usage": true}, "messages": []map[string]any{{"role": "user", "content": "hi"}}})
			require.Equal(t, tt.status, res.StatusCode)
			if tt.status != http.StatusOK {
				a := decodeCompletion(t, res)
				require.NotNil(t, a.Error)
				assert.Contains(t, a.Error.Message, tt.inMsg)
				return
			}
			s := readChunks(t, res)
			content, _ := s.text()
			assert.Equal(t, tt.content, content)
			last := s.chunks[len(s.chunks)-1]
			if tt.errType == "" {
				assert.True(t, s.done)
				assert.Equal(t, "stop", s.finish())
				require.NotNil(t, last.Usage)
				return
			}
			assert.False(t, s.done, "no [DONE] after an error")
			require.NotNil(t, last.Error, "the stream ends with an error")
			assert.Equal(t, tt.errType, last.Error.Type)
			assert.Contains(t, last.Error.Message, tt.inMsg)
		})
	}
}

// TestConverseStreamPassesThrough: chunks reach the client as Bedrock sends its events: the
// upstream holds the rest of its answer until the first text has reached the client.
func TestConverseStreamPassesThrough(t *testing.T) {
	start, hi, there, stop, metadata := converseEvents(t)
	firstSeen := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(joinFrames(start, hi))
		w.(http.Flusher).Flush()
		select {
		case <-firstSeen:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(joinFrames(there, stop, metadata))
	}))
	t.Cleanup(upstream.Close)
	g := bedrockGateway(t, upstream.URL, bedrockKeyID)

	res := g.post(t, g.api.A.Key, map[string]any{"model": "bedrock/amazon.nova-lite-v1:0", "stream": true,
		"messages": []map[string]any{{"role": "user", "content": "hi"}}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	lines := bufio.NewScanner(res.Body)
	var data []string
	for lines.Scan() {
		line, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		data = append(data, line)
		if strings.Contains(line, `"content":"Hi"`) {
			close(firstSeen) // only now does the upstream send the rest
		}
	}
	require.NoError(t, lines.Err())
	require.Len(t, data, 5, "role, Hi, there, finish, [DONE]: %q", data)
	assert.Contains(t, data[2], `" there"`)
	assert.Equal(t, "[DONE]", data[4])
}

// FuzzConverseStream: whatever bytes a ConverseStream answer is, the client gets an HTTP
// answer that is an OpenAI error or a stream of JSON chunks.
func FuzzConverseStream(f *testing.F) {
	start, hi, there, stop, metadata := converseEvents(f)
	f.Add(joinFrames(start, hi, there, stop, metadata))
	f.Add(joinFrames(start, hi, corruptFrame(there)))
	f.Add(joinFrames(start, hi[:7]))
	f.Add(converseEvent(f, "contentBlockStart", `{"contentBlockIndex":3,"start":{"toolUse":{"toolUseId":"t","name":"n"}}}`))
	var body atomic.Pointer[[]byte]
	g := bedrockGateway(f, converseStreamUpstream(f, func() []byte { return *body.Load() }), bedrockKeyID)
	f.Fuzz(func(t *testing.T, b []byte) {
		body.Store(&b)
		res := g.post(t, g.api.A.Key, map[string]any{"model": "bedrock/amazon.nova-lite-v1:0", "stream": true,
			"messages": []map[string]any{{"role": "user", "content": "hi"}}})
		if res.StatusCode != http.StatusOK {
			decodeCompletion(t, res)
			return
		}
		readChunks(t, res)
	})
}
