package sdkcompat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// providerKey is the application's own key of its model provider.
const providerKey = "sk-provider"

// gatewayAPI is the whole API with a model gateway beside it, and the application's own
// model provider.
type gatewayAPI struct {
	c   *client.Client
	key string // the project's API key
	url string // the API's base URL
	// gateway answers POST /v1/chat/completions on the API's server. The API does not serve
	// that route yet (the gateway is another issue), so a fake model server stands in for it,
	// mounted on the same server so that the client reaches it at its base URL, as it will
	// reach the gateway. It takes the project's key only.
	gateway *fakemodel.Server
	// provider is the application's model provider (OpenAI), which takes providerKey only.
	provider *fakemodeltest.Server
	// lookups counts the model-binding reads (GET /v1/prompt-versions/{id}/model).
	lookups *atomic.Int32
}

func servedWithGateway(t *testing.T) *gatewayAPI {
	t.Helper()
	a := apitest.New(t, apitest.Options{})
	g := &gatewayAPI{
		gateway:  fakemodel.New(fakemodel.WithAPIKey(a.A.Key)),
		provider: fakemodeltest.Start(t, fakemodel.WithAPIKey(providerKey)),
		lookups:  new(atomic.Int32),
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/chat/completions", g.gateway)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/prompt-versions/") {
			g.lookups.Add(1)
		}
		a.Handler.ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey(a.A.Key), client.WithProject(a.A.ProjectID), client.WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	g.c, g.key, g.url = c, a.A.Key, srv.URL
	return g
}

// openAI is an OpenAI client of the provider whose requests go through the transport.
func (g *gatewayAPI) openAI() openai.Client {
	return openai.NewClient(option.WithBaseURL(g.provider.OpenAIBaseURL()), option.WithAPIKey(providerKey),
		option.WithMaxRetries(0), option.WithHTTPClient(&http.Client{Transport: g.c.Transport(nil)}))
}

// prompt makes version 1 of prompt slug, binds model to it unless it is "", and returns the
// version with its content carrying the linkage metadata, as the prompt helper returns it.
func (g *gatewayAPI) prompt(t *testing.T, slug, content, model string, vars map[string]string) (api.PromptVersion, string) {
	t.Helper()
	ctx := context.Background()
	v, err := g.c.EnsurePromptVersion(ctx, slug, api.EnsureVersionRequest{Content: &content})
	require.NoError(t, err)
	if model != "" {
		_, err = g.c.BindModel(ctx, slug, v.Version, &model)
		require.NoError(t, err)
	}
	link := api.Linkage{Task: slug, Variables: vars, PromptSlug: slug, PromptVersion: v.Version, PromptVersionID: v.ID, ContentHash: v.ContentHash}
	return v, link.Decorate(v.Content, api.LinkagePython)
}

// llmSpans reads back the llm spans of a trace, after sending what waits.
func (g *gatewayAPI) llmSpans(t *testing.T, traceID string) []api.Span {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, g.c.Flush(ctx))
	spans, err := g.c.Spans(ctx, api.SpanQuery{TraceID: traceID, SpanKind: api.SpanKindLLM})
	require.NoError(t, err)
	return spans
}

// ask sends system and user through the OpenAI client, streamed or not, and returns the
// answer's text.
func ask(ctx context.Context, t *testing.T, oa openai.Client, stream bool, system, user string) string {
	t.Helper()
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(user)},
	}
	if !stream {
		res, err := oa.Chat.Completions.New(ctx, params)
		require.NoError(t, err)
		require.NotEmpty(t, res.Choices)
		return res.Choices[0].Message.Content
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := oa.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	require.NoError(t, s.Err())
	require.NoError(t, s.Close())
	require.NotEmpty(t, acc.Choices)
	return acc.Choices[0].Message.Content
}

