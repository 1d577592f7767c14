package fakemodel_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/fakemodel"
)

var fixedClock = fakemodel.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) })

// start serves a fakemodel.Server for the test.
func start(t *testing.T, opts ...fakemodel.Option) (*fakemodel.Server, string) {
	t.Helper()
	srv := fakemodel.New(append([]fakemodel.Option{fixedClock}, opts...)...)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return srv, ts.URL
}

func TestOpenAIChatCompletion(t *testing.T) {
	srv, url := start(t)
	body := `{"model":"gpt-4o-mini","temperature":0.2,"messages":[
		{"role":"system","content":"You are terse."},
		{"role":"user","content":[{"type":"text","text":"What is in this image?"},
			{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}}]}]}`
	first := post(t, url, "/v1/chat/completions", openAIHeaders, body)
	require.Equal(t, http.StatusOK, first.status, "%s", first.body)
	assert.Equal(t, "application/json", first.header.Get("Content-Type"))
	v := first.json(t)
	assert.Regexp(t, `^chatcmpl-[0-9a-f]{8}0001$`, v["id"])
	assert.Equal(t, "chat.completion", v["object"])
	assert.EqualValues(t, 1_700_000_000, v["created"])
	assert.Equal(t, "gpt-4o-mini", v["model"])
	assert.Equal(t, "assistant", dig(v, "choices", 0, "message", "role"))
	assert.Nil(t, dig(v, "choices", 0, "message", "refusal"))
	assert.Contains(t, v["choices"].([]any)[0].(map[string]any)["message"], "refusal") // present, null
	assert.Equal(t, "stop", dig(v, "choices", 0, "finish_reason"))
	content := dig(v, "choices", 0, "message", "content").(string)
	assert.Contains(t, content, "Simulated answer from gpt-4o-mini")

	calls := srv.Calls()
	require.Len(t, calls, 1)
	c := calls[0]
	assert.Equal(t, fakemodel.OpenAI, c.API)
	assert.Equal(t, "/v1/chat/completions", c.Path)
	assert.Equal(t, "You are terse.", c.System)
	assert.Equal(t, "What is in this image?", c.LastUser())
	assert.Equal(t, 1, c.Messages[1].Images)
	assert.InDelta(t, 0.2, *c.Temperature, 1e-9)
	assert.Equal(t, "Bearer "+testKey, c.Header.Get("Authorization"))
	assert.JSONEq(t, body, string(c.Body))

	// Usage is the fake tokenizer's count: cost follows from the text alone.
	wantPrompt := fakemodel.Tokens("You are terse.") + fakemodel.Tokens("What is in this image?") + 85
	assert.Equal(t, wantPrompt, c.PromptTokens())
	assert.EqualValues(t, wantPrompt, dig(v, "usage", "prompt_tokens"))
	assert.EqualValues(t, fakemodel.Tokens(content), dig(v, "usage", "completion_tokens"))
	assert.EqualValues(t, wantPrompt+fakemodel.Tokens(content), dig(v, "usage", "total_tokens"))
	assert.EqualValues(t, 0, dig(v, "usage", "prompt_tokens_details", "cached_tokens"))

	again := post(t, url, "/chat/completions", openAIHeaders, body).json(t)
	assert.Equal(t, content, dig(again, "choices", 0, "message", "content"), "the same request gets the same answer")
	other := post(t, url, "/v1/chat/completions", openAIHeaders, strings.Replace(body, "terse", "verbose", 1)).json(t)
	assert.NotEqual(t, content, dig(other, "choices", 0, "message", "content"))
	assert.Equal(t, 3, srv.Count())
}

func TestOpenAIStructuredOutput(t *testing.T) {
	_, url := start(t)
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"Judge this answer."}],
		"response_format":{"type":"json_schema","json_schema":{"name":"verdict","strict":true,"schema":` + verdictSchema + `}}}`
	v := post(t, url, "/v1/chat/completions", openAIHeaders, body).json(t)
	content := dig(v, "choices", 0, "message", "content").(string)
	assert.NoError(t, validate(t, json.RawMessage(verdictSchema), json.RawMessage(content)))

	object := post(t, url, "/v1/chat/completions", openAIHeaders,
		`{"model":"gpt-4o","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"Answer in JSON."}]}`).json(t)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(dig(object, "choices", 0, "message", "content").(string)), &m))
	assert.NotEmpty(t, m["answer"])
}

