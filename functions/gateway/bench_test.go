package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/plumehq/plume/functions/gateway"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// The gateway's own cost, without the provider's: the benchmarks serve the handler with an
// upstream answering in-process (an http.RoundTripper, no socket), the caller's key resolved
// from the authenticator's cache (as on every request of a warm instance after the first),
// and no limits (each limit set costs DynamoDB requests per call: package ratelimit).

// benchKey is the caller's key of the benchmarks.
const benchKey = "plm_BenchmarkKey00000000000000000000000000"

// oneKey finds benchKey only.
type oneKey struct{ key auth.Key }

func (k oneKey) KeyByHash(_ context.Context, hash string) (auth.Key, error) {
	if hash != k.key.Hash {
		return auth.Key{}, fmt.Errorf("no such key")
	}
	return k.key, nil
}

// cannedUpstream answers every request with the same provider answer, in-process.
type cannedUpstream struct {
	contentType string
	body        []byte
}

func (c cannedUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	return &http.Response{
		StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {c.contentType}, "X-Request-Id": {"req_1"}},
		Body: io.NopCloser(bytes.NewReader(c.body)), Request: r,
	}, nil
}

// discardSpans takes the spans of traced calls and keeps none: the span's making is the
// gateway's cost, its storage the tracing service's.
type discardSpans struct{}

func (discardSpans) Ingest(_ context.Context, _ string, spans []trace.Span) ([]trace.Span, error) {
	return spans, nil
}

// benchHandler is the gateway whose providers all answer through rt, every call priced and,
// when traced, recorded as a span.
func benchHandler(b *testing.B, rt http.RoundTripper, traced bool) http.Handler {
	b.Helper()
	return benchHandlerAt(b, "http://provider.invalid", rt, traced)
}

// benchHandlerAt is benchHandler with its providers' APIs at base (OpenAI's under /v1).
func benchHandlerAt(b *testing.B, base string, rt http.RoundTripper, traced bool) http.Handler {
	b.Helper()
	logger := slog.Default() // the log lines are part of the cost (the process's logger); not of the output
	slog.SetDefault(web.NewLogger(io.Discard, slog.LevelInfo))
	b.Cleanup(func() { slog.SetDefault(logger) })
	key := auth.Key{ID: "k1", ProjectID: "5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10", Hash: auth.HashKey(benchKey), User: auth.User{ID: "u1"}}
	models := llm.New(llm.Config{Providers: map[string]llm.Endpoint{
		llm.ProviderOpenAI:    {BaseURL: base + "/v1", APIKey: "sk-bench"},
		llm.ProviderAnthropic: {BaseURL: base, APIKey: "sk-ant-bench"},
	}}, llm.Options{HTTPClient: &http.Client{Transport: rt}})
	d := gateway.Deps{
		Models: func(context.Context) (*llm.Client, error) { return models, nil },
		Prices: pricing.Default(),
		Pricer: pricing.NewPricer(pricing.Default()),
		Authn:  auth.NewAuthenticator(oneKey{key}, auth.MaxCacheTTL),
	}
	if traced {
		d.Traces, d.Trace = discardSpans{}, gateway.TraceAll
	}
	return gateway.NewHandler(d)
}

const benchRequest = `{"model":"%s","messages":[{"role":"system","content":"You are a support agent for Plume."},` +
	`{"role":"user","content":"How do I reset my password? I have tried the link in the email twice."}],"temperature":0.2,"max_tokens":256}`

// BenchmarkChatCompletion is the gateway's overhead per non-streamed request: reading and
// routing the request, the relay (a passthrough for OpenAI, a translation both ways for
// Anthropic), writing the answer, pricing it and, for the traced cases, making its span.
func BenchmarkChatCompletion(b *testing.B) {
	openAIAnswer := cannedUpstream{"application/json", []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,` +
		`"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Open Settings, then Security, then Reset password."},` +
		`"finish_reason":"stop"}],"usage":{"prompt_tokens":41,"completion_tokens":12,"total_tokens":53}}`)}
	anthropicAnswer := cannedUpstream{"application/json", []byte(`{"id":"msg_1","type":"message","role":"assistant",` +
		`"model":"claude-haiku-4-5","content":[{"type":"text","text":"Open Settings, then Security, then Reset password."}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":41,"output_tokens":12}}`)}
	for _, tt := range []struct {
		name, model string
		upstream    cannedUpstream
		traced      bool
	}{
		{"openai", "openai/gpt-4o-mini", openAIAnswer, false},
		{"anthropic", "anthropic/claude-haiku-4-5", anthropicAnswer, false},
		{"openai-traced", "openai/gpt-4o-mini", openAIAnswer, true},
		{"anthropic-traced", "anthropic/claude-haiku-4-5", anthropicAnswer, true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			h := benchHandler(b, tt.upstream, tt.traced)
			body := []byte(fmt.Sprintf(benchRequest, tt.model))
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+benchKey)
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

// pipeUpstream answers with a stream whose chunks the benchmark writes.
type pipeUpstream struct{ body *io.PipeReader }

func (p pipeUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	_ = r.Body.Close()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: p.body, Request: r}, nil
}

// BenchmarkStreamedChunk is the delay the gateway adds to each chunk of a stream, measured
// from the provider's write of a chunk to the client's read of it over a loopback connection
// (the connection's own cost included): one operation is one chunk through.
func BenchmarkStreamedChunk(b *testing.B) {
	pr, pw := io.Pipe()
	srv := httptest.NewServer(benchHandler(b, pipeUpstream{pr}, false))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"openai/gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+benchKey)
	chunk := []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini",` +
		`"choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}` + "\n\n")
	// The answer's header leaves with its first chunk: send one before the client waits for it.
	go func() { _, _ = pw.Write(chunk) }()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	lines := bufio.NewReader(res.Body)
	readEvent := func() {
		for { // the data line, then the blank line ending the event
			line, err := lines.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if len(line) == 1 {
				return
			}
		}
	}
	readEvent()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pw.Write(chunk); err != nil {
			b.Fatal(err)
		}
		readEvent()
	}
	_ = pw.Close()
}