// TestTransportLinkedCalls: a call whose system prompt carries linkage metadata goes out
// stripped of it, with its variables substituted and the bound model, to the provider or
// through the gateway, and is recorded as one llm span linked to the prompt version.
func TestTransportLinkedCalls(t *testing.T) {
	g := servedWithGateway(t)
	oa := g.openAI()
	tests := []struct {
		name   string
		bound  string // the model bound to the version, "" for none
		stream bool
		// what the model server receives and the span records
		viaGateway   bool
		model        string
		spanProvider string
	}{
		{name: "bound model", bound: "gpt-4.1-mini", model: "gpt-4.1-mini", spanProvider: "openai"},
		{name: "bound model, streamed", bound: "gpt-4.1-mini", stream: true, model: "gpt-4.1-mini", spanProvider: "openai"},
		{name: "no model bound", model: "gpt-4o-mini", spanProvider: "openai"},
		{name: "zeroeval gateway", bound: "zeroeval/claude-haiku-4-5", viaGateway: true, model: "claude-haiku-4-5", spanProvider: "zeroeval"},
		{name: "plume gateway, streamed", bound: "plume/claude-haiku-4-5", stream: true, viaGateway: true, model: "claude-haiku-4-5", spanProvider: "plume"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g.gateway.Reset()
			g.provider.Reset()
			slug := fmt.Sprintf("support-bot-%d", i)
			v, system := g.prompt(t, slug, "You are a helpful agent for {{product}} in {{city}}.", tt.bound,
				map[string]string{"product": "Plume", "city": "Zürich"})
			ctx, parent := g.c.StartSpan(context.Background(), "handle-request")

			answer := ask(ctx, t, oa, tt.stream, system, "What does {{product}} do?")
			parent.End()

			received, idle := g.provider.Server, g.gateway
			if tt.viaGateway {
				received, idle = g.gateway, g.provider.Server
			}
			require.Equal(t, 1, received.Count())
			assert.Zero(t, idle.Count())
			call := received.Calls()[0]
			assert.Equal(t, http.StatusOK, call.Status)
			assert.Equal(t, tt.model, call.Model)
			assert.Equal(t, "You are a helpful agent for Plume in Zürich.", call.System, "metadata stripped, variables substituted")
			assert.Equal(t, "What does Plume do?", call.LastUser(), "variables substituted in every message")
			assert.NotContains(t, string(call.Body), "zeroeval>")
			assert.Equal(t, tt.stream, call.Stream)
			key := providerKey
			if tt.viaGateway {
				key = g.key
			}
			assert.Equal(t, "Bearer "+key, call.Header.Get("Authorization"))

			spans := g.llmSpans(t, parent.TraceID())
			require.Len(t, spans, 1, "one llm span per call")
			s := spans[0]
			assert.Equal(t, "openai.chat.completions.create", s.Name, "the name the zeroeval SDKs give it")
			assert.Equal(t, ptr(parent.ID()), s.ParentSpanID)
			assert.Equal(t, ptr("ok"), s.Status)
			assert.Equal(t, ptr(answer), s.OutputData)
			require.NotNil(t, s.InputData)
			var input []map[string]any
			require.NoError(t, json.Unmarshal([]byte(*s.InputData), &input))
			assert.Equal(t, "You are a helpful agent for Plume in Zürich.", input[0]["content"], "the messages as sent")
			require.NotNil(t, s.PromptLink, "the API links the span to the version")
			assert.Equal(t, v.ID, s.PromptLink.PromptVersionID)

			var attrs map[string]any
			require.NoError(t, json.Unmarshal(s.Attributes, &attrs))
			assert.Equal(t, tt.spanProvider, attrs["provider"])
			assert.Equal(t, tt.model, attrs["model"])
			assert.Equal(t, tt.stream, attrs["streaming"])
			assert.Equal(t, slug, attrs["task"])
			assert.Equal(t, map[string]any{"product": "Plume", "city": "Zürich"}, attrs["variables"])
			assert.Equal(t, "You are a helpful agent for {{product}} in {{city}}.", attrs["system_prompt_template"])
			link, _ := attrs["zeroeval"].(map[string]any)
			assert.Equal(t, v.ID, link["prompt_version_id"])
			assert.Equal(t, v.ContentHash, link["content_hash"])
			assert.Positive(t, attrs["inputTokens"])
			assert.Positive(t, attrs["outputTokens"])
			assert.Contains(t, attrs["usage"], "total_tokens")
			assert.True(t, strings.HasPrefix(attrs["openai_id"].(string), "chatcmpl-"), "%v", attrs["openai_id"])
			if tt.viaGateway {
				assert.Equal(t, g.url+"/v1", attrs["base_url"])
			} else {
				assert.Equal(t, g.provider.OpenAIBaseURL(), attrs["base_url"])
			}
		})
	}
	assert.Equal(t, int32(len(tests)), g.lookups.Load(), "one binding read per linked version")
}

