package sdkcompat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// pngDataURL is a 1x1 PNG as a data: URL.
const pngDataURL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

func TestChatCompletion(t *testing.T) {
	client := gatewayClient(plumeKey)
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			useFake()
			res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
				Model:    f.model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are terse."), openai.UserMessage("Say hello.")},
			})
			require.NoError(t, err)

			call := onlyCall(t, f)
			assert.Equal(t, "You are terse.", call.System)
			assert.Equal(t, "Say hello.", call.LastUser())
			assert.False(t, call.Stream)

			assert.Equal(t, "chat.completion", string(res.Object))
			assert.NotEmpty(t, res.ID)
			require.Len(t, res.Choices, 1)
			choice := res.Choices[0]
			assert.Equal(t, "assistant", string(choice.Message.Role))
			assert.True(t, strings.HasPrefix(choice.Message.Content, "Simulated answer from "+f.bare+" "), choice.Message.Content)
			assert.Equal(t, "stop", choice.FinishReason)
			assert.Empty(t, choice.Message.ToolCalls)
			assert.Equal(t, int64(call.PromptTokens()), res.Usage.PromptTokens, "the provider's prompt tokens")
			assert.Equal(t, int64(fakemodel.Tokens(choice.Message.Content)), res.Usage.CompletionTokens)
			assert.Equal(t, res.Usage.PromptTokens+res.Usage.CompletionTokens, res.Usage.TotalTokens)
		})
	}
}

// TestModelRouting: every spelling of a family's model reaches its provider as the provider's
// own model name, with the deployment's key and never the caller's.
func TestModelRouting(t *testing.T) {
	client := gatewayClient(plumeKey)
	for _, f := range families {
		for _, id := range append([]string{f.model}, f.aliases...) {
			t.Run(f.name+"/"+id, func(t *testing.T) {
				useFake()
				res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
					Model: id, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Which model are you?")},
				})
				require.NoError(t, err)
				onlyCall(t, f)
				require.Len(t, res.Choices, 1)
				assert.NotEmpty(t, res.Choices[0].Message.Content)
			})
		}
	}
}

// weatherTool is the tool of the tool tests.
var weatherTool = openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
	Name:        "get_weather",
	Description: openai.String("The current weather in a city."),
	Parameters: openai.FunctionParameters{
		"type":                 "object",
		"properties":           map[string]any{"city": map[string]any{"type": "string"}},
		"required":             []string{"city"},
		"additionalProperties": false,
	},
})

