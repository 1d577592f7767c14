package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/plumehq/plume/api"
)

// How the transport reads model bindings (GET /v1/prompt-versions/{id}/model).
const (
	// modelTTL is how long a binding is reused: rebinding a version reaches running
	// processes within it, as with the zeroeval SDKs' 60 s.
	modelTTL = time.Minute
	// modelErrorTTL is how long a failed lookup is not retried, so that an API that is down
	// does not slow every model call.
	modelErrorTTL = 10 * time.Second
	// modelLookupTimeout bounds one lookup: a model call waits for it.
	modelLookupTimeout = 5 * time.Second
	// maxCachedModels bounds the cache; it is emptied when full.
	maxCachedModels = 1024
	// maxErrorPeek is how much of a failed call's answer is read for the span's error.
	maxErrorPeek = 64 << 10
	// maxEventLine bounds one line of a streamed answer kept for parsing: longer lines are
	// passed on but not recorded.
	maxEventLine = 1 << 20
	// llmSpanName is the name the zeroeval SDKs give the span of a chat completion.
	llmSpanName = "openai.chat.completions.create"
)

// gatewayPrefixes are the prefixes of a bound model that send the call through Plume's
// gateway, and the provider recorded for it (COMPAT.md, "Model binding").
var gatewayPrefixes = []string{"zeroeval/", "plume/"}

// Transport returns an http.RoundTripper for OpenAI-compatible clients that does what the
// zeroeval SDKs' OpenAI integration does (COMPAT.md, "Hidden linkage metadata" and "Model
// binding"). base sends the requests (http.DefaultTransport when nil).
//
//	oa := openai.NewClient(option.WithHTTPClient(&http.Client{Transport: c.Transport(nil)}))
//
// Every chat completion (a POST of a JSON object to a path ending in /chat/completions) is
// recorded as an llm span, a child of the request context's current span (StartSpan). When the first system message carries the
// linkage metadata of a prompt (<zeroeval>{...}</zeroeval>), the request sent
//
//   - has the metadata stripped from that message and {{variables}} of the metadata
//     substituted in every message;
//   - uses the model bound to the prompt version (GET /v1/prompt-versions/{id}/model, reused
//     for a minute), when one is bound;
//   - goes to Plume's gateway ({base URL}/v1/chat/completions with the client's API key
//     instead of the provider's) when the bound model is zeroeval/<model> or plume/<model>,
//     with the prefix stripped.
//
// Requests without linkage metadata are sent untouched. A streamed answer is passed on as it
// arrives; its span is recorded when the stream ends or is closed. Each HTTP attempt is one
// span: a client's retry of a failed call records the failure too. Other requests pass
// through unrecorded.
func (c *Client) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{c: c, base: base, models: &modelCache{now: time.Now}}
}

type transport struct {
	c      *Client
	base   http.RoundTripper
	models *modelCache
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("client: read the chat completion request: %w", err)
	}
	ctx := req.Context()
	call, err := t.prepare(ctx, req.URL, body)
	if err != nil { // not a chat request the provider could take: it answers why
		return t.base.RoundTrip(withBody(req, body))
	}
	out := withBody(req, call.body)
	if call.gateway {
		t.toGateway(out)
	}
	_, span := t.c.StartSpan(ctx, llmSpanName, WithKind(KindLLM), WithTags(map[string]string{"integration": "openai"}), WithAttributes(call.attributes))
	if len(call.messages) > 0 {
		span.SetInput(string(call.messages))
	}
	res, err := t.base.RoundTrip(out)
	switch {
	case err != nil:
		span.RecordError(err)
		span.End()
		return nil, err
	case res.StatusCode/100 != 2:
		recordFailure(span, res)
		return res, nil
	case call.stream && strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream"):
		res.Body = &streamRecorder{body: res.Body, span: span}
		return res, nil
	}
	answer, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(answer))
	if err != nil {
		span.RecordError(err)
		span.End()
		return nil, fmt.Errorf("client: read the chat completion: %w", err)
	}
	recordAnswer(span, answer)
	return res, nil
}