// TestTransportCachesBindings: the bound model is read once for many calls.
func TestTransportCachesBindings(t *testing.T) {
	g := servedWithGateway(t)
	oa := g.openAI()
	_, system := g.prompt(t, "cached-bot", "Answer in {{lang}}.", "gpt-4.1-mini", map[string]string{"lang": "French"})
	for range 3 {
		ask(context.Background(), t, oa, false, system, "Hello")
	}
	assert.Equal(t, int32(1), g.lookups.Load())
	for _, call := range g.provider.Calls() {
		assert.Equal(t, "gpt-4.1-mini", call.Model)
	}
}

// TestTransportPassesUnlinkedCallsThrough: a call without linkage metadata reaches the
// provider byte for byte as the SDK wrote it, and is still recorded; other requests are not
// recorded.
func TestTransportPassesUnlinkedCallsThrough(t *testing.T) {
	g := servedWithGateway(t)
	oa := g.openAI()
	ctx, parent := g.c.StartSpan(context.Background(), "handle-request")
	answer := ask(ctx, t, oa, false, "You are terse. {{not_a_variable}}", "Hi")
	direct := openai.NewClient(option.WithBaseURL(g.provider.OpenAIBaseURL()), option.WithAPIKey(providerKey), option.WithMaxRetries(0))
	ask(ctx, t, direct, false, "You are terse. {{not_a_variable}}", "Hi")
	_, err := oa.Models.List(ctx)
	require.NoError(t, err)
	parent.End()

	calls := g.provider.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, string(calls[1].Body), string(calls[0].Body), "the same bytes as without the transport")
	assert.Zero(t, g.lookups.Load())
	spans := g.llmSpans(t, parent.TraceID())
	require.Len(t, spans, 1)
	assert.Equal(t, ptr(answer), spans[0].OutputData)
	var attrs map[string]any
	require.NoError(t, json.Unmarshal(spans[0].Attributes, &attrs))
	assert.Equal(t, "gpt-4o-mini", attrs["model"])
	assert.NotContains(t, attrs, "zeroeval")
	assert.Nil(t, spans[0].PromptLink)
	assert.Equal(t, uint64(2), g.c.SpanWriter().Stats().Sent, "the parent and the chat completion, not the models list")
}

// TestTransportRecordsFailures: a call the provider refuses is an llm span in error, and the
// caller gets the provider's answer.
func TestTransportRecordsFailures(t *testing.T) {
	g := servedWithGateway(t)
	g.provider.SetRules(fakemodel.Rule{Reply: fakemodel.Reply{Status: http.StatusTooManyRequests, ErrorMessage: "slow down"}})
	ctx, parent := g.c.StartSpan(context.Background(), "handle-request")
	oa := g.openAI()
	_, err := oa.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
	})
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusTooManyRequests, apiErr.StatusCode)
	assert.Contains(t, apiErr.Message, "slow down", "the caller reads the whole answer")
	parent.End()

	spans := g.llmSpans(t, parent.TraceID())
	require.Len(t, spans, 1)
	assert.Equal(t, ptr("error"), spans[0].Status)
	assert.Equal(t, ptr("rate_limit_exceeded"), spans[0].ErrorCode)
	assert.Equal(t, ptr("slow down"), spans[0].ErrorMessage)
}

