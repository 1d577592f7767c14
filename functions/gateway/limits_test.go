package gateway_test

import (
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
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/ratelimit"
	"github.com/plumehq/plume/shared/trace"
)

// limitedGateway serves the gateway with limits cfg, counted in the API's table, on a clock
// stopped in the middle of a UTC minute, so that every request of a test falls in one window.
func limitedGateway(t *testing.T, a *apitest.API, base string, cfg ratelimit.Config) string {
	t.Helper()
	models := llm.New(openAI(base), llm.Options{BaseDelay: time.Millisecond})
	now := func() time.Time { return time.Date(2026, 11, 26, 12, 30, 30, 0, time.UTC) }
	h := gateway.NewHandler(gateway.Deps{
		Models: func(context.Context) (*llm.Client, error) { return models, nil },
		Prices: pricing.Default(),
		Pricer: a.Env.Pricer(),
		Limits: ratelimit.New(ddb.NewRateLimitStore(a.Table), cfg, now),
		Authn:  a.Env.Authn(),
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// call posts a chat completion with key and the headers h, and returns the answer, read
// whole.
func call(t *testing.T, url, key string, body map[string]any, h ...http.Header) (*http.Response, []byte) {
	t.Helper()
	g := &gatewayStack{url: url}
	res := g.post(t, key, body, h...)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, b
}

func plain(user string) map[string]any {
	return map[string]any{"model": "openai/gpt-4o-mini", "messages": messages("You are terse.", user)}
}

// TestRequestsPerMinute: the 61st request of a project limited to 60 a minute is refused with
// 429, Retry-After and OpenAI's error shape, and never reaches the provider; another project
// is not affected.
func TestRequestsPerMinute(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(providerKey))
	url := limitedGateway(t, a, fake.OpenAIBaseURL(), ratelimit.Config{RequestsPerMinute: 60})

	for i := range 60 {
		res, body := call(t, url, a.A.Key, plain("hi"))
		require.Equal(t, http.StatusOK, res.StatusCode, "request %d: %s", i+1, body)
	}
	res, body := call(t, url, a.A.Key, plain("hi"))
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, "%s", body)
	assert.Equal(t, "30", res.Header.Get("Retry-After"), "the rest of the minute")
	e := openAIErrorOf(t, body)
	assert.Equal(t, "rate_limit_error", e.Type)
	assert.Equal(t, "rate_limit_exceeded", e.Code)
	assert.Contains(t, e.Message, "60 requests per minute")
	assert.Len(t, fake.Calls(), 60, "the refused request never reaches the provider")

	res, body = call(t, url, a.B.Key, plain("hi"))
	assert.Equal(t, http.StatusOK, res.StatusCode, "another project has its own count: %s", body)
}

// TestSpendCap: once a project's calls of the day cost the cap, its next call is refused; the
// cost is the price table's for the tokens the provider reported.
func TestSpendCap(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(providerKey))

	// One call's cost, as the gateway prices it: every call below is the same request.
	res, body := call(t, limitedGateway(t, a, fake.OpenAIBaseURL(), ratelimit.Config{}), a.A.Key, plain("what is the time?"))
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	var answer chatAnswer
	require.NoError(t, json.Unmarshal(body, &answer))
	cost, _, ok, err := a.Env.Pricer().Cost(t.Context(), a.A.ProjectID, trace.LLMUsage{Provider: "openai", Model: "gpt-4o-mini",
		InputTokens: int64(answer.Usage.PromptTokens), OutputTokens: int64(answer.Usage.CompletionTokens)})
	require.NoError(t, err)
	require.True(t, ok, "gpt-4o-mini is in the price table")
	require.Positive(t, cost)

	// A cap of two and a half calls: the third call is admitted (two cost less than the cap)
	// and reaches it; the fourth is refused.
	url := limitedGateway(t, a, fake.OpenAIBaseURL(), ratelimit.Config{DailyUSD: 2.5 * cost})
	for i := range 3 {
		res, body := call(t, url, a.A.Key, plain("what is the time?"))
		require.Equal(t, http.StatusOK, res.StatusCode, "call %d: %s", i+1, body)
	}
	res, body = call(t, url, a.A.Key, plain("what is the time?"))
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, "%s", body)
	e := openAIErrorOf(t, body)
	assert.Equal(t, "daily_spend_cap_reached", e.Code)
	assert.Equal(t, "41370", res.Header.Get("Retry-After"), "until midnight UTC")
	assert.Len(t, fake.Calls(), 4, "the calibration call and three admitted ones")
}

// TestTokensOfAStreamAreCounted: a streamed call whose client did not ask for usage is counted
// all the same (the gateway asks the provider for the usage chunk and does not pass it on).
func TestTokensOfAStreamAreCounted(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(providerKey))
	url := limitedGateway(t, a, fake.OpenAIBaseURL(), ratelimit.Config{TokensPerMinute: 1})

	stream := plain("stream it")
	stream["stream"] = true
	res, body := call(t, url, a.A.Key, stream)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	assert.NotContains(t, string(body), `"usage":{`, "the client did not ask for the usage chunk")
	assert.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n"), "the stream ends as the provider's did: %q", body)
	calls := fake.Calls()
	require.Len(t, calls, 1)
	assert.Contains(t, string(calls[0].Body), `"include_usage":true`, "the provider is asked for the usage chunk")

	res, body = call(t, url, a.A.Key, plain("again"))
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, "the stream's tokens reached the limit: %s", body)
	assert.Equal(t, "rate_limit_exceeded", openAIErrorOf(t, body).Code)
	assert.Contains(t, openAIErrorOf(t, body).Message, "tokens per minute")
}

// openAIErrorOf decodes an OpenAI error body.
func openAIErrorOf(t *testing.T, body []byte) struct{ Message, Type, Code string } {
	t.Helper()
	var e struct {
		Error struct{ Message, Type, Code string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e), "body: %s", body)
	return e.Error
}

// header is a header of one field; an empty value is no field.
func header(name, value string) http.Header {
	h := http.Header{}
	if value != "" {
		h.Set(name, value)
	}
	return h
}
