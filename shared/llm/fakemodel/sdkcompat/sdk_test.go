package sdkcompat_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

var verdictSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"pass":   map[string]any{"type": "boolean"},
		"score":  map[string]any{"type": "integer", "minimum": 1, "maximum": 10},
		"reason": map[string]any{"type": "string"},
	},
	"required":             []string{"pass", "score", "reason"},
	"additionalProperties": false,
}

type verdict struct {
	Pass   bool   `json:"pass"`
	Score  int    `json:"score"`
	Reason string `json:"reason"`
}

func TestOpenAISDK(t *testing.T) {
	srv := fakemodeltest.Start(t, fakemodel.WithAPIKey("sk-test"), fakemodel.WithRules(
		// Twice rate limited: the SDK's own retries get through.
		fakemodel.Rule{Reply: fakemodel.Reply{Status: 429, RetryAfter: time.Millisecond}, Times: 2},
	))
	client := openai.NewClient(openaioption.WithBaseURL(srv.OpenAIBaseURL()), openaioption.WithAPIKey("sk-test"),
		openaioption.WithMaxRetries(2))
	ctx := context.Background()

	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:       "gpt-4o-mini",
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a judge."), openai.UserMessage("Rate this.")},
		Temperature: openai.Float(0),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{
				Name: "verdict", Schema: verdictSchema, Strict: openai.Bool(true),
			}},
		},
	})
	require.NoError(t, err)
	require.Len(t, resp.Choices, 1)
	var v verdict
	require.NoError(t, json.Unmarshal([]byte(resp.Choices[0].Message.Content), &v))
	assert.Equal(t, verdict{Pass: true, Score: 1, Reason: "fake"}, v)
	assert.Equal(t, "stop", resp.Choices[0].FinishReason)
	assert.Positive(t, resp.Usage.PromptTokens)
	assert.Equal(t, 3, srv.Count(), "two 429s, then the answer")
	calls := srv.Calls()
	assert.Equal(t, "verdict", calls[2].SchemaName)
	assert.Equal(t, "You are a judge.", calls[2].System)

	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         "gpt-4o-mini",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Stream it.")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	require.NoError(t, stream.Err())
	assert.Contains(t, acc.Choices[0].Message.Content, "Simulated answer from gpt-4o-mini")
	assert.Positive(t, acc.Usage.TotalTokens)
}

func TestAnthropicSDK(t *testing.T) {
	srv := fakemodeltest.Start(t, fakemodel.WithAPIKey("sk-ant-test"), fakemodel.WithRules(
		fakemodel.Rule{Reply: fakemodel.Reply{Status: 529, RetryAfter: time.Millisecond}, Times: 1},
	))
	client := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL), anthropicoption.WithAPIKey("sk-ant-test"))
	ctx := context.Background()

	msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
		Model:     "claude-haiku-4-5",
		MaxTokens: 256,
		System:    []anthropic.TextBlockParam{{Text: "You are a judge."}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Rate this."))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name: "record_verdict", InputSchema: anthropic.ToolInputSchemaParam{
				Properties: verdictSchema["properties"], Required: []string{"pass", "score", "reason"},
			},
		}}},
		ToolChoice: anthropic.ToolChoiceParamOfTool("record_verdict"),
	})
	require.NoError(t, err)
	assert.Equal(t, anthropic.StopReasonToolUse, msg.StopReason)
	require.Len(t, msg.Content, 1)
	tool := msg.Content[0].AsToolUse()
	assert.Equal(t, "record_verdict", tool.Name)
	var v verdict
	require.NoError(t, json.Unmarshal(tool.Input, &v))
	assert.Equal(t, verdict{Pass: true, Score: 1, Reason: "fake"}, v)
	assert.Positive(t, msg.Usage.InputTokens)
	assert.Equal(t, 2, srv.Count(), "one 529, then the answer")

	stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
		Model:     "claude-haiku-4-5",
		MaxTokens: 256,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Stream it."))},
	})
	var acc anthropic.Message
	for stream.Next() {
		require.NoError(t, acc.Accumulate(stream.Current()))
	}
	require.NoError(t, stream.Err())
	require.Len(t, acc.Content, 1)
	assert.Contains(t, acc.Content[0].Text, "Simulated answer from claude-haiku-4-5")
	assert.Equal(t, anthropic.StopReasonEndTurn, acc.StopReason)
}