// heldStream serves a streamed chat completion whose first chunk ("Hello") is sent at once
// and the rest (" world", the usage, [DONE]) once release is closed. It returns an OpenAI
// client of it whose requests go through g's transport.
func heldStream(t *testing.T, g *gatewayAPI) (oa openai.Client, release chan struct{}) {
	t.Helper()
	release = make(chan struct{})
	chunk := func(w http.ResponseWriter, body string) {
		fmt.Fprintf(w, "data: %s\n\n", body)
		w.(http.Flusher).Flush()
	}
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the request's context ends when the client goes
		w.Header().Set("Content-Type", "text/event-stream")
		chunk(w, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}]}`)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		chunk(w, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}]}`)
		chunk(w, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}`)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(provider.Close)
	oa = openai.NewClient(option.WithBaseURL(provider.URL+"/v1"), option.WithAPIKey(providerKey), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: g.c.Transport(nil)}))
	return oa, release
}

// firstChunk reads the first chunk of stream; the timeout only stops a transport that holds
// chunks back from hanging the test.
func firstChunk(t *testing.T, stream *ssestream.Stream[openai.ChatCompletionChunk]) string {
	t.Helper()
	first := make(chan string, 1)
	go func() {
		defer close(first)
		if stream.Next() {
			first <- stream.Current().Choices[0].Delta.Content
		}
	}()
	select {
	case got := <-first:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal("the first chunk did not arrive before the stream ended")
		return ""
	}
}

// TestTransportStreamsAsItArrives: each chunk reaches the caller as the provider sends it,
// before the stream ends; the span is recorded when it does.
func TestTransportStreamsAsItArrives(t *testing.T) {
	g := servedWithGateway(t)
	oa, release := heldStream(t, g)
	ctx, parent := g.c.StartSpan(context.Background(), "handle-request")
	stream := oa.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	assert.Equal(t, "Hello", firstChunk(t, stream))
	close(release)
	var rest strings.Builder
	for stream.Next() {
		if ch := stream.Current(); len(ch.Choices) > 0 {
			rest.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	require.NoError(t, stream.Err())
	assert.Equal(t, " world", rest.String())
	require.NoError(t, stream.Close())
	parent.End()

	spans := g.llmSpans(t, parent.TraceID())
	require.Len(t, spans, 1)
	assert.Equal(t, ptr("Hello world"), spans[0].OutputData)
	var attrs map[string]any
	require.NoError(t, json.Unmarshal(spans[0].Attributes, &attrs))
	assert.Equal(t, 7.0, attrs["inputTokens"])
	assert.Equal(t, 2.0, attrs["outputTokens"])
	assert.Equal(t, true, attrs["streaming"])
	assert.Equal(t, "chatcmpl-1", attrs["openai_id"])
	assert.NotContains(t, attrs, "stream_incomplete")
}

// TestTransportStreamClosedEarly: a stream the caller abandons is recorded when it is closed,
// with what came until then, and marked incomplete.
func TestTransportStreamClosedEarly(t *testing.T) {
	g := servedWithGateway(t)
	oa, release := heldStream(t, g)
	t.Cleanup(func() { close(release) })
	ctx, parent := g.c.StartSpan(context.Background(), "handle-request")
	stream := oa.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
	})
	assert.Equal(t, "Hello", firstChunk(t, stream))
	require.NoError(t, stream.Close())
	parent.End()

	spans := g.llmSpans(t, parent.TraceID())
	require.Len(t, spans, 1)
	assert.Equal(t, ptr("Hello"), spans[0].OutputData)
	var attrs map[string]any
	require.NoError(t, json.Unmarshal(spans[0].Attributes, &attrs))
	assert.Equal(t, true, attrs["stream_incomplete"])
	assert.NotContains(t, attrs, "inputTokens")
}

func ptr[T any](v T) *T { return &v }
