package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/llm"
)

// This file translates OpenAI's Chat Completions (https://platform.openai.com/docs/api-reference/chat)
// to Anthropic's Messages (https://docs.anthropic.com/en/api/messages) and back. Types named
// oa* are OpenAI's side of the wire (the request's in request.go), am* Anthropic's. The
// request is read as a conversation (conversation.go), which toMessages writes in Messages'
// words.

// relayMessages serves a chat completion with Anthropic's Messages API: the request
// translated (toMessages), sent with the deployment's key, the answer translated back, a
// stream event by event as it arrives (relay_anthropic_stream.go). What cannot be translated
// (n > 1, audio and file parts, the legacy functions) is refused with 400 before any call.
func relayMessages(w http.ResponseWriter, r *http.Request, up llm.Upstream, fields map[string]json.RawMessage) {
	call, err := toMessages(up.Target.Model, fields)
	if err != nil {
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "", err.Error(), 0)
		return
	}
	res, ok := send(w, r, up, call.req, call.req.Stream)
	if !ok {
		return
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		writeMessagesError(w, r, up.Target.Provider, res)
		return
	}
	if call.req.Stream {
		streamMessages(w, r, res.Body, up.Target, call)
		return
	}
	var msg amResponse
	if readAnswer(w, r, up.Target.Provider, res.Body, &msg) {
		writeCompletion(w, r, up.Target.Provider, fromMessages(&msg, call.answerTool, up.Target.Model, time.Now()))
	}
}

// maxAnswerBytes bounds a non-streamed answer read from a translating relay's provider.
const maxAnswerBytes = 32 << 20

// readAnswer reads a translating relay's non-streamed answer from provider into v. An answer
// that cannot be read is answered with 502, and readAnswer reports false.
func readAnswer(w http.ResponseWriter, r *http.Request, provider string, body io.Reader, v any) bool {
	data, err := io.ReadAll(io.LimitReader(body, maxAnswerBytes))
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		slog.WarnContext(r.Context(), "gateway: unreadable answer", "provider", provider, "error", err)
		writeError(w, http.StatusBadGateway, typeServer, "upstream_invalid", provider+"'s answer cannot be read", 0)
		return false
	}
	return true
}

