package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

func TestDecode(t *testing.T) {
	type target struct {
		Name *string `json:"name"`
		N    int     `json:"n"`
	}
	tests := []struct {
		name, body, contentType string
		code                    errs.Code // "" = success
	}{
		{"valid", `{"name":"a","n":1}`, "application/json", ""},
		{"unknown fields ignored", `{"name":"a","extra":{"x":1}}`, "application/json", ""},
		{"charset parameter", `{"name":"a"}`, "application/json; charset=utf-8", ""},
		{"vendor json type", `{"name":"a"}`, "application/vnd.api+json", ""},
		{"no content type", `{"name":"a"}`, "", ""},
		{"text/plain", `{"name":"a"}`, "text/plain", errs.CodeUnsupportedMedia},
		{"empty", ``, "application/json", errs.CodeInvalid},
		{"syntax", `{"name":}`, "application/json", errs.CodeInvalid},
		{"truncated", `{"name":"a"`, "application/json", errs.CodeInvalid},
		{"wrong type", `{"name":5}`, "application/json", errs.CodeInvalid},
		{"array", `[1]`, "application/json", errs.CodeInvalid},
		{"trailing value", `{"name":"a"}{}`, "application/json", errs.CodeInvalid},
		{"too large", `{"name":"` + strings.Repeat("x", 200) + `"}`, "application/json", errs.CodeTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			var v target
			err := Decode(httptest.NewRecorder(), r, &v, 100)
			if tt.code == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.code, errs.CodeOf(err), "error: %v", err)
		})
	}
}

func TestErrorWriter(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(NewLogger(&logs, slog.LevelInfo))
	t.Cleanup(func() { slog.SetDefault(prev) })

	tests := []struct {
		name       string
		err        error
		status     int
		code       string
		message    string
		retryAfter string
		logged     bool
	}{
		{"not found", errs.NotFound("prompt %q not found", "x"), 404, "not_found", `prompt "x" not found`, "", false},
		{"wrapped coded", errors.Join(errors.New("ctx"), errs.Invalid("bad")), 400, "invalid_request", "bad", "", false},
		{"unavailable, its cause logged", fmt.Errorf("put trace: %w: %w", errs.Unavailable("busy"), errors.New("ThrottlingException: secret detail")), 503, "unavailable", "busy", "1", true},
		{"an api parse error", fmt.Errorf("read query: %w", &api.InvalidError{Message: "limit must be an integer"}), 400, "invalid_request", "limit must be an integer", "", false},
		{"rate limited", errs.Errorf(errs.CodeRateLimited, "slow down"), 429, "rate_limited", "slow down", "1", false},
		{"internal is hidden", errors.New("dial tcp 10.0.0.1: secret detail"), 500, "internal", "internal error; quote the request id when reporting it", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { Error(w, r, tt.err) }))
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/x", nil)
			req.Header.Set("X-Request-Id", "req-123")
			h.ServeHTTP(rec, req)
			assert.Equal(t, tt.status, rec.Code)
			assert.Equal(t, tt.retryAfter, rec.Header().Get("Retry-After"))
			var body api.ErrorBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
			assert.Equal(t, api.ErrorBody{Error: api.ErrorDetail{Code: api.ErrorCode(tt.code), Message: tt.message, RequestID: "req-123"}}, body)
			assert.NotContains(t, rec.Body.String(), "secret detail")
			if tt.logged {
				assert.Contains(t, logs.String(), "secret detail")
				assert.Contains(t, logs.String(), `"request_id":"req-123"`)
			}
		})
	}
}

func TestPanicBecomes500(t *testing.T) {
	h := Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	assert.Equal(t, 500, rec.Code)
	assert.NotContains(t, rec.Body.String(), "boom")
	assert.NotEmpty(t, rec.Header().Get("X-Request-Id"))
}

func TestRequestIDHeader(t *testing.T) {
	tests := []struct {
		name, header string
		keep         bool
	}{
		{"well formed kept", "abc-123", true},
		{"malformed replaced", "bad id with spaces", false},
		{"too long replaced", strings.Repeat("a", 200), false},
		{"128 bytes kept", strings.Repeat("a", 128), true},
		{"129 bytes replaced", strings.Repeat("a", 129), false},
		{"every allowed character kept", "AZaz09._:=-", true},
		{"other punctuation replaced", "a/b", false},
		{"non-ASCII replaced", "é", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen string
			h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = RequestID(r.Context()) }))
			req := httptest.NewRequest("GET", "/", nil)
			req.Header.Set("X-Request-Id", tt.header)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, tt.keep, seen == tt.header)
			assert.Equal(t, seen, rec.Header().Get("X-Request-Id"))
		})
	}
}

func TestPattern(t *testing.T) {
	tests := map[string]string{
		"ANY /v1/prompts/{proxy+}":              "/v1/prompts/{proxy...}",
		"ANY /projects/{project_id}/prompts":    "/projects/{project_id}/prompts",
		"GET /healthz":                          "GET /healthz",
		"POST /v1/traces":                       "POST /v1/traces",
		"ANY /projects/{project_id}/x/{proxy+}": "/projects/{project_id}/x/{proxy...}",
	}
	for in, want := range tests {
		assert.Equal(t, want, Pattern(in), in)
	}
}

func TestLogPathAsHidesSecretPaths(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(NewLogger(&logs, slog.LevelInfo))
	t.Cleanup(func() { slog.SetDefault(prev) })

	fail := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { Error(w, r, errors.New("boom")) })
	mux := http.NewServeMux()
	mux.Handle("GET /f/{token}", LogPathAs("/f/{token}", fail))
	mux.Handle("GET /spans/{id}", fail)
	h := Chain(mux)
	tests := []struct{ path, logged string }{
		{"/f/plf_secret", "/f/{token}"},
		{"/spans/abc", "/spans/abc"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			logs.Reset()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", tt.path, nil))
			// Both the error log and the access log show the logged path, never the secret.
			assert.Equal(t, 2, strings.Count(logs.String(), `"path":"`+tt.logged+`"`), logs.String())
			assert.NotContains(t, logs.String(), "plf_secret")
		})
	}
}

// failingReader fails like a client that goes away mid-body.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset by peer") }

// TestReadBody: only a body over the cap is 413; any other read failure is 400, never 413.
func TestReadBody(t *testing.T) {
	tests := []struct {
		name string
		body func() *http.Request
		code errs.Code
	}{
		{"within the cap", func() *http.Request { return httptest.NewRequest("POST", "/", strings.NewReader("12345")) }, ""},
		{"over the cap", func() *http.Request { return httptest.NewRequest("POST", "/", strings.NewReader("123456")) }, errs.CodeTooLarge},
		{"client went away", func() *http.Request { return httptest.NewRequest("POST", "/", failingReader{}) }, errs.CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := ReadBody(httptest.NewRecorder(), tt.body(), 5)
			if tt.code == "" {
				require.NoError(t, err)
				assert.Equal(t, "12345", string(body))
				return
			}
			assert.Equal(t, tt.code, errs.CodeOf(err), "error: %v", err)
		})
	}
}