func TestTools(t *testing.T) {
	client := gatewayClient(plumeKey)
	ctx := context.Background()
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			question := openai.UserMessage("What is the weather in Zürich?")
			ask := openai.ChatCompletionNewParams{
				Model:      f.model,
				Messages:   []openai.ChatCompletionMessageParamUnion{question},
				Tools:      []openai.ChatCompletionToolUnionParam{weatherTool},
				ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
			}
			useFake()
			res, err := client.Chat.Completions.New(ctx, ask)
			require.NoError(t, err)
			call := onlyCall(t, f)
			assert.Equal(t, []string{"get_weather"}, call.Tools)
			assert.Equal(t, fakemodel.FormatTool, call.Format, "the tool call is forced")

			require.Len(t, res.Choices, 1)
			answer := res.Choices[0]
			assert.Equal(t, "tool_calls", answer.FinishReason)
			require.Len(t, answer.Message.ToolCalls, 1)
			tc := answer.Message.ToolCalls[0]
			assert.NotEmpty(t, tc.ID)
			assert.Equal(t, "function", string(tc.Type))
			assert.Equal(t, "get_weather", tc.Function.Name)
			assert.JSONEq(t, `{"city": "fake"}`, tc.Function.Arguments)

			t.Run("streamed", func(t *testing.T) {
				useFake()
				acc, _ := stream(t, client, ask)
				onlyCall(t, f)
				require.Len(t, acc.Choices, 1)
				assert.Equal(t, "tool_calls", acc.Choices[0].FinishReason)
				require.Len(t, acc.Choices[0].Message.ToolCalls, 1)
				streamed := acc.Choices[0].Message.ToolCalls[0]
				assert.NotEmpty(t, streamed.ID)
				assert.Equal(t, "get_weather", streamed.Function.Name)
				assert.JSONEq(t, tc.Function.Arguments, streamed.Function.Arguments)
			})

			t.Run("tool result", func(t *testing.T) {
				const result = `{"temperature_c": 21, "sky": "clear"}`
				useFake()
				res, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
					Model:    f.model,
					Messages: []openai.ChatCompletionMessageParamUnion{question, answer.Message.ToParam(), openai.ToolMessage(result, tc.ID)},
					Tools:    []openai.ChatCompletionToolUnionParam{weatherTool},
				})
				require.NoError(t, err)
				call := onlyCall(t, f)
				require.Len(t, call.Messages, 3, "the question, the tool call and its result")
				assert.Equal(t, "What is the weather in Zürich?", call.Messages[0].Text)
				assert.Equal(t, "assistant", call.Messages[1].Role)
				assert.Equal(t, result, call.Messages[2].Text, "the tool result reaches the provider")
				assert.Equal(t, 2, bytes.Count(call.Body, []byte(tc.ID)), "the call and its result name the tool call: %s", call.Body)

				require.Len(t, res.Choices, 1)
				assert.Equal(t, "stop", res.Choices[0].FinishReason)
				assert.NotEmpty(t, res.Choices[0].Message.Content)
				assert.Empty(t, res.Choices[0].Message.ToolCalls)
			})
		})
	}
}

// TestToolOptions: parallel_tool_calls false, and a function without parameters (OpenAI's
// "parameters": {}), reach the provider in its own terms. A provider that cannot be asked for
// one call at a time (f.noSerialTools) gets the request it gets without parallel_tool_calls:
// the option is left out, not refused, and not sent in a form the provider would refuse.
func TestToolOptions(t *testing.T) {
	client := gatewayClient(plumeKey)
	ping := openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name: "ping", Description: openai.String("Checks the line."), Parameters: openai.FunctionParameters{},
	})
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			params := openai.ChatCompletionNewParams{
				Model:             f.model,
				Messages:          []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Is the line up?")},
				Tools:             []openai.ChatCompletionToolUnionParam{weatherTool, ping},
				ParallelToolCalls: openai.Bool(false),
			}
			useFake()
			res, err := client.Chat.Completions.New(context.Background(), params)
			require.NoError(t, err)
			call := onlyCall(t, f)
			schemas, parallel := f.tools(t, call.Body)
			assert.Equal(t, "object", schemas["get_weather"]["type"])
			require.Contains(t, schemas, "ping")
			if f.api != fakemodel.OpenAI {
				// Anthropic refuses an input_schema without "type": "object"; Bedrock hands
				// Converse's inputSchema.json to the model as that input_schema.
				assert.Equal(t, "object", schemas["ping"]["type"], "%s", call.Body)
			}
			require.Len(t, res.Choices, 1)
			assert.NotEmpty(t, res.Choices[0].Message.Content)

			if f.noSerialTools == "" {
				assert.False(t, parallel, "one tool call at a time: %s", call.Body)
				return
			}
			t.Logf("%s cannot be asked for one tool call at a time: %s", f.name, f.noSerialTools)
			params.ParallelToolCalls = param.Opt[bool]{}
			useFake()
			_, err = client.Chat.Completions.New(context.Background(), params)
			require.NoError(t, err)
			assert.JSONEq(t, string(onlyCall(t, f).Body), string(call.Body),
				"parallel_tool_calls false is left out: the provider's request is the one without it")
		})
	}
}

// weatherReport is the shape of weatherSchema.
type weatherReport struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
	Unit        string  `json:"unit"`
}

var weatherSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"city":        map[string]any{"type": "string"},
		"temperature": map[string]any{"type": "number"},
		"unit":        map[string]any{"type": "string", "enum": []string{"celsius", "fahrenheit"}},
	},
	"required":             []string{"city", "temperature", "unit"},
	"additionalProperties": false,
}

func TestResponseFormat(t *testing.T) {
	client := gatewayClient(plumeKey)
	ctx := context.Background()
	for _, f := range families {
		t.Run(f.name+"/json_schema", func(t *testing.T) {
			params := openai.ChatCompletionNewParams{
				Model:    f.model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Report the weather in Zürich.")},
				ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
					OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{
						Name: "weather_report", Schema: weatherSchema, Strict: openai.Bool(true),
					}},
				},
			}
			useFake()
			res, err := client.Chat.Completions.New(ctx, params)
			require.NoError(t, err)
			call := onlyCall(t, f)
			assert.Equal(t, "weather_report", call.SchemaName)
			assert.JSONEq(t, mustJSON(t, weatherSchema), string(call.Schema), "the schema reaches the provider")

			require.Len(t, res.Choices, 1)
			assert.Equal(t, "stop", res.Choices[0].FinishReason)
			assert.Empty(t, res.Choices[0].Message.ToolCalls, "the answer is content, not a tool call")
			content := res.Choices[0].Message.Content
			assertFollowsWeatherSchema(t, content)

			t.Run("streamed", func(t *testing.T) {
				useFake()
				acc, _ := stream(t, client, params)
				onlyCall(t, f)
				require.Len(t, acc.Choices, 1)
				assert.Equal(t, "stop", acc.Choices[0].FinishReason)
				assert.Empty(t, acc.Choices[0].Message.ToolCalls)
				assert.Equal(t, content, acc.Choices[0].Message.Content)
			})
		})

		t.Run(f.name+"/json_object", func(t *testing.T) {
			// A provider without a JSON mode (Anthropic, Bedrock) is asked in its system prompt;
			// the fake answers JSON when asked there, as a model following it does.
			useFake(fakemodel.Rule{
				Match: fakemodel.All(func(c fakemodel.Call) bool { return c.API != fakemodel.OpenAI }, fakemodel.SystemContains("JSON")),
				Reply: fakemodel.Reply{JSON: json.RawMessage(`{"greeting": "Grüezi"}`)},
			})
			res, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:    f.model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are terse."), openai.UserMessage("Greet me, as JSON.")},
				ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
					OfJSONObject: &openai.ResponseFormatJSONObjectParam{},
				},
			})
			require.NoError(t, err)
			call := onlyCall(t, f)
			if f.api == fakemodel.OpenAI {
				assert.Equal(t, fakemodel.FormatJSONObject, call.Format)
			} else {
				assert.Contains(t, call.System, "JSON", "the JSON mode is asked for in the system prompt")
			}
			require.Len(t, res.Choices, 1)
			assert.Equal(t, "stop", res.Choices[0].FinishReason)
			var obj map[string]any
			assert.NoError(t, json.Unmarshal([]byte(res.Choices[0].Message.Content), &obj), "a JSON object: %s", res.Choices[0].Message.Content)
			assert.NotEmpty(t, obj)
		})
	}
}

// assertFollowsWeatherSchema checks that content is an instance of weatherSchema: every
// required property, of its type, and no other.
func assertFollowsWeatherSchema(t *testing.T, content string) {
	t.Helper()
	var fields map[string]any
	require.NoError(t, json.Unmarshal([]byte(content), &fields), "content: %s", content)
	assert.ElementsMatch(t, []string{"city", "temperature", "unit"}, slices.Collect(maps.Keys(fields)))
	dec := json.NewDecoder(strings.NewReader(content))
	dec.DisallowUnknownFields()
	var r weatherReport
	require.NoError(t, dec.Decode(&r), "content: %s", content)
	assert.NotEmpty(t, r.City)
	assert.Contains(t, []string{"celsius", "fahrenheit"}, r.Unit)
}

