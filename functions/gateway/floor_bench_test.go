package gateway_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/plumehq/plume/internal/cputime"
)

// BenchmarkGatewayFloor sets the gateway beside its floor, a bare passthrough
// (httputil.ReverseProxy: the path and the key replaced, the answer flushed as it comes), in
// the same harness: the caller's request served in-process, the provider a loopback server
// answering the same bytes to both, event by event for a stream, a chat completion's
// answer of each provider API streamed and not. cpu-ns/op is the process's CPU time per call
// (the provider's and the Go runtime's included, alike for both), which a shared machine
// disturbs less than the clock; the ratio of each gateway case to its floor is issue 31's
// figure (scripts/bench.sh prints it). The gateway's calls are priced and not traced, its
// default.
func BenchmarkGatewayFloor(b *testing.B) {
	srv := httptest.NewServer(cannedProvider())
	defer srv.Close()
	for _, up := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"loopback", http.DefaultTransport},
		{"inprocess", inProcess{cannedProvider()}},
	} {
		b.Run(up.name, func(b *testing.B) { benchFloors(b, srv.URL, up.rt) })
	}
}

// benchFloors runs each case of BenchmarkGatewayFloor with its provider at base through rt.
func benchFloors(b *testing.B, base string, rt http.RoundTripper) {
	for _, c := range []struct{ name, model, path string }{
		{"openai", "openai/gpt-4o-mini", "/v1/chat/completions"},
		{"openai-stream", "openai/gpt-4o-mini", "/v1/chat/completions"},
		{"anthropic", "anthropic/claude-haiku-4-5", "/v1/messages"},
		{"anthropic-stream", "anthropic/claude-haiku-4-5", "/v1/messages"},
	} {
		body := fmt.Sprintf(benchRequest, c.model)
		if strings.HasSuffix(c.name, "-stream") {
			body = strings.Replace(body, `"temperature"`, `"stream":true,"temperature"`, 1)
		}
		b.Run(c.name+"/gateway", func(b *testing.B) {
			benchCalls(b, benchHandlerAt(b, base, rt, false), []byte(body))
		})
		b.Run(c.name+"/floor", func(b *testing.B) {
			benchCalls(b, passthrough(base, c.path, rt), []byte(body))
		})
	}
}

// passthrough is the floor: a reverse proxy sending every call to base+path with the
// deployment's key, its answer passed on and flushed as it comes.
func passthrough(base, path string, rt http.RoundTripper) http.Handler {
	target, _ := url.Parse(base + path)
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = target
			r.Out.Host = ""
			r.Out.Header.Set("Authorization", "Bearer sk-bench")
		},
		FlushInterval: -1,
		Transport:     rt,
	}
}

// benchCalls serves the call body through h b.N times, reporting cpu-ns/op.
func benchCalls(b *testing.B, h http.Handler, body []byte) {
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+benchKey)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || w.Body.Len() == 0 {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
}

// cannedProvider answers OpenAI's /v1/chat/completions and Anthropic's /v1/messages with the
// same answer to every call, a stream when the call asks for one ("stream":true), each event
// flushed as a provider sends it.
func cannedProvider() http.Handler {
	const text = "Open Settings, then Security, then Reset password. The link is valid for one hour."
	words := strings.SplitAfter(text, " ")
	var oaEvents, amEvents []string
	for _, w := range words {
		oaEvents = append(oaEvents, fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini",`+
			`"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", w))
		amEvents = append(amEvents, fmt.Sprintf("event: content_block_delta\n"+
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`+"\n\n", w))
	}
	oaEvents = append(oaEvents,
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n",
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":41,"completion_tokens":18,"total_tokens":59}}`+"\n\n",
		"data: [DONE]\n\n")
	amEvents = append([]string{
		"event: message_start\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5",` +
			`"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":41,"output_tokens":1}}}` + "\n\n",
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n",
	}, amEvents...)
	amEvents = append(amEvents,
		"event: content_block_stop\n"+`data: {"type":"content_block_stop","index":0}`+"\n\n",
		"event: message_delta\n"+`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":18}}`+"\n\n",
		"event: message_stop\n"+`data: {"type":"message_stop"}`+"\n\n")
	oaJSON := fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,`+
		`"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":41,"completion_tokens":18,"total_tokens":59}}`, text)
	amJSON := fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":%q}],`+
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":41,"output_tokens":18}}`, text)
	answer := func(json string, events []string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var body bytes.Buffer
			_, _ = body.ReadFrom(r.Body)
			w.Header().Set("X-Request-Id", "req_1")
			if !bytes.Contains(body.Bytes(), []byte(`"stream":true`)) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(json))
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			rc := http.NewResponseController(w)
			for _, e := range events {
				_, _ = w.Write([]byte(e))
				_ = rc.Flush()
			}
		}
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/chat/completions", answer(oaJSON, oaEvents))
	mux.Handle("POST /v1/messages", answer(amJSON, amEvents))
	return mux
}

// inProcess is a provider answering in-process, without a socket: its handler's answer is
// read back write by write (an event of a stream per read, as a provider's flushes arrive).
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	w := &chunkWriter{header: http.Header{}, status: http.StatusOK}
	p.h.ServeHTTP(w, r)
	_ = r.Body.Close()
	return &http.Response{StatusCode: w.status, Header: w.header, Body: &chunkReader{chunks: w.chunks}, Request: r}, nil
}

// chunkWriter keeps each write of an answer.
type chunkWriter struct {
	header http.Header
	status int
	chunks [][]byte
}

func (w *chunkWriter) Header() http.Header  { return w.header }
func (w *chunkWriter) WriteHeader(code int) { w.status = code }
func (w *chunkWriter) Flush()               {}
func (w *chunkWriter) Write(p []byte) (int, error) {
	w.chunks = append(w.chunks, bytes.Clone(p))
	return len(p), nil
}

// chunkReader reads chunks one by one.
type chunkReader struct{ chunks [][]byte }

func (r *chunkReader) Close() error { return nil }
func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	if r.chunks[0] = r.chunks[0][n:]; len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}
