package fakemodel_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/fakemodel"
)

func TestAnthropicMessage(t *testing.T) {
	srv, url := start(t)
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,"temperature":0,
		"system":[{"type":"text","text":"You are a judge."}],
		"messages":[{"role":"user","content":[
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
			{"type":"text","text":"Describe it."}]}]}`
	resp := post(t, url, "/v1/messages", anthropicHeaders, body)
	require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
	v := resp.json(t)
	assert.Regexp(t, `^msg_[0-9a-f]{8}0001$`, v["id"])
	assert.Equal(t, "message", v["type"])
	assert.Equal(t, "assistant", v["role"])
	assert.Equal(t, "claude-sonnet-4-5", v["model"])
	assert.Equal(t, "end_turn", v["stop_reason"])
	assert.Contains(t, v, "stop_sequence")
	assert.Equal(t, "text", dig(v, "content", 0, "type"))
	text := dig(v, "content", 0, "text").(string)
	assert.Contains(t, text, "Simulated answer from claude-sonnet-4-5")

	c := srv.Calls()[0]
	assert.Equal(t, fakemodel.Anthropic, c.API)
	assert.Equal(t, "You are a judge.", c.System)
	assert.Equal(t, "Describe it.", c.LastUser())
	assert.Equal(t, 1, c.Messages[0].Images)
	assert.Equal(t, 1024, c.MaxTokens)
	assert.Equal(t, "2023-06-01", c.Header.Get("anthropic-version"))
	want := fakemodel.Tokens("You are a judge.") + fakemodel.Tokens("Describe it.") + 85
	assert.EqualValues(t, want, dig(v, "usage", "input_tokens"))
	assert.EqualValues(t, fakemodel.Tokens(text), dig(v, "usage", "output_tokens"))
	assert.EqualValues(t, 0, dig(v, "usage", "cache_read_input_tokens"))
}

func TestAnthropicStructuredOutput(t *testing.T) {
	_, url := start(t)
	tools := `"tools":[{"name":"record_verdict","description":"Record the verdict.","input_schema":` + verdictSchema + `}]`
	tests := []struct {
		name  string
		extra string
		tool  bool
	}{
		{name: "forced tool", extra: tools + `,"tool_choice":{"type":"tool","name":"record_verdict"}`, tool: true},
		{name: "any tool", extra: tools + `,"tool_choice":{"type":"any"}`, tool: true},
		{name: "output_config", extra: `"output_config":{"format":{"type":"json_schema","schema":` + verdictSchema + `}}`},
		{name: "output_format beta", extra: `"output_format":{"type":"json_schema","schema":` + verdictSchema + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, url, "/v1/messages", anthropicHeaders,
				`{"model":"claude-haiku-4-5","max_tokens":512,"messages":[{"role":"user","content":"Judge it."}],`+tt.extra+`}`)
			require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
			v := resp.json(t)
			var got []byte
			if tt.tool {
				assert.Equal(t, "tool_use", v["stop_reason"])
				assert.Equal(t, "tool_use", dig(v, "content", 0, "type"))
				assert.Equal(t, "record_verdict", dig(v, "content", 0, "name"))
				assert.Regexp(t, `^toolu_`, dig(v, "content", 0, "id"))
				got, _ = json.Marshal(dig(v, "content", 0, "input"))
			} else {
				assert.Equal(t, "end_turn", v["stop_reason"])
				got = []byte(dig(v, "content", 0, "text").(string))
			}
			assert.NoError(t, validate(t, json.RawMessage(verdictSchema), got))
		})
	}
}

func TestAnthropicReplies(t *testing.T) {
	_, url := start(t, fakemodel.WithRules(
		fakemodel.Rule{Match: fakemodel.Contains("forbidden"), Reply: fakemodel.Reply{Refusal: "No."}},
		fakemodel.Rule{Match: fakemodel.Contains("ramble"), Reply: fakemodel.Reply{Text: strings.Repeat("abcd", 10), Truncate: true}},
		fakemodel.Rule{Match: fakemodel.Contains("cache"), Reply: fakemodel.Reply{Text: "ok", CachedTokens: 4}},
		fakemodel.Rule{Match: fakemodel.Contains("busy"), Reply: fakemodel.Reply{Status: 529}},
		fakemodel.Rule{Match: fakemodel.Contains("tool"), Reply: fakemodel.Reply{JSON: json.RawMessage(`{"pass":false}`)}},
	))
	ask := func(user, extra string) response {
		return post(t, url, "/v1/messages", anthropicHeaders,
			`{"model":"claude-haiku-4-5","max_tokens":100,"messages":[{"role":"user","content":"`+user+`"}]`+extra+`}`)
	}
	refusal := ask("something forbidden", "").json(t)
	assert.Equal(t, "refusal", refusal["stop_reason"])
	assert.Equal(t, "No.", dig(refusal, "content", 0, "text"))

	cut := ask("ramble", "").json(t)
	assert.Equal(t, "max_tokens", cut["stop_reason"])
	assert.Equal(t, strings.Repeat("abcd", 5), dig(cut, "content", 0, "text"))

	limited := post(t, url, "/v1/messages", anthropicHeaders,
		`{"model":"claude-haiku-4-5","max_tokens":1,"messages":[{"role":"user","content":"hello"}]}`).json(t)
	assert.Equal(t, "max_tokens", limited["stop_reason"])
	assert.Equal(t, "Simu", dig(limited, "content", 0, "text"))

	cached := ask("please cache this long prompt", "").json(t)
	assert.EqualValues(t, 4, dig(cached, "usage", "cache_read_input_tokens"))
	assert.EqualValues(t, fakemodel.Tokens("please cache this long prompt")-4, dig(cached, "usage", "input_tokens"),
		"Anthropic's input_tokens leave out cache reads")

	busy := ask("busy", "")
	assert.Equal(t, 529, busy.status)
	assert.Equal(t, "overloaded_error", dig(busy.json(t), "error", "type"))

	tool := ask("use the tool", `,"tools":[{"name":"verdict","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"verdict"}`).json(t)
	assert.Equal(t, map[string]any{"pass": false}, dig(tool, "content", 0, "input"), "Reply.JSON is the tool input")
}

func TestAnthropicStream(t *testing.T) {
	_, url := start(t)
	req := `{"model":"claude-haiku-4-5","max_tokens":100,"messages":[{"role":"user","content":"stream please"}]`
	whole := post(t, url, "/v1/messages", anthropicHeaders, req+`}`).json(t)

	resp := post(t, url, "/v1/messages", anthropicHeaders, req+`,"stream":true}`)
	require.Equal(t, http.StatusOK, resp.status)
	assert.Equal(t, "text/event-stream", resp.header.Get("Content-Type"))
	evs := events(t, resp.body)
	var names []string
	var text strings.Builder
	for _, ev := range evs {
		var data map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev.data), &data))
		assert.Equal(t, ev.event, data["type"], "each event names its data's type")
		if len(names) == 0 || names[len(names)-1] != ev.event {
			names = append(names, ev.event)
		}
		switch ev.event {
		case "content_block_delta":
			assert.Equal(t, "text_delta", dig(data, "delta", "type"))
			text.WriteString(dig(data, "delta", "text").(string))
		case "message_delta":
			assert.Equal(t, "end_turn", dig(data, "delta", "stop_reason"))
			assert.Equal(t, dig(whole, "usage", "output_tokens"), dig(data, "usage", "output_tokens"))
		}
	}
	assert.Equal(t, []string{"message_start", "content_block_start", "ping", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}, names)
	assert.Equal(t, dig(whole, "content", 0, "text"), text.String())
}

