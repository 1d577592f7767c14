package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/gateway"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
	"github.com/plumehq/plume/shared/pricing"
)

// providerKey is the deployment's key of its OpenAI-compatible provider.
const providerKey = "sk-deployment"

// gatewayStack is the gateway in front of providers, with the API's keys.
type gatewayStack struct {
	api *apitest.API
	url string // the gateway's base URL
}

// newGateway serves the gateway with the providers of cfg, tracing the calls that ask.
func newGateway(t *testing.T, cfg llm.Config) *gatewayStack {
	t.Helper()
	return newTracingGateway(t, cfg, gateway.TraceOff)
}

// newTracingGateway is newGateway tracing by mode.
func newTracingGateway(t *testing.T, cfg llm.Config, mode gateway.TraceMode) *gatewayStack {
	t.Helper()
	a := apitest.New(t, apitest.Options{})
	models := llm.New(cfg, llm.Options{BaseDelay: time.Millisecond})
	traces, err := a.Env.TraceService()
	require.NoError(t, err)
	h := gateway.NewHandler(gateway.Deps{
		Models:   func(context.Context) (*llm.Client, error) { return models, nil },
		Prices:   pricing.Default(),
		Pricer:   a.Env.Pricer(),
		Bindings: a.Env.Prompts(),
		Traces:   traces,
		Trace:    mode,
		Authn:    a.Env.Authn(),
	})
	// The spans it records count in their traces once the change stream is applied, which
	// the API does before a request that follows one of the gateway's.
	srv := httptest.NewServer(a.Applying(h))
	t.Cleanup(srv.Close)
	return &gatewayStack{api: a, url: srv.URL}
}

// openAI is a Config whose OpenAI provider is base.
func openAI(base string) llm.Config {
	return llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: base, APIKey: providerKey}}}
}

// post sends a chat completion request with key.
func (g *gatewayStack) post(t *testing.T, key string, body any, headers ...http.Header) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, g.url+"/v1/chat/completions", bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for _, h := range headers {
		for k, v := range h {
			req.Header[k] = v
		}
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

// chatAnswer is the part of a chat completion the tests read.
type chatAnswer struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func decode(t *testing.T, res *http.Response) chatAnswer {
	t.Helper()
	var a chatAnswer
	require.NoError(t, json.NewDecoder(res.Body).Decode(&a))
	return a
}

func messages(system, user string) []map[string]string {
	return []map[string]string{{"role": "system", "content": system}, {"role": "user", "content": user}}
}

// TestZeroevalBindingFlow replays the zeroeval Python SDK's call for a version bound to
// zeroeval/<model> (COMPAT.md "Model binding"): the Plume key at the gateway, the provider key
// and the bare model at the provider, an OpenAI-shaped answer back.
func TestZeroevalBindingFlow(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(providerKey), fakemodel.WithRules(fakemodel.Rule{
		Match: fakemodel.SystemContains("support agent"), Reply: fakemodel.Reply{Text: "Reset it under Settings."}}))
	g := newGateway(t, openAI(fake.OpenAIBaseURL()))

	res := g.post(t, g.api.A.Key, map[string]any{"model": "zeroeval/gpt-4o-mini",
		"messages": messages("You are a support agent for Plume.", "How do I reset my password?")})
	require.Equal(t, http.StatusOK, res.StatusCode)
	a := decode(t, res)
	assert.Equal(t, "chat.completion", a.Object)
	require.Len(t, a.Choices, 1)
	assert.Equal(t, "Reset it under Settings.", a.Choices[0].Message.Content)
	assert.Positive(t, a.Usage.PromptTokens)

	calls := fake.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, "gpt-4o-mini", calls[0].Model, "the prefix is looked through")
	assert.Equal(t, "Bearer "+providerKey, calls[0].Header.Get("Authorization"), "the deployment's key, never the caller's")
	assert.Equal(t, "You are a support agent for Plume.", calls[0].System)
}