func TestImage(t *testing.T) {
	client := gatewayClient(plumeKey)
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			useFake()
			res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
				Model: f.model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
					openai.TextContentPart("What is in this picture?"),
					openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: pngDataURL}),
				})},
			})
			require.NoError(t, err)
			call := onlyCall(t, f)
			require.Len(t, call.Messages, 1)
			assert.Equal(t, 1, call.Messages[0].Images, "the provider read one valid image")
			assert.Equal(t, "What is in this picture?", call.Messages[0].Text)
			assert.Equal(t, pngDataURL, f.image(t, call.Body), "the image in the provider's own format: %s", call.Body)
			require.Len(t, res.Choices, 1)
			assert.NotEmpty(t, res.Choices[0].Message.Content)
		})
	}
}

func TestStreaming(t *testing.T) {
	client := gatewayClient(plumeKey)
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			params := openai.ChatCompletionNewParams{
				Model:    f.model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are terse."), openai.UserMessage("Tell me about Zürich.")},
			}
			useFake()
			res, err := client.Chat.Completions.New(context.Background(), params)
			require.NoError(t, err)
			require.Len(t, res.Choices, 1)

			useFake()
			acc, chunks := stream(t, client, params)
			call := onlyCall(t, f)
			assert.True(t, call.Stream, "the provider streams")
			require.Len(t, acc.Choices, 1)
			assert.Equal(t, res.Choices[0].Message.Content, acc.Choices[0].Message.Content, "the streamed content is the answer's")
			assert.Equal(t, "stop", acc.Choices[0].FinishReason)
			assert.Greater(t, len(chunks), 3, "the content comes in pieces")

			last := chunks[len(chunks)-1]
			assert.Empty(t, last.Choices, "the usage chunk is the last and has no choices")
			assert.True(t, last.JSON.Usage.Valid(), "the usage chunk arrives")
			assert.Equal(t, res.Usage.PromptTokens, last.Usage.PromptTokens)
			assert.Equal(t, res.Usage.CompletionTokens, last.Usage.CompletionTokens)
			assert.Equal(t, res.Usage.TotalTokens, last.Usage.TotalTokens)
			for _, c := range chunks[:len(chunks)-1] {
				assert.Equal(t, acc.ID, c.ID, "every chunk has the completion's id")
				assert.Equal(t, "chat.completion.chunk", string(c.Object))
				assert.Len(t, c.Choices, 1)
			}
		})
	}
}

// TestStreamingPassesEventsOn: the provider sends one event every 100 ms; the client gets the
// first content chunk while the provider is still sending (the fake holds its stream after
// that event until the client has it, so this does not depend on the machine's speed), and
// the last chunk cannot come before the provider's pacing allows. Without include_usage the
// gateway still asks the provider for the usage (to count the call) and must not pass it on.
func TestStreamingPassesEventsOn(t *testing.T) {
	const (
		interval = 100 * time.Millisecond
		text     = "Zephyr blows over Zürich today"
	)
	client := gatewayClient(plumeKey)
	for _, f := range families {
		for _, includeUsage := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/include_usage=%t", f.name, includeUsage), func(t *testing.T) {
				useFake(fakemodel.Rule{Reply: fakemodel.Reply{Text: text, ChunkInterval: interval}})
				firstSeen := make(chan struct{})
				served.holdAfter("Zephyr", firstSeen)
				params := openai.ChatCompletionNewParams{
					Model:    f.model,
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the wind doing?")},
				}
				if includeUsage {
					params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
				}

				start := time.Now()
				s := client.Chat.Completions.NewStreaming(context.Background(), params)
				var (
					acc                openai.ChatCompletionAccumulator
					firstContent, last time.Time
					usageChunks        int
				)
				for s.Next() {
					now := time.Now()
					c := s.Current()
					if firstContent.IsZero() && len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
						firstContent = now
						close(firstSeen)
					}
					if c.JSON.Usage.Valid() {
						usageChunks++
					}
					last = now
					assert.True(t, acc.AddChunk(c), "chunk %s", c.RawJSON())
				}
				require.NoError(t, s.Err())
				require.NoError(t, s.Close())
				ex := served.wait(t, 1)[0]
				onlyCall(t, f)

				require.Len(t, acc.Choices, 1)
				assert.Equal(t, text, acc.Choices[0].Message.Content)
				assert.Equal(t, "stop", acc.Choices[0].FinishReason)
				require.False(t, firstContent.IsZero(), "no content chunk")
				assert.True(t, firstContent.Before(ex.done), "the first content chunk reached the client before the provider had finished sending")
				if !includeUsage {
					assert.Zero(t, usageChunks, "a usage chunk the client did not ask for")
					return
				}
				assert.Equal(t, 1, usageChunks)
				// The fake waits interval before each event after its first, and the last chunk
				// (the usage) comes from its last event.
				require.NotEmpty(t, ex.events)
				assert.GreaterOrEqual(t, last.Sub(start), time.Duration(len(ex.events)-1)*interval,
					"the last chunk came after the provider's %d paced events", len(ex.events))
			})
		}
	}
}

