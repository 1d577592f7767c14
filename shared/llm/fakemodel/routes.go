package fakemodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxBody is the largest request body accepted, Anthropic's limit for Messages requests.
const maxBody = 32 << 20

// defaultModels are listed by GET /v1/models when WithModels is not used.
var defaultModels = []string{"fake-gpt", "fake-claude"}

// routes lists every endpoint of the server.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	mux.HandleFunc("POST /chat/completions", s.chatCompletions)
	mux.HandleFunc("POST /v1/messages", s.messages)
	// Bedrock's model id is one path segment, escaped: "us.anthropic.claude-...%3A0", an ARN
	// with %2F. The mux matches segments escaped and gives the wildcard unescaped.
	mux.HandleFunc("POST /model/{modelId}/converse", s.converse(false))
	mux.HandleFunc("POST /model/{modelId}/converse-stream", s.converse(true))
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("GET /models", s.listModels)
	mux.HandleFunc("GET /fakemodel/calls", s.callLog)
	mux.HandleFunc("DELETE /fakemodel/calls", func(w http.ResponseWriter, r *http.Request) {
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apiOf(r), http.StatusNotFound, errorDetail{
			message: fmt.Sprintf("fakemodel serves no %s %s", r.Method, r.URL.Path), code: "unknown_url",
		})
	})
	return mux
}

// apiOf tells which provider a request is written for: Anthropic's clients send
// anthropic-version, Bedrock's paths start with /model/.
func apiOf(r *http.Request) API {
	if strings.HasPrefix(r.URL.Path, "/model/") {
		return Bedrock
	}
	if r.Header.Get("anthropic-version") != "" || r.Header.Get("x-api-key") != "" {
		return Anthropic
	}
	return OpenAI
}

// checkKey returns why the key is refused, "" when it is accepted.
func (s *Server) checkKey(key, header string) string {
	switch {
	case key == "":
		return header + " header is required"
	case s.apiKey != "" && key != s.apiKey:
		return "invalid API key"
	}
	return ""
}

// requestKey returns the API key a request carries in its provider's header.
func requestKey(r *http.Request, api API) (key, header string) {
	if api == Anthropic {
		return r.Header.Get("x-api-key"), "x-api-key"
	}
	key, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(key), "Authorization: Bearer"
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	api := apiOf(r)
	if key, header := requestKey(r, api); s.checkKey(key, header) != "" {
		writeError(w, api, http.StatusUnauthorized, errorDetail{message: s.checkKey(key, header), code: "invalid_api_key"})
		return
	}
	ids := s.models
	if len(ids) == 0 {
		ids = defaultModels
	}
	created := s.now().UTC()
	if api == Anthropic {
		type model struct {
			Type        string `json:"type"`
			ID          string `json:"id"`
			DisplayName string `json:"display_name"`
			CreatedAt   string `json:"created_at"`
		}
		out := struct {
			Data    []model `json:"data"`
			HasMore bool    `json:"has_more"`
			FirstID string  `json:"first_id"`
			LastID  string  `json:"last_id"`
		}{Data: []model{}, FirstID: ids[0], LastID: ids[len(ids)-1]}
		for _, id := range ids {
			out.Data = append(out.Data, model{Type: "model", ID: id, DisplayName: id, CreatedAt: created.Format(time.RFC3339)})
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range ids {
		out.Data = append(out.Data, model{ID: id, Object: "model", Created: created.Unix(), OwnedBy: "fakemodel"})
	}
	writeJSON(w, http.StatusOK, out)
}

// callLog serves GET /fakemodel/calls: the call log for tests that run the server as a
// program, without bodies and headers (they may hold keys).
func (s *Server) callLog(w http.ResponseWriter, r *http.Request) {
	type call struct {
		Seq        int    `json:"seq"`
		API        API    `json:"api"`
		Path       string `json:"path"`
		Status     int    `json:"status"`
		Model      string `json:"model"`
		System     string `json:"system"`
		LastUser   string `json:"last_user"`
		Format     string `json:"format"`
		SchemaName string `json:"schema_name"`
	}
	calls := s.Calls()
	out := struct {
		Count int    `json:"count"`
		Calls []call `json:"calls"`
	}{Count: len(calls), Calls: []call{}}
	for _, c := range calls {
		out.Calls = append(out.Calls, call{
			Seq: c.Seq, API: c.API, Path: c.Path, Status: c.Status, Model: c.Model, System: c.System,
			LastUser: c.LastUser(), Format: c.Format, SchemaName: c.SchemaName,
		})
	}
	writeJSON(w, http.StatusOK, out)
}

// readBody reads a request body of at most maxBody bytes.
func readBody(r *http.Request) ([]byte, int, string) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return body, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", maxBody)
	case err != nil:
		return body, http.StatusBadRequest, "could not read the request body"
	}
	return body, 0, ""
}