// writeCompletion answers with out, a translating relay's completion, its usage reported.
func writeCompletion(w http.ResponseWriter, r *http.Request, provider string, out *oaCompletion) {
	reportUsage(r, Usage{PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens})
	b, err := json.Marshal(out)
	if err != nil { // only strings, numbers and the provider's valid JSON inputs
		writeError(w, http.StatusBadGateway, typeServer, "upstream_invalid", provider+"'s answer cannot be translated", 0)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// The OpenAI answer the relay writes.
type (
	oaCompletion struct {
		ID      string     `json:"id"`
		Object  string     `json:"object"`
		Created int64      `json:"created"`
		Model   string     `json:"model"`
		Choices []oaChoice `json:"choices"`
		Usage   oaUsage    `json:"usage"`
	}
	oaChoice struct {
		Index        int             `json:"index"`
		Message      oaAnswerMessage `json:"message"`
		Logprobs     *struct{}       `json:"logprobs"`
		FinishReason string          `json:"finish_reason"`
	}
	oaAnswerMessage struct {
		Role      string       `json:"role"`
		Content   *string      `json:"content"`
		Refusal   *string      `json:"refusal"`
		ToolCalls []oaToolCall `json:"tool_calls,omitempty"`
	}
	oaUsage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
)

// The Anthropic request the relay sends.
type (
	amRequest struct {
		Model         string        `json:"model"`
		System        []amBlock     `json:"system,omitempty"`
		Messages      []amMessage   `json:"messages"`
		MaxTokens     int           `json:"max_tokens"`
		Temperature   *float64      `json:"temperature,omitempty"`
		TopP          *float64      `json:"top_p,omitempty"`
		StopSequences []string      `json:"stop_sequences,omitempty"`
		Tools         []amTool      `json:"tools,omitempty"`
		ToolChoice    *amToolChoice `json:"tool_choice,omitempty"`
		Metadata      *amMetadata   `json:"metadata,omitempty"`
		Stream        bool          `json:"stream,omitempty"`
	}
	amMessage struct {
		Role    string    `json:"role"` // "user" or "assistant"
		Content []amBlock `json:"content"`
	}
	// amBlock is a content block: text, image, tool_use or tool_result.
	amBlock struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		Source    *amSource       `json:"source,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   []amBlock       `json:"content,omitempty"`
	}
	amSource struct {
		Type      string `json:"type"` // "base64" or "url"
		MediaType string `json:"media_type,omitempty"`
		Data      string `json:"data,omitempty"`
		URL       string `json:"url,omitempty"`
	}
	amTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	amToolChoice struct {
		Type                   string `json:"type"` // "auto", "any", "tool" or "none"
		Name                   string `json:"name,omitempty"`
		DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
	}
	amMetadata struct {
		UserID string `json:"user_id"`
	}
)

// The Anthropic answer the relay reads: a message, or its stream's events.
type (
	amResponse struct {
		ID         string       `json:"id"`
		Model      string       `json:"model"`
		Content    []amOutBlock `json:"content"`
		StopReason string       `json:"stop_reason"`
		Usage      amUsage      `json:"usage"`
	}
	amOutBlock struct {
		Type  string          `json:"type"` // "text", "tool_use", "thinking", ...
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	amUsage struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	}
	amError struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
)

// amCall is a translated request and what translating its answer needs.
type amCall struct {
	req amRequest
	// answerTool is the forced tool standing for response_format json_schema: its input is
	// the answer's content. "" when the request has none.
	answerTool   string
	includeUsage bool
}

// toMessages translates an OpenAI chat completion request to a Messages request for model: the
// conversation (readConversation) in Messages' blocks, image URLs as url sources, which
// Anthropic fetches; max_tokens is required, llm.DefaultMaxTokens when the request names none.
// parallel_tool_calls false is said in tool_choice. Errors are *invalidError.
func toMessages(model string, fields map[string]json.RawMessage) (*amCall, error) {
	c, err := readOAChat(fields, llm.ProviderAnthropic)
	if err != nil {
		return nil, err
	}
	conv, err := readConversation(c, dialect[*amSource]{provider: llm.ProviderAnthropic, imageOf: amSourceOf})
	if err != nil {
		return nil, err
	}
	call := &amCall{req: amRequest{Model: model, MaxTokens: llm.DefaultMaxTokens, Temperature: c.Temperature, TopP: c.TopP,
		Stream: c.Stream, StopSequences: c.Stop}, answerTool: conv.answerTool, includeUsage: c.IncludeUsage}
	req := &call.req
	if c.MaxTokens != nil {
		req.MaxTokens = *c.MaxTokens
	}
	if c.User != "" {
		req.Metadata = &amMetadata{UserID: c.User}
	}
	for _, s := range conv.system {
		req.System = append(req.System, amBlock{Type: "text", Text: s})
	}
	for _, t := range conv.turns {
		req.Messages = append(req.Messages, amMessage{Role: t.role, Content: amBlocks(t.blocks)})
	}
	for _, t := range conv.tools {
		req.Tools = append(req.Tools, amTool{Name: t.name, Description: t.description, InputSchema: t.schema})
	}
	if conv.choice.mode != "" {
		req.ToolChoice = &amToolChoice{Type: conv.choice.mode, Name: conv.choice.name}
	}
	if conv.oneCall { // Anthropic says it in tool_choice, which OpenAI's callers usually leave out
		if req.ToolChoice == nil {
			req.ToolChoice = &amToolChoice{Type: "auto"}
		}
		req.ToolChoice.DisableParallelToolUse = true
	}
	return call, nil
}

// amBlocks writes a conversation's blocks as Messages content blocks.
func amBlocks(blocks []block[*amSource]) []amBlock {
	var out []amBlock
	for _, b := range blocks {
		switch b.kind {
		case blockText:
			out = append(out, amBlock{Type: "text", Text: b.text})
		case blockImage:
			out = append(out, amBlock{Type: "image", Source: b.image})
		case blockToolUse:
			out = append(out, amBlock{Type: "tool_use", ID: b.id, Name: b.name, Input: b.input})
		case blockToolResult:
			out = append(out, amBlock{Type: "tool_result", ToolUseID: b.id, Content: amBlocks(b.content)})
		}
	}
	return out
}

// amSourceOf is an image as Messages takes it: a data URL's as a base64 source, passed on as
// it is (Anthropic checks the data and the media type), an http(s) URL as a url source.
func amSourceOf(img image) (*amSource, error) {
	if img.url != "" {
		return &amSource{Type: "url", URL: img.url}, nil
	}
	return &amSource{Type: "base64", MediaType: img.mediaType, Data: img.data}, nil
}

// fromMessages translates a Messages answer to a chat completion. The answer tool's input is
// the message content; other tool_use blocks are tool calls.
func fromMessages(m *amResponse, answerTool, model string, now time.Time) *oaCompletion {
	var (
		text   strings.Builder
		answer json.RawMessage
		calls  []oaToolCall
	)
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			input := cmp.Or(amCompact(b.Input), "{}")
			if answerTool != "" && b.Name == answerTool {
				answer = json.RawMessage(input)
				continue
			}
			calls = append(calls, oaToolCall{ID: b.ID, Type: "function", Function: oaFunctionCall{Name: b.Name, Arguments: input}})
		}
	}
	msg := oaAnswerMessage{Role: "assistant", ToolCalls: calls}
	switch {
	case answer != nil:
		s := string(answer)
		msg.Content = &s
	case text.Len() > 0 || len(calls) == 0:
		s := text.String()
		msg.Content = &s
	}
	return &oaCompletion{
		ID: m.ID, Object: "chat.completion", Created: now.Unix(), Model: cmp.Or(m.Model, model),
		Choices: []oaChoice{{Message: msg, FinishReason: amFinishReason(m.StopReason, len(calls) > 0)}},
		Usage:   m.Usage.openAI(),
	}
}

// amCompact is raw without insignificant space, "" when it is not JSON.
func amCompact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return ""
	}
	return b.String()
}

// amFinishReason translates a stop_reason (https://docs.anthropic.com/en/api/handling-stop-reasons).
// A tool_use stop for the answer tool alone is a finished answer.
func amFinishReason(stop string, toolCalls bool) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		if toolCalls {
			return "tool_calls"
		}
	case "refusal":
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence, pause_turn
}

// openAI translates Anthropic's usage: input_tokens counts only what follows the last cache
// breakpoint, so the prompt is it plus the tokens read from and written to the cache.
func (u amUsage) openAI() oaUsage {
	out := oaUsage{
		PromptTokens:     u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CompletionTokens: u.OutputTokens,
	}
	out.TotalTokens = out.PromptTokens + out.CompletionTokens
	out.PromptTokensDetails.CachedTokens = u.CacheReadInputTokens
	return out
}

// writeMessagesError answers a provider's error (https://docs.anthropic.com/en/api/errors) in
// OpenAI's shape, Retry-After passed on.
func writeMessagesError(w http.ResponseWriter, r *http.Request, provider string, res *http.Response) {
	data, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var e amError
	msg := fmt.Sprintf("%s answered %d %s", provider, res.StatusCode, http.StatusText(res.StatusCode))
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		msg = provider + ": " + e.Error.Message
	}
	status, typ, code := amErrorFor(res.StatusCode)
	if code == "upstream_auth" {
		slog.WarnContext(r.Context(), "gateway: the provider refused the deployment's key", "provider", provider, "status", res.StatusCode)
		msg = fmt.Sprintf("%s refused the deployment's provider key (%d)", provider, res.StatusCode)
	}
	for _, h := range []string{"Retry-After", "Retry-After-Ms"} {
		if v := res.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	writeError(w, status, typ, code, msg, 0)
}

// amErrorFor is the status, type and code of the OpenAI error for an Anthropic error status. A
// refused provider key (401, 403) is the deployment's problem, not the caller's: 502, as
// relayChatCompletions has it. 529 (overloaded) is 503, which OpenAI clients retry.
func amErrorFor(status int) (int, string, string) {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return http.StatusBadGateway, typeServer, "upstream_auth"
	case status == http.StatusTooManyRequests:
		return status, typeRateLimit, "rate_limit_exceeded"
	case status == amStatusOverloaded:
		return http.StatusServiceUnavailable, typeServer, "overloaded"
	case status >= 500:
		return status, typeServer, ""
	case status >= 400:
		return status, typeInvalidRequest, ""
	}
	return http.StatusBadGateway, typeServer, ""
}

// amStatusOverloaded is Anthropic's 529, "overloaded_error".
const amStatusOverloaded = 529

// amErrorStatuses are the statuses of Anthropic's error types, for an error event in a stream.
var amErrorStatuses = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"billing_error":         http.StatusPaymentRequired,
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"request_too_large":     http.StatusRequestEntityTooLarge,
	"rate_limit_error":      http.StatusTooManyRequests,
	"api_error":             http.StatusInternalServerError,
	"timeout_error":         http.StatusGatewayTimeout,
	"overloaded_error":      amStatusOverloaded,
}
