package fakemodel

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The Anthropic Messages wire types (https://docs.anthropic.com/en/api/messages), as far as
// the server reads and writes them.
type (
	messagesRequest struct {
		Model        string            `json:"model"`
		MaxTokens    *int              `json:"max_tokens"`
		System       json.RawMessage   `json:"system"` // a string or text blocks
		Messages     *[]anthropicInput `json:"messages"`
		Temperature  *float64          `json:"temperature"`
		Tools        []anthropicTool   `json:"tools"`
		ToolChoice   *anthropicChoice  `json:"tool_choice"`
		Stream       bool              `json:"stream"`
		OutputFormat *anthropicFormat  `json:"output_format"` // the structured-outputs beta
		OutputConfig *struct {
			Format *anthropicFormat `json:"format"`
		} `json:"output_config"`
	}
	anthropicInput struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or content blocks
	}
	anthropicBlock struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		Source *struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
		Content json.RawMessage `json:"content"` // of a tool_result: a string or blocks
	}
	anthropicTool struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	anthropicChoice struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	anthropicFormat struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	}

	anthropicMessage struct {
		ID           string              `json:"id"`
		Type         string              `json:"type"`
		Role         string              `json:"role"`
		Model        string              `json:"model"`
		Content      []anthropicOutBlock `json:"content"`
		StopReason   *string             `json:"stop_reason"`
		StopSequence *string             `json:"stop_sequence"`
		Usage        anthropicUsage      `json:"usage"`
	}
	anthropicOutBlock struct {
		Type  string          `json:"type"`
		Text  *string         `json:"text,omitempty"`
		ID    string          `json:"id,omitempty"`
		Name  string          `json:"name,omitempty"`
		Input json.RawMessage `json:"input,omitempty"`
	}
	anthropicUsage struct {
		InputTokens              int    `json:"input_tokens"`
		OutputTokens             int    `json:"output_tokens"`
		CacheCreationInputTokens int    `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int    `json:"cache_read_input_tokens"`
		ServiceTier              string `json:"service_tier"`
	}
)

// imageTypes are the media types Anthropic accepts for base64 images.
var imageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// messages serves POST /v1/messages.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, status, msg := readBody(r)
	c := Call{API: Anthropic, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if status != 0 {
		s.refuse(w, &c, status, errorDetail{message: msg})
		return
	}
	if key, header := requestKey(r, Anthropic); s.checkKey(key, header) != "" {
		s.refuse(w, &c, http.StatusUnauthorized, errorDetail{message: s.checkKey(key, header)})
		return
	}
	if r.Header.Get("anthropic-version") == "" {
		s.refuse(w, &c, http.StatusBadRequest, errorDetail{message: "anthropic-version: header is required"})
		return
	}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.refuse(w, &c, http.StatusBadRequest, errorDetail{message: "invalid JSON body: " + err.Error()})
		return
	}
	if err := readMessages(&c, &req); err != nil {
		var bad *badRequest
		errors.As(err, &bad)
		s.refuse(w, &c, http.StatusBadRequest, errorDetail{message: bad.msg})
		return
	}
	if !s.knows(c.Model) {
		s.refuse(w, &c, http.StatusNotFound, errorDetail{message: "model: " + c.Model})
		return
	}
	a, ok := s.answer(w, r, &c, Anthropic)
	if !ok {
		return
	}
	out := anthropicMessage{
		ID: "msg_" + a.id, Type: "message", Role: "assistant", Model: c.Model,
		Usage: anthropicUsage{
			// input_tokens counts only what was not read from the cache.
			InputTokens: a.promptTokens - a.cached, CacheReadInputTokens: a.cached,
			OutputTokens: a.completionTokens, ServiceTier: "standard",
		},
	}
	stop := "end_turn"
	block := anthropicOutBlock{Type: "text", Text: &a.text}
	switch {
	case a.kind == kindRefusal:
		stop = "refusal"
	case a.kind == kindTool && (a.truncated || json.Valid([]byte(a.text))):
		// A tool call cut short has no usable input; a reply that is not JSON is not a call.
		stop = "tool_use"
		input := json.RawMessage(a.text)
		if a.truncated || !json.Valid(input) {
			input = json.RawMessage("{}")
		}
		block = anthropicOutBlock{Type: "tool_use", ID: "toolu_" + a.id, Name: c.SchemaName, Input: input}
	}
	if a.truncated {
		stop = "max_tokens"
	}
	out.Content = []anthropicOutBlock{block}
	out.StopReason = &stop
	if req.Stream {
		streamMessage(w, r, out, a.chunkInterval)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// streamMessage writes the message as Anthropic's Server-Sent Events
// (https://docs.anthropic.com/en/docs/build-with-claude/streaming).
func streamMessage(w http.ResponseWriter, r *http.Request, m anthropicMessage, interval time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	pace := pacer{ctx: r.Context(), interval: interval}
	send := func(event string, v any) {
		if !pace.next() {
			return
		}
		b, _ := json.Marshal(v) // the server's own types
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		flush(w)
	}
	block, stop, usage := m.Content[0], m.StopReason, m.Usage
	start := m
	start.Content, start.StopReason = []anthropicOutBlock{}, nil
	start.Usage.OutputTokens = 1
	send("message_start", map[string]any{"type": "message_start", "message": start})
	opened, deltaType, field, text := block, "text_delta", "text", ""
	if block.Type == "tool_use" {
		opened.Input = json.RawMessage("{}")
		deltaType, field, text = "input_json_delta", "partial_json", string(block.Input)
	} else {
		empty := ""
		opened.Text = &empty
		text = *block.Text
	}
	send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": opened})
	send("ping", map[string]string{"type": "ping"})
	for _, p := range pieces(text) {
		send("content_block_delta", map[string]any{
			"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": deltaType, field: p},
		})
	}
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": usage.OutputTokens},
	})
	send("message_stop", map[string]string{"type": "message_stop"})
}

// readMessages fills c from an Anthropic request and checks it as the API does.
func readMessages(c *Call, req *messagesRequest) error {
	c.Model, c.Temperature, c.Stream = req.Model, req.Temperature, req.Stream
	if req.MaxTokens != nil {
		c.MaxTokens = *req.MaxTokens
	}
	system, _, err := anthropicContent(req.System, "system")
	if err != nil {
		return err
	}
	c.System = system
	switch {
	case req.Model == "":
		return invalid("model", "model: Field required")
	case req.MaxTokens == nil:
		return invalid("max_tokens", "max_tokens: Field required")
	case *req.MaxTokens < 1:
		return invalid("max_tokens", "max_tokens: Input should be greater than or equal to 1")
	case req.Messages == nil:
		return invalid("messages", "messages: Field required")
	case len(*req.Messages) == 0:
		return invalid("messages", "messages: at least one message is required")
	case req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 1):
		return invalid("temperature", "temperature: Input should be between 0 and 1")
	}
	for i, m := range *req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return invalid("messages", "messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		text, images, err := anthropicContent(m.Content, fmt.Sprintf("messages.%d.content", i))
		if err != nil {
			return err
		}
		c.Messages = append(c.Messages, Message{Role: m.Role, Text: text, Images: images})
	}
	for i, t := range req.Tools {
		if t.Name == "" {
			return invalid("tools", "tools.%d.name: Field required", i)
		}
		c.Tools = append(c.Tools, t.Name)
	}
	format := req.OutputFormat
	if req.OutputConfig != nil && req.OutputConfig.Format != nil {
		format = req.OutputConfig.Format
	}
	if format != nil {
		if format.Type != "json_schema" {
			return invalid("output_config.format.type", "output_config.format.type: Input should be 'json_schema'")
		}
		c.Format, c.Schema = FormatJSONSchema, compact(format.Schema)
	}
	if ch := req.ToolChoice; ch != nil {
		switch ch.Type {
		case "auto", "none":
		case "any":
			if len(req.Tools) == 0 {
				return invalid("tool_choice", "tool_choice: 'any' requires tools")
			}
			c.Format, c.SchemaName, c.Schema = FormatTool, req.Tools[0].Name, compact(req.Tools[0].InputSchema)
		case "tool":
			i := slices.IndexFunc(req.Tools, func(t anthropicTool) bool { return t.Name == ch.Name })
			if i < 0 {
				return invalid("tool_choice", "tool_choice.name: tool '%s' is not among the tools provided", ch.Name)
			}
			c.Format, c.SchemaName, c.Schema = FormatTool, ch.Name, compact(req.Tools[i].InputSchema)
		default:
			return invalid("tool_choice", "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
		}
	}
	return nil
}

// anthropicContent reads a string or an array of content blocks: text blocks give the text,
// tool results their content's text, and base64 images are checked and counted.
func anthropicContent(raw json.RawMessage, where string) (text string, images int, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, nil
	}
	if raw[0] == '"' {
		err := json.Unmarshal(raw, &text)
		return text, 0, err
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", 0, invalid(where, "%s: Input should be a valid string or a list of content blocks", where)
	}
	var texts []string
	for j, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_result":
			t, n, err := anthropicContent(b.Content, fmt.Sprintf("%s.%d.content", where, j))
			if err != nil {
				return "", 0, err
			}
			texts, images = append(texts, t), images+n
		case "image":
			if err := checkImage(b, fmt.Sprintf("%s.%d", where, j)); err != nil {
				return "", 0, err
			}
			images++
		}
	}
	return strings.Join(texts, "\n"), images, nil
}

func checkImage(b anthropicBlock, where string) error {
	if b.Source == nil {
		return invalid(where, "%s.source: Field required", where)
	}
	switch b.Source.Type {
	case "url":
		return nil
	case "base64":
		if !slices.Contains(imageTypes, b.Source.MediaType) {
			return invalid(where, "%s.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'", where)
		}
		if _, err := base64.StdEncoding.DecodeString(b.Source.Data); err != nil || b.Source.Data == "" {
			return invalid(where, "%s.source.base64.data: invalid base64 data", where)
		}
		return nil
	}
	return invalid(where, "%s.source.type: Input should be 'base64' or 'url'", where)
}