// TestStreamedAnswerPassesThrough: a streamed answer reaches the client chunk by chunk as the
// provider sends it: the provider holds the rest of its answer until the first chunk has
// reached the client.
func TestStreamedAnswerPassesThrough(t *testing.T) {
	firstSeen := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Model != "gpt-4o-mini" || !req.Stream || r.Header.Get("Authorization") != "Bearer "+providerKey {
			http.Error(w, `{"error":{"message":"unexpected request"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(text string) {
			_, _ = io.WriteString(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"`+text+`"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
		}
		chunk("Hello")
		select {
		case <-firstSeen:
		case <-r.Context().Done():
			return
		}
		chunk(" world")
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(upstream.Close)
	g := newGateway(t, openAI(upstream.URL))

	res := g.post(t, g.api.A.Key, map[string]any{"model": "plume/gpt-4o-mini", "stream": true, "messages": messages("s", "u")})
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	lines := bufio.NewScanner(res.Body)
	var data []string
	for lines.Scan() {
		line := lines.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		data = append(data, line)
		if len(data) == 1 {
			close(firstSeen) // only now does the provider send the rest
		}
	}
	require.NoError(t, lines.Err())
	require.Len(t, data, 3)
	assert.Contains(t, data[0], `"Hello"`)
	assert.Contains(t, data[1], `" world"`)
	assert.Equal(t, "data: [DONE]", data[2])
}

// TestGatewayErrors: OpenAI-shaped errors with the right status, and no upstream call for a
// request the gateway refuses itself.
func TestGatewayErrors(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(providerKey), fakemodel.WithRules(fakemodel.Rule{
		Match: fakemodel.SystemContains("busy"), Reply: fakemodel.Reply{Status: http.StatusTooManyRequests, RetryAfter: 2 * time.Second}}))
	g := newGateway(t, openAI(fake.OpenAIBaseURL()))
	wrongKey := newGateway(t, llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: fake.OpenAIBaseURL(), APIKey: "sk-revoked"}}})

	tests := []struct {
		name   string
		g      *gatewayStack
		key    string
		body   any
		status int
		code   string
	}{
		{"no key", g, "", map[string]any{"model": "gpt-4o-mini", "messages": messages("s", "u")}, http.StatusUnauthorized, ""},
		{"bad key", g, "plm_not-a-key", map[string]any{"model": "gpt-4o-mini", "messages": messages("s", "u")}, http.StatusUnauthorized, ""},
		{"not JSON", g, g.api.A.Key, "just text", http.StatusBadRequest, ""},
		{"no model", g, g.api.A.Key, map[string]any{"messages": messages("s", "u")}, http.StatusBadRequest, ""},
		{"unknown model", g, g.api.A.Key, map[string]any{"model": "mystery-model", "messages": messages("s", "u")}, http.StatusNotFound, "model_not_found"},
		{"provider not configured", g, g.api.A.Key, map[string]any{"model": "groq/llama-3.1-8b-instant", "messages": messages("s", "u")}, http.StatusBadRequest, "model_not_available"},
		{"provider rate limit", g, g.api.A.Key, map[string]any{"model": "gpt-4o-mini", "messages": messages("busy", "u")}, http.StatusTooManyRequests, ""},
		{"deployment key refused", wrongKey, wrongKey.api.A.Key, map[string]any{"model": "gpt-4o-mini", "messages": messages("s", "u")}, http.StatusBadGateway, "upstream_auth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(fake.Calls())
			res := tt.g.post(t, tt.key, tt.body)
			assert.Equal(t, tt.status, res.StatusCode)
			a := decode(t, res)
			assert.NotEmpty(t, a.Error.Message, "an OpenAI-shaped error")
			if tt.code != "" {
				require.NotNil(t, a.Error.Code)
				assert.Equal(t, tt.code, *a.Error.Code)
			}
			if tt.status == http.StatusTooManyRequests {
				assert.Equal(t, "2", res.Header.Get("Retry-After"), "the provider's wait is passed on")
			}
			if tt.status == http.StatusUnauthorized || tt.status == http.StatusNotFound || tt.code == "model_not_available" || tt.status == http.StatusBadRequest {
				assert.Equal(t, before, len(fake.Calls()), "refused before any provider call")
			}
		})
	}
}

// TestListModels: the models of the price table whose provider the deployment can call.
func TestListModels(t *testing.T) {
	g := newGateway(t, openAI("http://127.0.0.1:1/v1"))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, g.url+"/v1/models", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+g.api.A.Key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&list))
	assert.Equal(t, "list", list.Object)
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
		assert.Equal(t, "openai", m.OwnedBy, "only the configured provider's models")
	}
	assert.Contains(t, ids, "openai/gpt-4o-mini")
}
