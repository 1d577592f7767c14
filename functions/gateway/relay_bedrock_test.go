package gateway_test

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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
