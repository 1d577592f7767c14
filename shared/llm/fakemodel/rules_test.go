package fakemodel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// chat sends an OpenAI request with one system and one user message.
func chat(t *testing.T, url, model, system, user string) response {
	t.Helper()
	body, err := json.Marshal(map[string]any{"model": model, "messages": []map[string]string{
		{"role": "system", "content": system}, {"role": "user", "content": user},
	}})
	require.NoError(t, err)
	return post(t, url, "/v1/chat/completions", openAIHeaders, string(body))
}

func content(t *testing.T, r response) string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	s, _ := dig(r.json(t), "choices", 0, "message", "content").(string)
	return s
}

func TestRulesFirstMatchWins(t *testing.T) {
	_, url := start(t, fakemodel.WithRules(
		fakemodel.Rule{Match: fakemodel.All(fakemodel.ModelIs("gpt-4o"), fakemodel.Contains("refund")), Reply: fakemodel.Reply{Text: "4o refund"}},
		fakemodel.Rule{Match: fakemodel.Contains("refund"), Reply: fakemodel.Reply{Text: "any refund"}},
		fakemodel.Rule{Match: fakemodel.SystemContains("judge"), Reply: fakemodel.Reply{Text: "judged"}},
		fakemodel.Rule{Match: fakemodel.AnyContains("needle"), Reply: fakemodel.Reply{Text: "found"}},
		fakemodel.Rule{Match: fakemodel.APIIs(fakemodel.Anthropic), Reply: fakemodel.Reply{Text: "never for OpenAI"}},
	))
	tests := []struct {
		model, system, user, want string
	}{
		{"gpt-4o", "", "I want a refund", "4o refund"},
		{"gpt-4o-mini", "", "I want a refund", "any refund"},
		{"gpt-4o-mini", "You are a judge", "I want a refund", "any refund"},
		{"gpt-4o-mini", "You are a judge", "hello", "judged"},
		{"gpt-4o-mini", "a needle in the system", "hello", "found"},
	}
	for _, tt := range tests {
		t.Run(tt.want+"/"+tt.model, func(t *testing.T) {
			assert.Equal(t, tt.want, content(t, chat(t, url, tt.model, tt.system, tt.user)))
		})
	}
	assert.Contains(t, content(t, chat(t, url, "gpt-4o", "", "hello")), "Simulated answer", "no rule: the default answer")
}

func TestRuleTimesThenSucceed(t *testing.T) {
	srv, url := start(t, fakemodel.WithRules(
		fakemodel.Rule{Reply: fakemodel.Reply{Status: 429, RetryAfter: 1500 * time.Millisecond}, Times: 2},
		fakemodel.Rule{Match: fakemodel.SchemaIs("verdict"), Reply: fakemodel.Reply{Status: 503}, Times: 1},
	))
	for i := range 2 {
		r := chat(t, url, "gpt-4o", "", "hi")
		require.Equal(t, http.StatusTooManyRequests, r.status, "call %d", i+1)
		assert.Equal(t, "2", r.header.Get("Retry-After"), "whole seconds, rounded up")
		assert.Equal(t, "1500", r.header.Get("retry-after-ms"))
		assert.Equal(t, "requests", dig(r.json(t), "error", "type"))
		assert.Equal(t, "rate_limit_exceeded", dig(r.json(t), "error", "code"))
	}
	assert.NotEmpty(t, content(t, chat(t, url, "gpt-4o", "", "hi")), "the third call succeeds")

	statuses := func() []int {
		var out []int
		for _, c := range srv.Calls() {
			out = append(out, c.Status)
		}
		return out
	}
	assert.Equal(t, []int{429, 429, 200}, statuses())

	srv.Reset()
	assert.Equal(t, 0, srv.Count())
	assert.Equal(t, http.StatusTooManyRequests, chat(t, url, "gpt-4o", "", "hi").status, "Reset restarts the Times counts")

	srv.SetRules(fakemodel.Rule{Reply: fakemodel.Reply{Text: "replaced"}})
	assert.Equal(t, "replaced", content(t, chat(t, url, "gpt-4o", "", "hi")))
}

