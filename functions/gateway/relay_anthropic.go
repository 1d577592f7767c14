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
// oa* are OpenAI's side of the wire as this relay reads and writes it, am* Anthropic's.

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
	body, err := json.Marshal(call.req)
	if err != nil {
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "", "the request cannot be encoded: "+err.Error(), 0)
		return
	}
	res, err := up.Do(r.Context(), body)
	if err != nil {
		writeError(w, http.StatusBadGateway, typeServer, "upstream_unreachable", fmt.Sprintf("%s cannot be reached: %v", up.Target.Provider, err), 0)
		return
	}
	defer res.Body.Close()
	if id := res.Header.Get("Request-Id"); id != "" {
		reportRequestID(r, id)
	}
	if res.StatusCode/100 != 2 {
		writeMessagesError(w, r, up.Target.Provider, res)
		return
	}
	if call.req.Stream {
		streamMessages(w, r, res.Body, up.Target, call)
		return
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, amMaxAnswerBytes))
	var msg amResponse
	if err == nil {
		err = json.Unmarshal(data, &msg)
	}
	if err != nil {
		slog.WarnContext(r.Context(), "gateway: unreadable answer", "provider", up.Target.Provider, "error", err)
		writeError(w, http.StatusBadGateway, typeServer, "upstream_invalid", up.Target.Provider+"'s answer cannot be read", 0)
		return
	}
	out := fromMessages(&msg, call.answerTool, up.Target.Model, time.Now())
	reportUsage(r, Usage{PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens})
	b, err := json.Marshal(out)
	if err != nil { // only strings, numbers and the provider's valid JSON inputs
		writeError(w, http.StatusBadGateway, typeServer, "upstream_invalid", up.Target.Provider+"'s answer cannot be translated", 0)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// amMaxAnswerBytes bounds a non-streamed answer read from the provider.
const amMaxAnswerBytes = 32 << 20

// amDefaultAnswerTool names the forced tool of a json_schema request without a name.
const amDefaultAnswerTool = "json_answer"

// amJSONObjectInstruction is added to the system prompt for response_format json_object:
// Anthropic has no JSON mode.
const amJSONObjectInstruction = "Answer with a single JSON object and nothing else: no prose, no code fence."

// The OpenAI request, as far as the relay reads it. Polymorphic fields stay raw.
type (
	oaMessage struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"` // a string, content parts, or null
		ToolCalls  []oaToolCall    `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	}
	oaPart struct {
		Type     string     `json:"type"` // "text", "image_url", "refusal", ...
		Text     string     `json:"text"`
		Refusal  string     `json:"refusal"`
		ImageURL oaImageURL `json:"image_url"`
	}
	oaTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	oaToolCall struct {
		ID       string         `json:"id"`
		Type     string         `json:"type"`
		Function oaFunctionCall `json:"function"`
	}
	oaFunctionCall struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	oaFormat struct {
		Type       string `json:"type"` // "text", "json_object" or "json_schema"
		JSONSchema *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
)

// oaImageURL is an image_url part's URL: {"url": ...} as OpenAI has it, or a bare string as
// some clients send.
type oaImageURL string

func (u *oaImageURL) UnmarshalJSON(b []byte) error {
	var v struct {
		URL string `json:"url"`
	}
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, (*string)(u))
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*u = oaImageURL(v.URL)
	return nil
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

// amInvalid is a request the relay cannot translate: a 400 whose message names the parameter.
type amInvalid struct{ msg string }

func (e *amInvalid) Error() string { return e.msg }

func amInvalidf(format string, args ...any) error {
	return &amInvalid{msg: fmt.Sprintf(format, args...)}
}

// amField decodes fields[name] into dst; a missing or null field leaves dst as it is.
func amField(fields map[string]json.RawMessage, name, want string, dst any) error {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return amInvalidf("%s: must be %s", name, want)
	}
	return nil
}

// toMessages translates an OpenAI chat completion request to a Messages request for model.
// System and developer messages become the system prompt (in order, wherever they are);
// consecutive messages of one role are merged into one turn, so that tool results become one
// user turn; response_format json_schema becomes a forced tool (answerTool), json_object an
// instruction in the system prompt. Errors are *amInvalid.
func toMessages(model string, fields map[string]json.RawMessage) (*amCall, error) {
	c, err := readOAChat(fields, llm.ProviderAnthropic)
	if err != nil {
		return nil, err
	}
	call := &amCall{req: amRequest{Model: model, MaxTokens: llm.DefaultMaxTokens, Temperature: c.Temperature, TopP: c.TopP,
		Stream: c.Stream, StopSequences: c.Stop}, includeUsage: c.IncludeUsage}
	req := &call.req
	if c.MaxTokens != nil {
		req.MaxTokens = *c.MaxTokens
	}
	if c.User != "" {
		req.Metadata = &amMetadata{UserID: c.User}
	}
	for i, m := range c.Messages {
		if err := amAddMessage(req, i, m); err != nil {
			return nil, err
		}
	}
	for i, t := range c.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return nil, amInvalidf("tools[%d]: only function tools with a name are translated", i)
		}
		req.Tools = append(req.Tools, amTool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: amInputSchema(t.Function.Parameters)})
	}
	if req.ToolChoice, err = amToolChoiceOf(c.ToolChoice, req.Tools); err != nil {
		return nil, err
	}
	if c.Parallel != nil && !*c.Parallel && len(req.Tools) > 0 {
		// Anthropic says it in tool_choice, which OpenAI's callers usually leave out.
		if req.ToolChoice == nil {
			req.ToolChoice = &amToolChoice{Type: "auto"}
		}
		req.ToolChoice.DisableParallelToolUse = req.ToolChoice.Type != "none"
	}
	return call, amAddFormat(call, c.Format)
}

// amAddMessage appends OpenAI message i to req: to the system prompt, or as blocks of a turn.
func amAddMessage(req *amRequest, i int, m oaMessage) error {
	text, parts, err := amContent(m.Content)
	if err != nil {
		return amInvalidf("messages[%d].content: %v", i, err)
	}
	var blocks []amBlock
	role := m.Role
	switch m.Role {
	case "system", "developer":
		if text != "" {
			req.System = append(req.System, amBlock{Type: "text", Text: text})
		}
		for j, p := range parts {
			if p.Type != "text" {
				return amInvalidf("messages[%d].content[%d].type: a %s message takes text parts only", i, j, m.Role)
			}
			if p.Text != "" {
				req.System = append(req.System, amBlock{Type: "text", Text: p.Text})
			}
		}
		return nil
	case "user", "assistant":
		if blocks, err = amBlocks(text, parts, m.Role); err != nil {
			return amInvalidf("messages[%d].content%v", i, err)
		}
		if m.Role == "user" && len(m.ToolCalls) > 0 {
			return amInvalidf("messages[%d].tool_calls: only assistant messages make tool calls", i)
		}
		for j, tc := range m.ToolCalls {
			input, err := amToolInput(tc.Function.Arguments)
			if err != nil || tc.ID == "" || tc.Function.Name == "" {
				return amInvalidf("messages[%d].tool_calls[%d]: want an id, a function name and arguments that are a JSON object", i, j)
			}
			blocks = append(blocks, amBlock{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: input})
		}
	case "tool":
		if m.ToolCallID == "" {
			return amInvalidf("messages[%d].tool_call_id: required in a tool message", i)
		}
		result := amBlock{Type: "tool_result", ToolUseID: m.ToolCallID}
		if result.Content, err = amBlocks(text, parts, m.Role); err != nil {
			return amInvalidf("messages[%d].content%v", i, err)
		}
		blocks, role = []amBlock{result}, "user"
	default:
		return amInvalidf("messages[%d].role: %q is not translated (want system, developer, user, assistant or tool)", i, m.Role)
	}
	if len(blocks) == 0 { // Anthropic refuses empty turns: an empty message says nothing
		return nil
	}
	if last := len(req.Messages) - 1; last >= 0 && req.Messages[last].Role == role {
		req.Messages[last].Content = append(req.Messages[last].Content, blocks...)
		return nil
	}
	req.Messages = append(req.Messages, amMessage{Role: role, Content: blocks})
	return nil
}

// amContent reads a message's content: a string, an array of parts, or null.
func amContent(raw json.RawMessage) (string, []oaPart, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", nil, fmt.Errorf("not a valid string")
		}
		return s, nil, nil
	case raw[0] == '[':
		var parts []oaPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", nil, fmt.Errorf("not a valid array of content parts")
		}
		return "", parts, nil
	}
	return "", nil, fmt.Errorf("must be a string or an array of content parts")
}

// amBlocks translates a user, assistant or tool message's content; an error starts with
// the part it is about ("[2].image_url: ...").
func amBlocks(text string, parts []oaPart, role string) ([]amBlock, error) {
	if text != "" {
		return []amBlock{{Type: "text", Text: text}}, nil
	}
	var blocks []amBlock
	for j, p := range parts {
		switch {
		case p.Type == "text" || (p.Type == "refusal" && role == "assistant"):
			if t := p.Text + p.Refusal; t != "" {
				blocks = append(blocks, amBlock{Type: "text", Text: t})
			}
		case p.Type == "image_url" && role == "user":
			src, err := amImageSource(string(p.ImageURL))
			if err != nil {
				return nil, fmt.Errorf("[%d].image_url: %v", j, err)
			}
			blocks = append(blocks, amBlock{Type: "image", Source: src})
		default:
			return nil, fmt.Errorf("[%d].type: %q parts of a %s message are not translated to %s", j, p.Type, role, llm.ProviderAnthropic)
		}
	}
	return blocks, nil
}

// amImageSource translates an image URL: a data: URL to a base64 source (passed on as it is:
// Anthropic checks the data and the media type), an http(s) URL to a url source, which
// Anthropic fetches.
func amImageSource(url string) (*amSource, error) {
	if meta, data, ok := strings.Cut(url, ","); ok && len(meta) > 5 && strings.EqualFold(meta[:5], "data:") {
		mediaType, isBase64 := strings.CutSuffix(meta[5:], ";base64")
		if !isBase64 || mediaType == "" || data == "" {
			return nil, fmt.Errorf("a data URL must be data:<media type>;base64,<data>")
		}
		return &amSource{Type: "base64", MediaType: strings.ToLower(mediaType), Data: data}, nil
	}
	lower := strings.ToLower(url[:min(len(url), 8)])
	if strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://") {
		return &amSource{Type: "url", URL: url}, nil
	}
	return nil, fmt.Errorf("want an http(s) URL or a base64 data URL")
}

// amToolInput is a tool call's arguments as a tool_use input: a JSON object ("" is {}).
func amToolInput(arguments string) (json.RawMessage, error) {
	in := bytes.TrimSpace([]byte(arguments))
	if len(in) == 0 {
		return json.RawMessage("{}"), nil
	}
	if in[0] != '{' || !json.Valid(in) {
		return nil, fmt.Errorf("not a JSON object")
	}
	return in, nil
}

// amInputSchema is a JSON schema as Anthropic's input_schema, which must say "type": "object":
// none (null) is an object without properties, and an object schema without a type, such as
// the "parameters": {} OpenAI takes for a function without parameters, gets it. Anything else
// is passed on for Anthropic to judge.
func amInputSchema(schema json.RawMessage) json.RawMessage {
	if s := bytes.TrimSpace(schema); len(s) == 0 || string(s) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(schema, &fields) != nil || fields == nil || fields["type"] != nil {
		return schema
	}
	fields["type"] = json.RawMessage(`"object"`)
	b, err := json.Marshal(fields)
	if err != nil {
		return schema
	}
	return b
}

// amStopSequences reads stop: a string, an array of strings, or null.
func amStopSequences(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if raw[0] == '"' && json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, amInvalidf("stop: must be a string or an array of strings")
	}
	return list, nil
}

// amToolChoiceOf translates tool_choice: "auto", "none", "required" (Anthropic's "any") or
// {"type": "function", "function": {"name": ...}} (Anthropic's "tool").
func amToolChoiceOf(raw json.RawMessage, tools []amTool) (*amToolChoice, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var mode string
	if raw[0] == '"' && json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "auto", "none":
			if len(tools) == 0 {
				return nil, nil // nothing to choose from: Anthropic wants no tool_choice then
			}
			return &amToolChoice{Type: mode}, nil
		case "required":
			if len(tools) == 0 {
				return nil, amInvalidf("tool_choice: \"required\" needs tools")
			}
			return &amToolChoice{Type: "any"}, nil
		}
		return nil, amInvalidf("tool_choice: %q is not one of auto, none, required", mode)
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &named); err != nil || named.Type != "function" || named.Function.Name == "" {
		return nil, amInvalidf("tool_choice: want auto, none, required or {\"type\": \"function\", \"function\": {\"name\": ...}}")
	}
	for _, t := range tools {
		if t.Name == named.Function.Name {
			return &amToolChoice{Type: "tool", Name: t.Name}, nil
		}
	}
	return nil, amInvalidf("tool_choice: %q is not among the tools", named.Function.Name)
}

// amAddFormat translates response_format. json_schema becomes a tool whose input_schema is the
// schema, forced when the request has no tools of its own; with tools, the model must call one
// of them or the answer tool ("any"), unless tool_choice names a tool already.
func amAddFormat(call *amCall, f oaFormat) error {
	req := &call.req
	switch f.Type {
	case "", "text":
		return nil
	case "json_object":
		req.System = append(req.System, amBlock{Type: "text", Text: amJSONObjectInstruction})
		return nil
	case "json_schema":
	default:
		return amInvalidf("response_format.type: %q is not one of text, json_object, json_schema", f.Type)
	}
	if f.JSONSchema == nil {
		return amInvalidf("response_format.json_schema: required with type json_schema")
	}
	s := f.JSONSchema
	tool := amTool{Name: cmp.Or(s.Name, amDefaultAnswerTool), InputSchema: amInputSchema(s.Schema),
		Description: cmp.Or(s.Description, "Give your answer: the input is the answer, following the schema.")}
	for _, t := range req.Tools {
		if t.Name == tool.Name {
			return amInvalidf("response_format.json_schema.name: %q is also the name of a tool", tool.Name)
		}
	}
	call.answerTool = tool.Name
	choice := req.ToolChoice
	switch {
	case len(req.Tools) == 0 || (choice != nil && choice.Type == "none"):
		req.ToolChoice = &amToolChoice{Type: "tool", Name: tool.Name}
	case choice == nil || choice.Type == "auto":
		req.ToolChoice = &amToolChoice{Type: "any"}
	}
	if choice != nil {
		req.ToolChoice.DisableParallelToolUse = choice.DisableParallelToolUse
	}
	req.Tools = append(req.Tools, tool)
	return nil
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