// chatCall is a chat completion request as it is sent, and what its span records.
type chatCall struct {
	body       []byte
	messages   json.RawMessage
	stream     bool
	gateway    bool
	attributes map[string]any
}

// prepare reads a chat completion request and rewrites it as its linkage metadata asks. It
// fails when body is not a JSON object.
func (t *transport) prepare(ctx context.Context, u *url.URL, body []byte) (*chatCall, error) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil || req == nil {
		return nil, errors.New("not a JSON object")
	}
	var model string
	_ = json.Unmarshal(req["model"], &model) // a missing or odd model is the provider's to refuse
	call := &chatCall{body: body, messages: req["messages"]}
	_ = json.Unmarshal(req["stream"], &call.stream)
	base := strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/chat/completions")
	provider := providerOfHost(u.Hostname())

	var msgs []map[string]json.RawMessage
	_ = json.Unmarshal(req["messages"], &msgs) // messages that are no array are sent as they are
	link, template, found := api.ApplyLinkage(msgs)
	call.attributes = map[string]any{"provider": provider, "model": model, "streaming": call.stream, "base_url": base}
	if !found {
		return call, nil
	}
	call.attributes["zeroeval"] = link
	call.attributes["variables"] = link.Variables
	if link.Variables == nil {
		call.attributes["variables"] = map[string]string{}
	}
	call.attributes["system_prompt_template"] = template
	if link.Task != "" {
		call.attributes["task"] = link.Task
	}
	if link.PromptVersionID != "" {
		bound, boundProvider, err := t.models.get(ctx, t.c, link.PromptVersionID)
		if err != nil {
			call.attributes["model_binding_error"] = err.Error()
		}
		if bound != "" {
			model = bound
			if boundProvider != "" {
				provider = boundProvider
			}
		}
	}
	for _, p := range gatewayPrefixes {
		if rest, ok := strings.CutPrefix(model, p); ok {
			model, provider, call.gateway = rest, strings.TrimSuffix(p, "/"), true
			base = strings.TrimSuffix(t.gatewayURL().String(), "/chat/completions")
			break
		}
	}
	call.attributes["provider"], call.attributes["model"], call.attributes["base_url"] = provider, model, base
	var err error
	if call.messages, err = json.Marshal(msgs); err != nil {
		return nil, err
	}
	req["messages"] = call.messages
	if req["model"], err = json.Marshal(model); err != nil {
		return nil, err
	}
	if call.body, err = json.Marshal(req); err != nil {
		return nil, err
	}
	return call, nil
}

// gatewayURL is Plume's chat completions route.
func (t *transport) gatewayURL() *url.URL {
	u := *t.c.base
	u.Path = strings.TrimRight(u.Path, "/") + "/v1/chat/completions"
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return &u
}

// toGateway sends out to Plume's gateway with the client's key instead of the provider's.
// The gateway is Plume's to serve (COMPAT.md, "Model binding"); it records no span of its own.
func (t *transport) toGateway(out *http.Request) {
	out.URL, out.Host = t.gatewayURL(), ""
	out.Header.Set("Authorization", "Bearer "+t.c.key)
	for _, h := range []string{"Api-Key", "OpenAI-Organization", "OpenAI-Project"} {
		out.Header.Del(h)
	}
}

// withBody returns a copy of req that sends body.
func withBody(req *http.Request, body []byte) *http.Request {
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	return out
}

// providerOfHost names the provider of an OpenAI-compatible API by its host; "openai" for
// hosts it does not know, as the zeroeval SDKs record every call of the OpenAI client.
func providerOfHost(host string) string {
	host = strings.ToLower(host)
	for _, p := range []struct{ suffix, provider string }{
		{"openai.azure.com", "azure"},
		{"openrouter.ai", "openrouter"},
		{"api.groq.com", "groq"},
		{"api.together.xyz", "together"},
		{"api.fireworks.ai", "fireworks"},
		{"api.deepseek.com", "deepseek"},
		{"api.mistral.ai", "mistral"},
		{"generativelanguage.googleapis.com", "google"},
	} {
		if strings.HasSuffix(host, p.suffix) {
			return p.provider
		}
	}
	return "openai"
}