func TestLatencyEndsWithTheRequest(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithRules(fakemodel.Rule{Reply: fakemodel.Reply{Latency: time.Hour}}))
	served := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r)
		served <- struct{}{}
	}))
	defer ts.Close()

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/messages",
			strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		for k, v := range anthropicHeaders {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	// The call is logged before the wait starts.
	require.Eventually(t, func() bool { return srv.Count() == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
	select {
	case <-served: // the handler stopped waiting
	case <-time.After(10 * time.Second):
		t.Fatal("the handler still waits after the request ended")
	}
}

func TestCallLogConcurrency(t *testing.T) {
	srv, url := start(t, fakemodel.WithRules(fakemodel.Rule{Match: fakemodel.Contains("odd"), Reply: fakemodel.Reply{Status: 500}, Times: 5}))
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			user := fmt.Sprintf("call %d even", i)
			if i%2 == 1 {
				user = fmt.Sprintf("call %d odd", i)
			}
			chat(t, url, "gpt-4o", "", user)
			_ = srv.Calls() // readers race with writers
		})
	}
	wg.Wait()
	calls := srv.Calls()
	require.Len(t, calls, n)
	assert.Equal(t, n, srv.Count())
	failed := 0
	for i, c := range calls {
		assert.Equal(t, i+1, c.Seq)
		if c.Status == 500 {
			failed++
		}
	}
	assert.Equal(t, 5, failed, "Times holds under concurrent calls")
}

func TestParseRules(t *testing.T) {
	rules, err := fakemodel.ParseRules(strings.NewReader(`[
		{"match": {"api": "openai", "contains": "refund"}, "reply": {"text": "No refunds."}},
		{"match": {"schema": "verdict"}, "reply": {"json": {"pass": false, "score": 2}}},
		{"match": {"model": "gpt-4o", "system": "strict"}, "times": 1, "reply": {"status": 429, "retry_after": "3s", "error": "slow"}},
		{"match": {"contains": "cut"}, "reply": {"text": "abcdefgh", "truncate": true, "cached_tokens": 1, "latency": "1ms"}},
		{"match": {"contains": "no"}, "reply": {"refusal": "I won't."}}
	]`))
	require.NoError(t, err)
	_, url := start(t, fakemodel.WithRules(rules...))

	assert.Equal(t, "No refunds.", content(t, chat(t, url, "m", "", "a refund?")))
	structured := post(t, url, "/v1/chat/completions", openAIHeaders,
		`{"model":"m","messages":[{"role":"user","content":"judge"}],"response_format":{"type":"json_schema","json_schema":{"name":"verdict","schema":{}}}}`)
	assert.JSONEq(t, `{"pass": false, "score": 2}`, content(t, structured))
	limited := chat(t, url, "gpt-4o", "be strict", "hello")
	assert.Equal(t, 429, limited.status)
	assert.Equal(t, "3", limited.header.Get("Retry-After"))
	assert.Equal(t, "slow", dig(limited.json(t), "error", "message"))
	assert.NotEmpty(t, content(t, chat(t, url, "gpt-4o", "be strict", "hello")), "times: 1")
	assert.Equal(t, "abcd", content(t, chat(t, url, "m", "", "cut")))
	assert.Equal(t, "I won't.", dig(chat(t, url, "m", "", "no").json(t), "choices", 0, "message", "refusal"))

	bad := []struct{ name, rules, want string }{
		{"unknown field", `[{"match": {"text": "x"}}]`, "unknown field"},
		{"bad duration", `[{"reply": {"latency": "soon"}}]`, "reply.latency"},
		{"bad status", `[{"reply": {"status": 200}}]`, "reply.status"},
		{"bad api", `[{"match": {"api": "gemini"}}]`, "match.api"},
		{"not a list", `{"rules": []}`, "decode rules"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fakemodel.ParseRules(strings.NewReader(tt.rules))
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestCallLogEndpoint(t *testing.T) {
	_, url := start(t)
	chat(t, url, "gpt-4o", "sys", "first")
	resp, err := http.Get(url + "/fakemodel/calls")
	require.NoError(t, err)
	defer resp.Body.Close()
	var log struct {
		Count int `json:"count"`
		Calls []struct {
			Seq      int    `json:"seq"`
			API      string `json:"api"`
			Status   int    `json:"status"`
			LastUser string `json:"last_user"`
		} `json:"calls"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&log))
	assert.Equal(t, 1, log.Count)
	require.Len(t, log.Calls, 1)
	assert.Equal(t, "first", log.Calls[0].LastUser)
	assert.Equal(t, 200, log.Calls[0].Status)

	req, _ := http.NewRequest(http.MethodDelete, url+"/fakemodel/calls", nil)
	del, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	del.Body.Close()
	assert.Equal(t, http.StatusNoContent, del.StatusCode)
	resp2, err := http.Get(url + "/fakemodel/calls")
	require.NoError(t, err)
	defer resp2.Body.Close()
	require.NoError(t, json.NewDecoder(resp2.Body).Decode(&log))
	assert.Equal(t, 0, log.Count)
}