// stream sends params streamed with stream_options.include_usage and returns the accumulated
// answer and the chunks received.
func stream(t *testing.T, client openai.Client, params openai.ChatCompletionNewParams) (openai.ChatCompletionAccumulator, []openai.ChatCompletionChunk) {
	t.Helper()
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := client.Chat.Completions.NewStreaming(context.Background(), params)
	var (
		acc    openai.ChatCompletionAccumulator
		chunks []openai.ChatCompletionChunk
	)
	for s.Next() {
		c := s.Current()
		chunks = append(chunks, c)
		assert.True(t, acc.AddChunk(c), "the accumulator takes chunk %s", c.RawJSON())
	}
	require.NoError(t, s.Err())
	require.NoError(t, s.Close())
	return acc, chunks
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	ask := func(key, model string) error {
		client := gatewayClient(key)
		_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello?")},
		})
		return err
	}
	tests := []struct {
		name   string
		key    string
		model  string
		status int
		code   string // OpenAI's error code, "" for any
	}{
		{name: "unknown bare model", key: plumeKey, model: "mystery-model-7", status: 404, code: "model_not_found"},
		{name: "unknown provider", key: plumeKey, model: "acme/rocket-1", status: 404, code: "model_not_found"},
		{name: "unknown model behind zeroeval/", key: plumeKey, model: "zeroeval/mystery-model-7", status: 404, code: "model_not_found"},
		{name: "no Plume key", model: families[0].model, status: 401},
		{name: "unknown Plume key", key: "plm_NoSuchKey00000000000000000000000000000", model: families[0].model, status: 401},
		{name: "provider key instead of a Plume key", key: openAIKey, model: families[0].model, status: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useFake()
			err := ask(tt.key, tt.model)
			var apiErr *openai.Error
			require.True(t, errors.As(err, &apiErr), "an API error, not %v", err)
			assert.Equal(t, tt.status, apiErr.StatusCode)
			assert.NotEmpty(t, apiErr.Message, "OpenAI's error shape: %s", apiErr.RawJSON())
			if tt.code != "" {
				assert.Equal(t, tt.code, apiErr.Code)
				assert.Equal(t, "invalid_request_error", apiErr.Type)
			}
			assert.Zero(t, fake.Count(), "no provider call")
		})
	}
}

func TestModelList(t *testing.T) {
	ctx := context.Background()
	client, anonymous := gatewayClient(plumeKey), gatewayClient("")
	pager := client.Models.ListAutoPaging(ctx)
	var ids []string
	for pager.Next() {
		ids = append(ids, pager.Current().ID)
	}
	require.NoError(t, pager.Err())
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			assert.Contains(t, ids, f.model, "the configured %s provider's models are listed", f.name)
		})
	}

	_, err := anonymous.Models.List(ctx)
	var apiErr *openai.Error
	require.True(t, errors.As(err, &apiErr), "an API error, not %v", err)
	assert.Equal(t, 401, apiErr.StatusCode)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