func TestOpenAIToolChoice(t *testing.T) {
	_, url := start(t)
	tools := `"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}},
		{"type":"function","function":{"name":"record_verdict","strict":true,"parameters":` + verdictSchema + `}}]`
	tests := []struct {
		name       string
		choice     string
		wantName   string
		wantFinish string
	}{
		{name: "named function", choice: `{"type":"function","function":{"name":"record_verdict"}}`, wantName: "record_verdict", wantFinish: "stop"},
		{name: "required", choice: `"required"`, wantName: "lookup", wantFinish: "tool_calls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := post(t, url, "/v1/chat/completions", openAIHeaders,
				`{"model":"gpt-4o","messages":[{"role":"user","content":"go"}],`+tools+`,"tool_choice":`+tt.choice+`}`).json(t)
			msg := dig(v, "choices", 0, "message")
			assert.Nil(t, dig(msg, "content"))
			assert.Equal(t, tt.wantFinish, dig(v, "choices", 0, "finish_reason"))
			assert.Equal(t, tt.wantName, dig(msg, "tool_calls", 0, "function", "name"))
			assert.Equal(t, "function", dig(msg, "tool_calls", 0, "type"))
			assert.Regexp(t, `^call_`, dig(msg, "tool_calls", 0, "id"))
			var params json.RawMessage
			if tt.wantName == "record_verdict" {
				params = json.RawMessage(verdictSchema)
			} else {
				params = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
			}
			assert.NoError(t, validate(t, params, json.RawMessage(dig(msg, "tool_calls", 0, "function", "arguments").(string))))
		})
	}
}

func TestOpenAIRefusalAndTruncation(t *testing.T) {
	_, url := start(t, fakemodel.WithRules(
		fakemodel.Rule{Match: fakemodel.Contains("forbidden"), Reply: fakemodel.Reply{Refusal: "I can't help with that."}},
		fakemodel.Rule{Match: fakemodel.Contains("ramble"), Reply: fakemodel.Reply{Text: strings.Repeat("word ", 40), Truncate: true}},
		fakemodel.Rule{Match: fakemodel.Contains("cache"), Reply: fakemodel.Reply{Text: "ok", CachedTokens: 3}},
	))
	ask := func(user, extra string) map[string]any {
		return post(t, url, "/v1/chat/completions", openAIHeaders,
			`{"model":"gpt-4o","messages":[{"role":"user","content":"`+user+`"}]`+extra+`}`).json(t)
	}

	refusal := ask("something forbidden", "")
	assert.Nil(t, dig(refusal, "choices", 0, "message", "content"))
	assert.Equal(t, "I can't help with that.", dig(refusal, "choices", 0, "message", "refusal"))
	assert.Equal(t, "stop", dig(refusal, "choices", 0, "finish_reason"))

	cut := ask("ramble on", "")
	assert.Equal(t, "length", dig(cut, "choices", 0, "finish_reason"))
	assert.Equal(t, strings.Repeat("word ", 20), dig(cut, "choices", 0, "message", "content"))

	limited := ask("hello", `,"max_completion_tokens":2`)
	assert.Equal(t, "length", dig(limited, "choices", 0, "finish_reason"))
	assert.Equal(t, "Simulate", dig(limited, "choices", 0, "message", "content"), "2 tokens are 8 bytes")
	assert.EqualValues(t, 2, dig(limited, "usage", "completion_tokens"))

	cached := ask("please cache this long prompt", "")
	assert.EqualValues(t, 3, dig(cached, "usage", "prompt_tokens_details", "cached_tokens"))
	assert.EqualValues(t, fakemodel.Tokens("please cache this long prompt"), dig(cached, "usage", "prompt_tokens"), "OpenAI counts cached tokens in the prompt")
}

func TestOpenAIStream(t *testing.T) {
	_, url := start(t)
	req := `{"model":"gpt-4o","messages":[{"role":"user","content":"stream please"}]`
	whole := post(t, url, "/v1/chat/completions", openAIHeaders, req+`}`).json(t)
	want := dig(whole, "choices", 0, "message", "content").(string)

	resp := post(t, url, "/v1/chat/completions", openAIHeaders, req+`,"stream":true,"stream_options":{"include_usage":true}}`)
	require.Equal(t, http.StatusOK, resp.status)
	assert.Equal(t, "text/event-stream", resp.header.Get("Content-Type"))
	evs := events(t, resp.body)
	require.GreaterOrEqual(t, len(evs), 5)
	assert.Equal(t, "[DONE]", evs[len(evs)-1].data)

	var text strings.Builder
	var finishes []string
	var usage map[string]any
	for i, ev := range evs[:len(evs)-1] {
		var chunk map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev.data), &chunk), ev.data)
		assert.Equal(t, "chat.completion.chunk", chunk["object"])
		if i == 0 {
			assert.Equal(t, "assistant", dig(chunk, "choices", 0, "delta", "role"))
		}
		if u, ok := chunk["usage"].(map[string]any); ok {
			usage = u
			assert.Empty(t, chunk["choices"], "the usage chunk has no choices")
			continue
		}
		if s, ok := dig(chunk, "choices", 0, "delta", "content").(string); ok {
			text.WriteString(s)
		}
		if f, ok := dig(chunk, "choices", 0, "finish_reason").(string); ok {
			finishes = append(finishes, f)
		}
	}
	assert.Equal(t, want, text.String())
	assert.Equal(t, []string{"stop"}, finishes)
	require.NotNil(t, usage, "include_usage adds a usage chunk")
	assert.Equal(t, dig(whole, "usage", "total_tokens"), usage["total_tokens"])
}