func TestAnthropicRejects(t *testing.T) {
	valid := `{"model":"claude-haiku-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name      string
		headers   map[string]string
		body      string
		opts      []fakemodel.Option
		status    int
		wantType  string
		wantInMsg string
	}{
		{name: "no key", headers: map[string]string{"anthropic-version": "2023-06-01"}, body: valid, status: 401,
			wantType: "authentication_error", wantInMsg: "x-api-key"},
		{name: "bearer is not x-api-key", headers: map[string]string{"anthropic-version": "2023-06-01", "Authorization": "Bearer " + testKey},
			body: valid, status: 401, wantType: "authentication_error"},
		{name: "wrong key", headers: map[string]string{"x-api-key": "sk-other", "anthropic-version": "2023-06-01"},
			opts: []fakemodel.Option{fakemodel.WithAPIKey(testKey)}, body: valid, status: 401, wantType: "authentication_error"},
		{name: "no version", headers: map[string]string{"x-api-key": testKey}, body: valid, status: 400,
			wantType: "invalid_request_error", wantInMsg: "anthropic-version"},
		{name: "no max_tokens", body: `{"model":"claude-haiku-4-5","messages":[{"role":"user","content":"hi"}]}`, status: 400,
			wantType: "invalid_request_error", wantInMsg: "max_tokens: Field required"},
		{name: "no model", body: `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, status: 400, wantInMsg: "model"},
		{name: "system role", body: `{"model":"m","max_tokens":10,"messages":[{"role":"system","content":"hi"}]}`, status: 400, wantInMsg: "role"},
		{name: "temperature", body: `{"model":"m","max_tokens":10,"temperature":1.5,"messages":[{"role":"user","content":"hi"}]}`, status: 400, wantInMsg: "temperature"},
		{name: "image media type", body: `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"AAAA"}}]}]}`,
			status: 400, wantInMsg: "media_type"},
		{name: "image data", body: `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"not base64!"}}]}]}`,
			status: 400, wantInMsg: "base64"},
		{name: "unknown tool", body: `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"tool","name":"x"}}`,
			status: 400, wantInMsg: "'x'"},
		{name: "unknown model", opts: []fakemodel.Option{fakemodel.WithModels("claude-opus-4-1")}, body: valid, status: 404, wantType: "not_found_error"},
		{name: "rate limited", opts: []fakemodel.Option{fakemodel.WithRules(fakemodel.Rule{Reply: fakemodel.Reply{Status: 429, ErrorMessage: "slow down"}})},
			body: valid, status: 429, wantType: "rate_limit_error", wantInMsg: "slow down"},
		{name: "server error", opts: []fakemodel.Option{fakemodel.WithRules(fakemodel.Rule{Reply: fakemodel.Reply{Status: 500}})},
			body: valid, status: 500, wantType: "api_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := start(t, tt.opts...)
			headers := tt.headers
			if headers == nil {
				headers = anthropicHeaders
			}
			resp := post(t, url, "/v1/messages", headers, tt.body)
			assert.Equal(t, tt.status, resp.status, "%s", resp.body)
			v := resp.json(t)
			assert.Equal(t, "error", v["type"])
			if tt.wantType != "" {
				assert.Equal(t, tt.wantType, dig(v, "error", "type"))
			}
			assert.Contains(t, dig(v, "error", "message"), tt.wantInMsg)
			assert.Equal(t, 1, srv.Count())
		})
	}
}
