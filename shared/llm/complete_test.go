package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/pricetable"
	"github.com/plumehq/plume/shared/pricing"
)

func ask(model string, schema *llm.Schema) llm.Request {
	return llm.Request{Model: model, Schema: schema, Messages: []llm.Message{{Role: "user", Text: "Capital of France?"}}}
}

// TestAnswers checks how recorded answers of each provider are read.
func TestAnswers(t *testing.T) {
	tests := []struct {
		name    string
		req     llm.Request
		reply   string
		want    llm.Response // Attempts is always 1
		wantErr error
	}{
		{
			name: "openai text", req: ask("gpt-4o-mini", nil), reply: "openai_text.json",
			want: llm.Response{Text: "Paris.", Model: "gpt-4o-mini-2024-07-18", StopReason: "stop",
				Usage: llm.Usage{InputTokens: 1200, OutputTokens: 3, CachedInputTokens: 1024}},
		},
		{
			name: "openai json schema", req: ask("gpt-4o-mini", verdictSchema), reply: "openai_json.json",
			want: llm.Response{Text: `{"score": 4, "label": "good", "reason": "Accurate and brief."}`,
				JSON:  json.RawMessage(`{"score":4,"label":"good","reason":"Accurate and brief."}`),
				Model: "gpt-4o-mini-2024-07-18", StopReason: "stop", Usage: llm.Usage{InputTokens: 210, OutputTokens: 18}},
		},
		{
			name: "openai refusal", req: ask("gpt-4o", verdictSchema), reply: "openai_refusal.json",
			want: llm.Response{Usage: llm.Usage{InputTokens: 80, OutputTokens: 11}}, wantErr: llm.ErrRefused,
		},
		{
			name: "openai truncated", req: ask("gpt-4o-mini", verdictSchema), reply: "openai_length.json",
			want: llm.Response{Usage: llm.Usage{InputTokens: 210, OutputTokens: 8}}, wantErr: llm.ErrTruncated,
		},
		{
			name: "anthropic text with cache", req: ask("claude-3-5-haiku-20241022", nil), reply: "anthropic_text.json",
			want: llm.Response{Text: "Paris.", Model: "claude-3-5-haiku-20241022", StopReason: "end_turn",
				Usage: llm.Usage{InputTokens: 2112, OutputTokens: 4, CachedInputTokens: 2000, CacheWriteTokens: 100}},
		},
		{
			name: "anthropic tool_use", req: ask("claude-3-5-haiku-20241022", verdictSchema), reply: "anthropic_tool_use.json",
			want: llm.Response{Text: `{"score":4,"label":"good","reason":"Accurate and brief."}`,
				JSON:  json.RawMessage(`{"score":4,"label":"good","reason":"Accurate and brief."}`),
				Model: "claude-3-5-haiku-20241022", StopReason: "tool_use", Usage: llm.Usage{InputTokens: 420, OutputTokens: 61}},
		},
		{
			name: "anthropic refusal", req: ask("claude-sonnet-4-5", nil), reply: "anthropic_refusal.json",
			want: llm.Response{Usage: llm.Usage{InputTokens: 30, OutputTokens: 9}}, wantErr: llm.ErrRefused,
		},
		{
			name: "anthropic max_tokens", req: ask("claude-3-5-haiku-20241022", nil), reply: "anthropic_max_tokens.json",
			want: llm.Response{Usage: llm.Usage{InputTokens: 12, OutputTokens: 5}}, wantErr: llm.ErrTruncated,
		},
		{
			name: "bedrock toolUse", req: ask("amazon.nova-lite-v1:0", verdictSchema), reply: "bedrock_tool_use.json",
			want: llm.Response{Text: `{"score":4,"label":"good","reason":"Accurate and brief."}`,
				JSON:  json.RawMessage(`{"score":4,"label":"good","reason":"Accurate and brief."}`),
				Model: "amazon.nova-lite-v1:0", StopReason: "tool_use", Usage: llm.Usage{InputTokens: 410, OutputTokens: 58}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, reply{file: tt.reply})
			got, err := p.client().Complete(context.Background(), tt.req)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				var e *llm.Error
				require.ErrorAs(t, err, &e)
				assert.False(t, e.Retryable)
				assert.Equal(t, tt.want.Usage, got.Usage, "a failed answer is still billed")
				assert.Equal(t, 1, got.Attempts)
				return
			}
			require.NoError(t, err)
			got.Duration = 0
			tt.want.Attempts = 1
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestRetries checks which failures are retried, how long the client waits (recorded, never
// timed) and how many attempts it makes.
func TestRetries(t *testing.T) {
	retryDate := testNow.Add(7 * time.Second).Format(http.TimeFormat)
	tests := []struct {
		name         string
		model        string
		replies      []reply
		wantErr      error
		wantAttempts int
		wantWaits    []time.Duration // nil: not checked (jittered)
		wantWaitsN   int
	}{
		{
			name:  "429 with Retry-After seconds, then success",
			model: "gpt-4o-mini",
			replies: []reply{
				{status: 429, header: map[string]string{"Retry-After": "2"}, file: "openai_429.json"},
				{status: 429, header: map[string]string{"Retry-After": "3"}, file: "openai_429.json"},
				{file: "openai_text.json"},
			},
			wantAttempts: 3, wantWaits: []time.Duration{2 * time.Second, 3 * time.Second}, wantWaitsN: 2,
		},
		{
			name:  "429 with Retry-After date, then success",
			model: "claude-3-5-haiku-20241022",
			replies: []reply{
				{status: 429, header: map[string]string{"Retry-After": retryDate}, body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
				{file: "anthropic_text.json"},
			},
			wantAttempts: 2, wantWaits: []time.Duration{7 * time.Second}, wantWaitsN: 1,
		},
		{
			name:  "429 with retry-after-ms and x-ratelimit-reset",
			model: "groq/llama-3.3-70b-versatile",
			replies: []reply{
				{status: 429, header: map[string]string{"retry-after-ms": "120"}, file: "openai_429.json"},
				{status: 429, header: map[string]string{"x-ratelimit-reset-requests": "1.5s", "x-ratelimit-reset-tokens": "250ms"}, file: "openai_429.json"},
				{file: "openai_text.json"},
			},
			wantAttempts: 3, wantWaits: []time.Duration{120 * time.Millisecond, 1500 * time.Millisecond}, wantWaitsN: 2,
		},
		{
			name:         "500 then success",
			model:        "gpt-4o-mini",
			replies:      []reply{{status: 500, body: `{"error":{"message":"The server had an error","type":"server_error"}}`}, {file: "openai_text.json"}},
			wantAttempts: 2, wantWaitsN: 1,
		},
		{
			name:         "anthropic 529 overloaded then success",
			model:        "claude-3-5-haiku-20241022",
			replies:      []reply{{status: 529, file: "anthropic_529.json"}, {file: "anthropic_text.json"}},
			wantAttempts: 2, wantWaitsN: 1,
		},
		{
			name:  "bedrock throttled then success",
			model: "bedrock/amazon.nova-lite-v1:0",
			replies: []reply{{status: 429, header: map[string]string{"x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"},
				file: "bedrock_throttled.json"}, {file: "bedrock_text.json"}},
			wantAttempts: 2, wantWaitsN: 1,
		},
		{
			name:         "400 stops at once",
			model:        "gpt-4o-mini",
			replies:      []reply{{status: 400, file: "openai_400.json"}},
			wantErr:      llm.ErrBadRequest,
			wantAttempts: 1, wantWaitsN: 0,
		},
		{
			name:         "401 stops at once",
			model:        "claude-3-5-haiku-20241022",
			replies:      []reply{{status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}},
			wantErr:      llm.ErrAuth,
			wantAttempts: 1, wantWaitsN: 0,
		},
		{
			name:  "attempts are bounded",
			model: "gpt-4o-mini",
			replies: []reply{
				{status: 503, body: "upstream connect error"}, {status: 502, body: "bad gateway"},
				{status: 500, body: "{}"}, {status: 429, header: map[string]string{"Retry-After": "1"}, file: "openai_429.json"},
			},
			wantErr:      llm.ErrRateLimited,
			wantAttempts: 4, wantWaitsN: 3,
		},
		{
			name:         "a wait longer than MaxWait is not waited for",
			model:        "gpt-4o-mini",
			replies:      []reply{{status: 429, header: map[string]string{"Retry-After": "3600"}, file: "openai_429.json"}},
			wantErr:      llm.ErrRateLimited,
			wantAttempts: 1, wantWaitsN: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, tt.replies...)
			resp, err := p.client().Complete(context.Background(), ask(tt.model, nil))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
				assert.Equal(t, "Paris.", resp.Text)
			}
			assert.Equal(t, tt.wantAttempts, resp.Attempts)
			assert.Len(t, p.requests(), tt.wantAttempts)
			waits := p.waits()
			assert.Len(t, waits, tt.wantWaitsN)
			if tt.wantWaits != nil {
				assert.Equal(t, tt.wantWaits, waits)
			}
			for _, w := range waits {
				assert.Less(t, w, 20*time.Second)
			}
		})
	}
}

func TestErrorDetails(t *testing.T) {
	p := newProvider(t, reply{status: 400, file: "openai_400.json"})
	_, err := p.client().Complete(context.Background(), ask("gpt-4o-mini", nil))
	var e *llm.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, &llm.Error{Provider: "openai", Status: 400, Code: "invalid_request_error",
		Message: "Invalid schema for response_format 'verdict': In context=(), 'additionalProperties' is required to be supplied and to be false."}, e)
	assert.False(t, errors.Is(err, llm.ErrRateLimited))
}

