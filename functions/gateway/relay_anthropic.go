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
	"github.com/plumehq/plume/shared/llm/wire"
)

// This file translates OpenAI's Chat Completions (https://platform.openai.com/docs/api-reference/chat)
// to Anthropic's Messages (https://docs.anthropic.com/en/api/messages) and back, both sides of
// the wire in package wire (wire.Chat*, wire.Messages*). The request is read as a
// conversation (conversation.go), which toMessages writes in Messages' words.

// relayMessages serves a chat completion with Anthropic's Messages API: the request
// translated (toMessages), sent with the deployment's key, the answer translated back, a
// stream event by event as it arrives (relay_anthropic_stream.go). What cannot be translated
// (n > 1, audio and file parts, the legacy functions) is refused with 400 before any call.
func relayMessages(w http.ResponseWriter, r *http.Request, up llm.Upstream, req *chatRequest, traced bool) outcome {
	call, err := toMessages(up.Target.Model, req.fields)
	if err != nil {
		return outcome{}.failed(w, http.StatusBadRequest, typeInvalidRequest, "", err.Error())
	}
	body, err := appendMessagesRequest(make([]byte, 0, 512), &call.req)
	if err != nil {
		return outcome{}.failed(w, http.StatusBadRequest, typeInvalidRequest, "", "the request cannot be encoded: "+err.Error())
	}
	res, out, ok := send(w, r, up, body, call.req.Stream)
	if !ok {
		return out
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return writeMessagesError(w, r, up.Target.Provider, res, out)
	}
	if call.req.Stream {
		return streamMessages(w, r, res.Body, up.Target, call, out, traced)
	}
	var msg wire.MessagesResponse
	if !readAnswer(r, up.Target.Provider, res.Body, &msg) {
		return out.failed(w, http.StatusBadGateway, typeServer, "upstream_invalid", up.Target.Provider+"'s answer cannot be read")
	}
	return writeCompletion(w, up.Target.Provider, fromMessages(&msg, call.answerTool, up.Target.Model, time.Now()), out, traced)
}

// maxAnswerBytes bounds a non-streamed answer read from a translating relay's provider.
const maxAnswerBytes = 32 << 20

// readAnswer reads a translating relay's non-streamed answer from provider into v; an answer
// that cannot be read is logged, and readAnswer reports false.
func readAnswer(r *http.Request, provider string, body io.Reader, v any) bool {
	data, err := io.ReadAll(io.LimitReader(body, maxAnswerBytes))
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		slog.WarnContext(r.Context(), "gateway: unreadable answer", "provider", provider, "error", err)
		return false
	}
	return true
}

// writeCompletion answers with c, a translating relay's completion, and returns out with its
// usage and, when traced, the answer read from c.
func writeCompletion(w http.ResponseWriter, provider string, c *wire.ChatCompletion, out outcome, traced bool) outcome {
	out = out.metered(Usage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens})
	b, err := json.Marshal(c)
	if err != nil { // only strings, numbers and the provider's valid JSON inputs
		return out.failed(w, http.StatusBadGateway, typeServer, "upstream_invalid", provider+"'s answer cannot be translated")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(b); err == nil && traced {
		var rd answerReader
		rd.completion(c)
		a := rd.answer()
		out.answer = &a
	}
	return out
}

// amCall is a translated request and what translating its answer needs.
type amCall struct {
	req wire.MessagesRequest
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
	conv, err := readConversation(c, dialect[*wire.MessagesSource]{provider: llm.ProviderAnthropic, imageOf: amSourceOf})
	if err != nil {
		return nil, err
	}
	call := &amCall{req: wire.MessagesRequest{Model: model, MaxTokens: llm.DefaultMaxTokens, Temperature: c.Temperature, TopP: c.TopP,
		Stream: c.Stream, StopSequences: c.Stop}, answerTool: conv.answerTool, includeUsage: c.IncludeUsage}
	req := &call.req
	if c.MaxTokens != nil {
		req.MaxTokens = *c.MaxTokens
	}
	if c.User != "" {
		req.Metadata = &wire.MessagesMetadata{UserID: c.User}
	}
	for _, s := range conv.system {
		req.System = append(req.System, wire.MessagesBlock{Type: "text", Text: s})
	}
	for _, t := range conv.turns {
		req.Messages = append(req.Messages, wire.MessagesMessage{Role: t.role, Content: amBlocks(t.blocks)})
	}
	for _, t := range conv.tools {
		req.Tools = append(req.Tools, wire.MessagesTool{Name: t.name, Description: t.description, InputSchema: t.schema})
	}
	if conv.choice.mode != "" {
		req.ToolChoice = &wire.MessagesToolChoice{Type: conv.choice.mode, Name: conv.choice.name}
	}
	if conv.oneCall { // Anthropic says it in tool_choice, which OpenAI's callers usually leave out
		if req.ToolChoice == nil {
			req.ToolChoice = &wire.MessagesToolChoice{Type: "auto"}
		}
		req.ToolChoice.DisableParallelToolUse = true
	}
	return call, nil
}

