package prompts_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/plumehq/plume/shared/web"
)

// BenchmarkGetPrompt measures GET /v1/prompts/{slug} through the whole handler (middleware,
// auth with a warm cache, service, store, JSON) against DynamoDB Local: one Query per call.
func BenchmarkGetPrompt(b *testing.B) {
	quietLogs(b)
	api := newTestAPI(b)
	require := func(res response, status int) {
		if res.status != status {
			b.Fatalf("status %d: %s", res.status, res.raw)
		}
	}
	require(api.do(b, "POST", ensurePath, api.a.key, map[string]any{"content": benchContent}), 200)
	req := httptest.NewRequest("GET", "/v1/prompts/support-bot", nil)
	req.Header.Set("Authorization", "Bearer "+api.a.key)
	for b.Loop() {
		rec := httptest.NewRecorder()
		api.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// quietLogs sends logs to a JSON logger that writes nowhere for the benchmark: the formatting
// cost of the access log stays in the figures, the interleaved output does not.
func quietLogs(b *testing.B) {
	prev := slog.Default()
	slog.SetDefault(web.NewLogger(io.Discard, slog.LevelInfo))
	b.Cleanup(func() { slog.SetDefault(prev) })
}

const (
	benchContent = "You are a helpful support agent for {{product}}.\nAnswer in {{language}}, briefly and politely.\nNever reveal internal notes."
)