// TestCancel checks that a cancelled context stops the call at once: during a wait and
// before a retry.
func TestCancel(t *testing.T) {
	t.Run("during the wait", func(t *testing.T) {
		p := newProvider(t, reply{status: 503, body: "busy"}, reply{file: "openai_text.json"})
		ctx, cancel := context.WithCancel(context.Background())
		c := p.client(func(o *llm.Options) {
			o.Sleep = func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }
		})
		resp, err := c.Complete(ctx, ask("gpt-4o-mini", nil))
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, resp.Attempts)
		assert.Len(t, p.requests(), 1)
	})
	t.Run("before sending", func(t *testing.T) {
		p := newProvider(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		resp, err := p.client().Complete(ctx, ask("claude-3-5-haiku-20241022", nil))
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, resp.Attempts)
		assert.Empty(t, p.requests())
	})
	t.Run("deadline shorter than Retry-After", func(t *testing.T) {
		p := newProvider(t, reply{status: 429, header: map[string]string{"Retry-After": "30"}, file: "openai_429.json"})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := p.client().Complete(ctx, ask("gpt-4o-mini", nil))
		require.ErrorIs(t, err, llm.ErrRateLimited)
		assert.Equal(t, 1, resp.Attempts)
		assert.Empty(t, p.waits())
	})
}