// amBlocks writes a conversation's blocks as Messages content blocks.
func amBlocks(blocks []block[*wire.MessagesSource]) []wire.MessagesBlock {
	var out []wire.MessagesBlock
	for _, b := range blocks {
		switch b.kind {
		case blockText:
			out = append(out, wire.MessagesBlock{Type: "text", Text: b.text})
		case blockImage:
			out = append(out, wire.MessagesBlock{Type: "image", Source: b.image})
		case blockToolUse:
			out = append(out, wire.MessagesBlock{Type: "tool_use", ID: b.id, Name: b.name, Input: b.input})
		case blockToolResult:
			out = append(out, wire.MessagesBlock{Type: "tool_result", ToolUseID: b.id, Content: amBlocks(b.content)})
		}
	}
	return out
}

// amSourceOf is an image as Messages takes it: a data URL's as a base64 source, passed on as
// it is (Anthropic checks the data and the media type), an http(s) URL as a url source.
func amSourceOf(img image) (*wire.MessagesSource, error) {
	if img.url != "" {
		return &wire.MessagesSource{Type: "url", URL: img.url}, nil
	}
	return &wire.MessagesSource{Type: "base64", MediaType: img.mediaType, Data: img.data}, nil
}

// fromMessages translates a Messages answer to a chat completion. The answer tool's input is
// the message content; other tool_use blocks are tool calls.
func fromMessages(m *wire.MessagesResponse, answerTool, model string, now time.Time) *wire.ChatCompletion {
	var (
		text   strings.Builder
		answer json.RawMessage
		calls  []wire.ChatToolCall
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
			calls = append(calls, wire.ChatToolCall{ID: b.ID, Type: "function", Function: wire.ChatFunctionCall{Name: b.Name, Arguments: input}})
		}
	}
	msg := wire.ChatAnswerMessage{Role: "assistant", ToolCalls: calls}
	switch {
	case answer != nil:
		msg.Content = ptr(wire.ChatText(answer))
	case text.Len() > 0 || len(calls) == 0:
		msg.Content = ptr(wire.ChatText(text.String()))
	}
	return &wire.ChatCompletion{
		ID: m.ID, Object: "chat.completion", Created: now.Unix(), Model: cmp.Or(m.Model, model),
		Choices: []wire.ChatChoice{{Message: msg, FinishReason: amFinishReason(m.StopReason, len(calls) > 0)}},
		Usage:   ptr(chatUsage(m.Usage)),
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

// chatUsage translates Anthropic's usage: input_tokens counts only what follows the last cache
// breakpoint, so the prompt is it plus the tokens read from and written to the cache.
func chatUsage(u wire.MessagesUsage) wire.ChatUsage {
	out := wire.ChatUsage{
		PromptTokens:     u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CompletionTokens: u.OutputTokens,
	}
	out.TotalTokens = out.PromptTokens + out.CompletionTokens
	out.PromptTokensDetails.CachedTokens = u.CacheReadInputTokens
	return out
}

// writeMessagesError answers a provider's error (https://docs.anthropic.com/en/api/errors) in
// OpenAI's shape, Retry-After passed on, and returns out failed so.
func writeMessagesError(w http.ResponseWriter, r *http.Request, provider string, res *http.Response, out outcome) outcome {
	data, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var e wire.MessagesErrorBody
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
	return out.failed(w, status, typ, code, msg)
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
