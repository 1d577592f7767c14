package fakemodel

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// API names the provider protocol of a call.
type API string

// The protocols the server speaks.
const (
	OpenAI    API = "openai"
	Anthropic API = "anthropic"
	Bedrock   API = "bedrock" // Amazon Bedrock's Converse and ConverseStream
)

// Structured-output formats of a call (Call.Format).
const (
	FormatText       = ""            // plain text
	FormatJSONObject = "json_object" // OpenAI response_format {type: json_object}
	FormatJSONSchema = "json_schema" // a JSON schema for the message content
	FormatTool       = "tool"        // a forced tool call whose arguments follow a schema
)

// Call is one model call the server received, as far as it could be read.
type Call struct {
	// Seq numbers the calls from 1 in the order they arrived.
	Seq int
	API API
	// Path is the request path, such as "/v1/chat/completions".
	Path string
	// Status is the HTTP status the server answered (or, during Latency, will answer).
	Status int
	// Header holds the request's headers, credentials included.
	Header http.Header
	// Body is the raw request body.
	Body []byte

	Model string
	// System is the system prompt: Anthropic's system, Bedrock's system blocks, or OpenAI's
	// system and developer messages, joined by newlines.
	System string
	// Messages are the conversation's messages in order (OpenAI's system messages included).
	Messages []Message
	// Temperature is the requested temperature, nil when unset.
	Temperature *float64
	// MaxTokens is max_tokens (OpenAI's max_completion_tokens, Bedrock's
	// inferenceConfig.maxTokens), 0 when unset.
	MaxTokens int
	Stream    bool
	// Tools are the names of the tools offered.
	Tools []string
	// Format is the structured output asked for: FormatText, FormatJSONObject,
	// FormatJSONSchema or FormatTool.
	Format string
	// SchemaName is the json_schema name (OpenAI) or the forced tool's name.
	SchemaName string
	// Schema is the JSON schema the answer must follow, nil for none.
	Schema json.RawMessage
}

// Message is one message of a call, its text parts joined by newlines.
type Message struct {
	Role string
	Text string
	// Images counts the image parts.
	Images int
}

// LastUser returns the text of the last user message, "" when there is none.
func (c Call) LastUser() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			return c.Messages[i].Text
		}
	}
	return ""
}

// Server is the fake model server, an http.Handler. Its methods are safe for concurrent use.
type Server struct {
	apiKey string
	models []string
	now    func() time.Time
	mux    *http.ServeMux

	mu    sync.Mutex
	rules []Rule
	used  []int // calls matched per rule, for Rule.Times
	calls []Call
}

// Option configures a Server.
type Option func(*Server)

// WithRules appends rules; the first one that matches a call answers it.
func WithRules(rules ...Rule) Option {
	return func(s *Server) { s.rules = append(s.rules, rules...) }
}

// WithAPIKey makes key the only accepted API key (for Bedrock, the access key id of the
// SigV4 signature). Without it any non-empty key is accepted; a missing key is refused either
// way (401, Bedrock 403).
func WithAPIKey(key string) Option {
	return func(s *Server) { s.apiKey = key }
}

// WithModels lists the model ids the server knows: GET /v1/models lists them and calls for
// other models are answered 404 as the providers do. Without it every model id is accepted.
func WithModels(ids ...string) Option {
	return func(s *Server) { s.models = ids }
}

// WithClock sets the clock behind the "created" timestamps (time.Now by default).
func WithClock(now func() time.Time) Option {
	return func(s *Server) { s.now = now }
}

// New returns a Server configured by opts.
func New(opts ...Option) *Server {
	s := &Server{now: time.Now}
	for _, o := range opts {
		o(s)
	}
	s.used = make([]int, len(s.rules))
	s.mux = s.routes()
	return s
}

// ServeHTTP serves the OpenAI-, Anthropic- and Bedrock-compatible endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetRules replaces the rules and restarts their Times counts.
func (s *Server) SetRules(rules ...Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = slices.Clone(rules)
	s.used = make([]int, len(rules))
}

// Calls returns a copy of the call log, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Count returns the number of model calls received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// Reset empties the call log and restarts the rules' Times counts.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
	s.used = make([]int, len(s.rules))
}

// record adds a call that is answered without consulting the rules (refused or invalid).
func (s *Server) record(c *Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.Seq = len(s.calls) + 1
	s.calls = append(s.calls, *c)
}

// decide picks the reply to a valid call and logs the call with the status it will get.
func (s *Server) decide(c *Call) Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	var reply Reply
	for i, r := range s.rules {
		if r.Times > 0 && s.used[i] >= r.Times {
			continue
		}
		if r.Match == nil || r.Match(*c) {
			s.used[i]++
			reply = r.Reply
			break
		}
	}
	c.Status = http.StatusOK
	if reply.Status != 0 {
		c.Status = reply.Status
	}
	c.Seq = len(s.calls) + 1
	s.calls = append(s.calls, *c)
	return reply
}

// knows reports whether model may be called.
func (s *Server) knows(model string) bool {
	return len(s.models) == 0 || slices.Contains(s.models, model)
}

// answer decides c's reply and serves what every wire format does alike: the reply's latency,
// then its error status. ok is false when the response is already done (an error written, or
// the client gone).
func (s *Server) answer(w http.ResponseWriter, r *http.Request, c *Call, api API) (answer, bool) {
	reply := s.decide(c)
	w.Header().Set(requestIDHeaders[api], fmt.Sprintf("req_%s%04d", c.hash(), c.Seq))
	if !wait(r.Context(), reply.Latency) {
		return answer{}, false
	}
	if reply.Status != 0 {
		writeError(w, api, reply.Status, errorDetail{message: reply.ErrorMessage, retryAfter: reply.RetryAfter})
		return answer{}, false
	}
	return compose(c, reply), true
}

// requestIDHeaders name the header each provider gives its id of a call in: OpenAI's
// x-request-id, Anthropic's request-id, AWS's x-amzn-RequestId.
var requestIDHeaders = map[API]string{OpenAI: "X-Request-Id", Anthropic: "Request-Id", Bedrock: "X-Amzn-Requestid"}

// wait sleeps d, returning false when ctx ends first.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