// jsonText is the text of a JSON value: a string's content, a number's digits, "" for null
// or nothing.
func jsonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// modelCache holds the models bound to prompt versions.
type modelCache struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]cachedModel
}

type cachedModel struct {
	model, provider string
	err             error
	expires         time.Time
}

// get returns the model bound to a prompt version and its provider ("" when none is bound),
// from the cache or the API. A version the API does not know has no binding; another
// failure is returned, and remembered for modelErrorTTL.
func (mc *modelCache) get(ctx context.Context, c *Client, versionID string) (model, provider string, err error) {
	mc.mu.Lock()
	e, ok := mc.m[versionID]
	mc.mu.Unlock()
	if ok && mc.now().Before(e.expires) {
		return e.model, e.provider, e.err
	}
	lookup, cancel := context.WithTimeout(ctx, modelLookupTimeout)
	defer cancel()
	vm, err := c.VersionModel(lookup, versionID)
	e = cachedModel{expires: mc.now().Add(modelTTL)}
	switch {
	case err != nil && ctx.Err() != nil: // the caller gave up: nothing learnt about the API
		return "", "", err
	case err == nil:
		if vm.Model != nil {
			e.model = *vm.Model
		} else if vm.ModelID != nil {
			e.model = *vm.ModelID
		}
		if vm.Provider != nil {
			e.provider = *vm.Provider
		}
	case errors.Is(err, ErrNotFound):
	default:
		e = cachedModel{err: fmt.Errorf("read the model of prompt version %s: %w", versionID, err), expires: mc.now().Add(modelErrorTTL)}
	}
	mc.mu.Lock()
	if mc.m == nil || len(mc.m) >= maxCachedModels {
		mc.m = make(map[string]cachedModel)
	}
	mc.m[versionID] = e
	mc.mu.Unlock()
	return e.model, e.provider, e.err
}