// errorDetail is an error answer before it is put in a provider's shape.
type errorDetail struct {
	message string
	// code is OpenAI's error code ("" for null).
	code string
	// param is OpenAI's param ("" for null).
	param      string
	retryAfter time.Duration
}

// openAIErrorTypes and anthropicErrorTypes name the error type of each status; statuses not
// listed are invalid_request_error below 500 and server_error / api_error from 500.
var (
	openAIErrorTypes = map[int]string{
		http.StatusTooManyRequests: "requests",
	}
	anthropicErrorTypes = map[int]string{
		http.StatusUnauthorized:          "authentication_error",
		http.StatusPaymentRequired:       "billing_error",
		http.StatusForbidden:             "permission_error",
		http.StatusNotFound:              "not_found_error",
		http.StatusRequestEntityTooLarge: "request_too_large",
		http.StatusTooManyRequests:       "rate_limit_error",
		http.StatusGatewayTimeout:        "timeout_error",
		529:                              "overloaded_error",
	}
)

// defaultMessages are the messages of error replies whose rule gives none.
var defaultMessages = map[int]string{
	http.StatusTooManyRequests:     "Rate limit reached (simulated by fakemodel).",
	http.StatusInternalServerError: "The server had an error while processing your request (simulated by fakemodel).",
	http.StatusServiceUnavailable:  "The server is overloaded or not ready yet (simulated by fakemodel).",
	529:                            "Overloaded (simulated by fakemodel).",
}

// writeError writes an error in the provider's shape: OpenAI's {"error": {message, type,
// param, code}} (https://platform.openai.com/docs/guides/error-codes), Anthropic's
// {"type": "error", "error": {type, message}} (https://docs.anthropic.com/en/api/errors) or
// Bedrock's (writeBedrockError).
// Retry-After is set as RFC 9110 section 10.2.3 has it, in whole seconds; retry-after-ms,
// which the official SDKs prefer, keeps the precision.
func writeError(w http.ResponseWriter, api API, status int, e errorDetail) {
	if e.message == "" {
		e.message = defaultMessages[status]
		if e.message == "" {
			e.message = http.StatusText(status) + " (simulated by fakemodel)."
		}
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.retryAfter.Seconds()))))
		w.Header().Set("retry-after-ms", strconv.FormatInt(e.retryAfter.Milliseconds(), 10))
	}
	if api == Bedrock {
		writeBedrockError(w, status, e)
		return
	}
	if api == Anthropic {
		typ := anthropicErrorTypes[status]
		if typ == "" {
			typ = "invalid_request_error"
			if status >= 500 {
				typ = "api_error"
			}
		}
		writeJSON(w, status, map[string]any{
			"type":  "error",
			"error": map[string]string{"type": typ, "message": e.message},
		})
		return
	}
	typ := openAIErrorTypes[status]
	if typ == "" {
		typ = "invalid_request_error"
		if status >= 500 {
			typ = "server_error"
		}
	}
	code, param := nullable(e.code), nullable(e.param)
	if status == http.StatusTooManyRequests && code == nil {
		code = nullable("rate_limit_exceeded")
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": e.message, "type": typ, "param": param, "code": code,
	}})
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil { // only the server's own types are written
		http.Error(w, "fakemodel: encode answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// refuse logs a call answered with an error before the rules are consulted and writes it.
func (s *Server) refuse(w http.ResponseWriter, c *Call, status int, e errorDetail) {
	c.Status = status
	s.record(c)
	writeError(w, c.API, status, e)
}

// badRequest is a request the provider would refuse with 400, with its message.
type badRequest struct {
	msg   string
	param string
}

func (e *badRequest) Error() string { return e.msg }

func invalid(param, format string, args ...any) error {
	return &badRequest{msg: fmt.Sprintf(format, args...), param: param}
}

// pacer spaces the events of a streamed answer by interval (Reply.ChunkInterval).
type pacer struct {
	ctx      context.Context
	interval time.Duration
	started  bool
}

// next waits for the time of the next event: at once for the first, interval after the one
// before for the others. It reports false once the client is gone.
func (p *pacer) next() bool {
	if !p.started {
		p.started = true
		return p.ctx.Err() == nil
	}
	return wait(p.ctx, p.interval)
}

// flusher flushes a streamed answer after each event.
func flush(w http.ResponseWriter) { _ = http.NewResponseController(w).Flush() }

// pieces splits streamed text into word-sized deltas.
func pieces(s string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(s, " ")
}