func TestOpenAIRejects(t *testing.T) {
	tests := []struct {
		name      string
		headers   map[string]string
		body      string
		opts      []fakemodel.Option
		status    int
		wantType  string
		wantCode  any
		wantInMsg string
	}{
		{name: "no key", headers: map[string]string{}, body: `{}`, status: 401, wantType: "invalid_request_error", wantCode: "invalid_api_key"},
		{name: "wrong key", headers: map[string]string{"Authorization": "Bearer sk-other"}, opts: []fakemodel.Option{fakemodel.WithAPIKey(testKey)},
			body: `{}`, status: 401, wantType: "invalid_request_error", wantCode: "invalid_api_key"},
		{name: "not JSON", body: `{"model":`, status: 400, wantType: "invalid_request_error", wantInMsg: "parse the JSON body"},
		{name: "no model", body: `{"messages":[{"role":"user","content":"hi"}]}`, status: 400, wantType: "invalid_request_error", wantInMsg: "model"},
		{name: "no messages", body: `{"model":"gpt-4o","messages":[]}`, status: 400, wantInMsg: "too short"},
		{name: "bad role", body: `{"model":"gpt-4o","messages":[{"role":"robot","content":"hi"}]}`, status: 400, wantInMsg: "robot"},
		{name: "temperature", body: `{"model":"gpt-4o","temperature":2.5,"messages":[{"role":"user","content":"hi"}]}`, status: 400, wantInMsg: "temperature"},
		{name: "json_object without json", body: `{"model":"gpt-4o","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"hi"}]}`,
			status: 400, wantInMsg: "json"},
		{name: "json_schema without name", body: `{"model":"gpt-4o","response_format":{"type":"json_schema","json_schema":{"schema":{}}},"messages":[{"role":"user","content":"hi"}]}`,
			status: 400, wantInMsg: "json_schema.name"},
		{name: "broken data URL", body: `{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,!!"}}]}]}`,
			status: 400, wantInMsg: "image"},
		{name: "unknown tool", body: `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"function","function":{"name":"nope"}}}`,
			status: 400, wantInMsg: "nope"},
		{name: "stream_options without stream", body: `{"model":"gpt-4o","stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
			status: 400, wantInMsg: "stream_options"},
		{name: "unknown model", opts: []fakemodel.Option{fakemodel.WithModels("gpt-4o")},
			body: `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`, status: 404, wantCode: "model_not_found"},
		{name: "rule error", opts: []fakemodel.Option{fakemodel.WithRules(fakemodel.Rule{Reply: fakemodel.Reply{Status: 500}})},
			body: `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, status: 500, wantType: "server_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := start(t, tt.opts...)
			headers := tt.headers
			if headers == nil {
				headers = openAIHeaders
			}
			resp := post(t, url, "/v1/chat/completions", headers, tt.body)
			assert.Equal(t, tt.status, resp.status, "%s", resp.body)
			v := resp.json(t)
			if tt.wantType != "" {
				assert.Equal(t, tt.wantType, dig(v, "error", "type"))
			}
			if tt.wantCode != nil {
				assert.Equal(t, tt.wantCode, dig(v, "error", "code"))
			}
			assert.Contains(t, dig(v, "error", "message"), tt.wantInMsg)
			assert.Contains(t, v["error"], "param")
			require.Equal(t, 1, srv.Count(), "refused calls are logged too")
			assert.Equal(t, tt.status, srv.Calls()[0].Status)
		})
	}
}

func TestModels(t *testing.T) {
	_, url := start(t, fakemodel.WithModels("gpt-4o", "claude-sonnet-4-5"))
	get := func(headers map[string]string) (int, map[string]any) {
		req, err := http.NewRequest(http.MethodGet, url+"/v1/models", nil)
		require.NoError(t, err)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var v map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
		return resp.StatusCode, v
	}
	status, openai := get(openAIHeaders)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "list", openai["object"])
	assert.Equal(t, "gpt-4o", dig(openai, "data", 0, "id"))
	assert.Equal(t, "model", dig(openai, "data", 0, "object"))

	status, anthropic := get(anthropicHeaders)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "claude-sonnet-4-5", anthropic["last_id"])
	assert.Equal(t, "model", dig(anthropic, "data", 1, "type"))

	status, _ = get(nil)
	assert.Equal(t, http.StatusUnauthorized, status)
}

func TestUnknownPath(t *testing.T) {
	_, url := start(t)
	resp := post(t, url, "/v1/completions", openAIHeaders, `{}`)
	assert.Equal(t, http.StatusNotFound, resp.status)
	assert.Equal(t, "unknown_url", dig(resp.json(t), "error", "code"))
	resp = post(t, url, "/v1/messages/batches", anthropicHeaders, `{}`)
	assert.Equal(t, http.StatusNotFound, resp.status)
	assert.Equal(t, "error", resp.json(t)["type"])
}