// chatAnswer is the part of a chat completion, or of a chunk of a streamed one, a span records.
type chatAnswer struct {
	ID      string `json:"id"`
	Choices []struct {
		Message *chatOutput `json:"message"`
		Delta   *chatOutput `json:"delta"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
}

type chatOutput struct {
	Content   *string        `json:"content"`
	ToolCalls []chatToolCall `json:"tool_calls"`
}

type chatToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatUsage struct {
	PromptTokens     *int64 `json:"prompt_tokens"`
	CompletionTokens *int64 `json:"completion_tokens"`
}

// recordAnswer records a chat completion on its span and ends it.
func recordAnswer(span *Span, answer []byte) {
	var a chatAnswer
	if err := json.Unmarshal(answer, &a); err != nil {
		span.SetAttribute("answer_error", "the answer is not a chat completion: "+err.Error())
		span.End()
		return
	}
	var content string
	var calls []chatToolCall
	if len(a.Choices) > 0 && a.Choices[0].Message != nil {
		if m := a.Choices[0].Message; m.Content != nil {
			content = *m.Content
		}
		calls = a.Choices[0].Message.ToolCalls
	}
	finish(span, a.ID, content, calls, a.Usage)
}

// finish records the answer's id, text, tool calls and usage on span and ends it. The output
// is the text, or, with tool calls, a JSON object of the text and the calls, as the Python SDK
// writes it.
func finish(span *Span, id, content string, calls []chatToolCall, usage json.RawMessage) {
	if id != "" {
		span.SetAttribute("openai_id", id)
	}
	output := content
	if len(calls) > 0 {
		span.SetAttribute("tool_calls", calls)
		out := struct {
			Content   string         `json:"content,omitempty"`
			ToolCalls []chatToolCall `json:"tool_calls"`
		}{content, calls}
		if b, err := json.Marshal(out); err == nil {
			output = string(b)
		}
	}
	span.SetOutput(output)
	var u chatUsage
	if len(usage) > 0 && string(usage) != "null" && json.Unmarshal(usage, &u) == nil {
		span.SetAttribute("usage", usage)
		if u.PromptTokens != nil {
			span.SetAttribute("inputTokens", *u.PromptTokens)
		}
		if u.CompletionTokens != nil {
			span.SetAttribute("outputTokens", *u.CompletionTokens)
		}
	}
	span.End()
}

// recordFailure records an error answer on span and ends it; the caller still reads the whole
// answer.
func recordFailure(span *Span, res *http.Response) {
	head, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorPeek))
	res.Body = readCloser{io.MultiReader(bytes.NewReader(head), res.Body), res.Body}
	var e struct {
		Error struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(head, &e)
	code := jsonText(e.Error.Code)
	if code == "" {
		code = e.Error.Type
	}
	if code == "" {
		code = fmt.Sprintf("http_%d", res.StatusCode)
	}
	msg := e.Error.Message
	if msg == "" {
		msg = fmt.Sprintf("%d %s", res.StatusCode, http.StatusText(res.StatusCode))
	}
	span.SetAttribute("http_status", res.StatusCode)
	span.Fail(code, msg)
	span.End()
}

type readCloser struct {
	io.Reader
	io.Closer
}

// streamRecorder passes a streamed chat completion (Server-Sent Events of chunks) to its
// reader as it arrives, reading the chunks on the way, and records the span when the stream
// ends or is closed.
type streamRecorder struct {
	body io.ReadCloser
	span *Span
	once sync.Once

	mu      sync.Mutex // the parse state: Close may come from another goroutine
	line    []byte
	skip    bool // the current line is too long to keep
	done    bool // the [DONE] event came
	id      string
	content strings.Builder
	calls   []chatToolCall
	usage   json.RawMessage
}

func (r *streamRecorder) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	r.mu.Lock()
	r.feed(p[:n])
	r.mu.Unlock()
	switch {
	case err == io.EOF:
		r.end(nil, false)
	case err != nil:
		r.end(err, false)
	}
	return n, err
}

func (r *streamRecorder) Close() error {
	err := r.body.Close()
	r.end(nil, true)
	return err
}

// end records the span once, with the error that cut the stream, if any. A stream closed
// before its [DONE] event is marked stream_incomplete: the output is what came until then.
func (r *streamRecorder) end(err error, closed bool) {
	r.once.Do(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.span.RecordError(err)
		if closed && !r.done {
			r.span.SetAttribute("stream_incomplete", true)
		}
		finish(r.span, r.id, r.content.String(), r.calls, r.usage)
	})
}

// feed reads the complete lines of p, keeping an incomplete last one for the next read.
func (r *streamRecorder) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.keep(p)
			return
		}
		r.keep(p[:i])
		if !r.skip {
			r.event(bytes.TrimSuffix(r.line, []byte("\r")))
		}
		r.line, r.skip, p = r.line[:0], false, p[i+1:]
	}
}

func (r *streamRecorder) keep(p []byte) {
	if r.skip {
		return
	}
	if len(r.line)+len(p) > maxEventLine {
		r.skip = true
		return
	}
	r.line = append(r.line, p...)
}

// event reads one line of the stream: a "data: {chunk}" line adds to the answer.
func (r *streamRecorder) event(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		r.done = true
		return
	}
	if len(data) == 0 || data[0] != '{' {
		return
	}
	var chunk chatAnswer
	if json.Unmarshal(data, &chunk) != nil {
		return
	}
	if chunk.ID != "" {
		r.id = chunk.ID
	}
	if len(chunk.Usage) > 0 && string(chunk.Usage) != "null" {
		r.usage = chunk.Usage
	}
	if len(chunk.Choices) == 0 || chunk.Choices[0].Delta == nil {
		return
	}
	d := chunk.Choices[0].Delta
	if d.Content != nil {
		r.content.WriteString(*d.Content)
	}
	for _, tc := range d.ToolCalls {
		i := len(r.calls)
		if tc.Index != nil {
			i = *tc.Index
		}
		if i < 0 || i > len(r.calls) { // indexes come in order; anything else is not recorded
			continue
		}
		if i == len(r.calls) {
			r.calls = append(r.calls, chatToolCall{ID: tc.ID, Type: tc.Type})
		}
		c := &r.calls[i]
		c.Function.Name += tc.Function.Name
		c.Function.Arguments += tc.Function.Arguments
	}
}