// TestRepair checks the one repair retry of an answer that does not satisfy the schema.
func TestRepair(t *testing.T) {
	t.Run("invalid then valid", func(t *testing.T) {
		p := newProvider(t, reply{file: "openai_json_invalid.json"}, reply{file: "openai_json.json"})
		resp, err := p.client().Complete(context.Background(), ask("gpt-4o-mini", verdictSchema))
		require.NoError(t, err)
		assert.JSONEq(t, `{"score":4,"label":"good","reason":"Accurate and brief."}`, string(resp.JSON))
		assert.Equal(t, 2, resp.Attempts)
		assert.Equal(t, llm.Usage{InputTokens: 410, OutputTokens: 30}, resp.Usage, "both answers are billed")

		got := p.requests()
		require.Len(t, got, 2)
		var second struct {
			Messages []struct{ Role, Content string } `json:"messages"`
			Format   json.RawMessage                  `json:"response_format"`
		}
		require.NoError(t, json.Unmarshal(got[1].Body, &second))
		require.Len(t, second.Messages, 3)
		assert.Equal(t, "user", second.Messages[0].Role)
		assert.Equal(t, "assistant", second.Messages[1].Role)
		assert.Equal(t, `{"score": "four", "label": "good"}`, second.Messages[1].Content)
		assert.Equal(t, "user", second.Messages[2].Role)
		assert.Contains(t, second.Messages[2].Content, `the required property "reason" is missing`)
		assert.NotEmpty(t, second.Format, "the repair asks for the same schema")
	})
	t.Run("anthropic text instead of tool_use, then tool_use", func(t *testing.T) {
		p := newProvider(t, reply{file: "anthropic_text.json"}, reply{file: "anthropic_tool_use.json"})
		resp, err := p.client().Complete(context.Background(), ask("claude-3-5-haiku-20241022", verdictSchema))
		require.NoError(t, err)
		assert.JSONEq(t, `{"score":4,"label":"good","reason":"Accurate and brief."}`, string(resp.JSON))
		assert.Equal(t, 2, resp.Attempts)
	})
	t.Run("invalid twice", func(t *testing.T) {
		p := newProvider(t, reply{file: "openai_json_invalid.json"}, reply{file: "openai_json_invalid.json"})
		resp, err := p.client().Complete(context.Background(), ask("gpt-4o-mini", verdictSchema))
		require.ErrorIs(t, err, llm.ErrInvalidOutput)
		assert.Equal(t, 2, resp.Attempts)
		assert.Nil(t, resp.JSON)
		assert.Len(t, p.requests(), 2)
	})
}

func TestCost(t *testing.T) {
	tests := []struct {
		name       string
		model      string
		reply      string
		wantCost   float64
		wantSource string
	}{
		{
			// gpt-4o-mini: $0.15 in, $0.075 cached in, $0.60 out per 1M tokens;
			// 176 uncached + 1024 cached input tokens, 3 output tokens.
			name: "priced openai", model: "gpt-4o-mini", reply: "openai_text.json",
			wantCost: (176*0.15 + 1024*0.075 + 3*0.6) / 1e6, wantSource: llm.CostSourceTable,
		},
		{
			// claude-3-5-haiku: $0.80 in, $0.08 cache read, $1 cache write, $4 out.
			name: "priced anthropic with cache", model: "plume/anthropic/claude-3-5-haiku-20241022", reply: "anthropic_text.json",
			wantCost: (12*0.8 + 2000*0.08 + 100*1 + 4*4) / 1e6, wantSource: llm.CostSourceTable,
		},
		{
			name: "unknown model", model: "ollama/my-finetune", reply: "openai_text.json",
			wantCost: 0, wantSource: llm.CostSourceUnknownModel,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, reply{file: tt.reply})
			c := p.client(func(o *llm.Options) { o.Pricer = pricetable.New(pricing.Default()) })
			resp, err := c.Complete(context.Background(), ask(tt.model, nil))
			require.NoError(t, err)
			assert.InDelta(t, tt.wantCost, resp.Cost, 1e-12)
			assert.Equal(t, tt.wantSource, resp.CostSource)
		})
	}
}

// TestNetworkFailures checks that unreachable servers and attempts that time out are retried,
// up to MaxAttempts.
func TestNetworkFailures(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		p := newProvider(t)
		c := p.client()
		p.srv.Close()
		resp, err := c.Complete(context.Background(), ask("gpt-4o-mini", nil))
		require.ErrorIs(t, err, llm.ErrUnavailable)
		var e *llm.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, llm.CodeNetwork, e.Code)
		assert.Equal(t, llm.DefaultMaxAttempts, resp.Attempts)
		assert.Len(t, p.waits(), llm.DefaultMaxAttempts-1)
	})
	t.Run("attempt timeout", func(t *testing.T) {
		block := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-block:
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(block) })
		c := llm.New(llm.Config{Providers: map[string]llm.Endpoint{"openai": {BaseURL: srv.URL, APIKey: "k"}}},
			llm.Options{Timeout: 10 * time.Millisecond, MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }})
		resp, err := c.Complete(context.Background(), ask("gpt-4o-mini", nil))
		var e *llm.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, llm.CodeTimeout, e.Code)
		assert.Equal(t, 2, resp.Attempts)
	})
}
