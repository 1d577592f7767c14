package fakemodel

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The OpenAI Chat Completions wire types
// (https://platform.openai.com/docs/api-reference/chat/create), as far as the server reads
// and writes them.
type (
	chatRequest struct {
		Model               string          `json:"model"`
		Messages            []chatMessage   `json:"messages"`
		Temperature         *float64        `json:"temperature"`
		MaxTokens           *int            `json:"max_tokens"`
		MaxCompletionTokens *int            `json:"max_completion_tokens"`
		ResponseFormat      *responseFormat `json:"response_format"`
		Stream              bool            `json:"stream"`
		StreamOptions       *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Tools      []chatTool      `json:"tools"`
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	chatMessage struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string, an array of parts, or null
	}
	chatPart struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Refusal  string `json:"refusal"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	responseFormat struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"json_schema"`
	}
	chatTool struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}

	chatCompletion struct {
		ID                string       `json:"id"`
		Object            string       `json:"object"`
		Created           int64        `json:"created"`
		Model             string       `json:"model"`
		Choices           []chatChoice `json:"choices"`
		Usage             *chatUsage   `json:"usage,omitempty"`
		SystemFingerprint string       `json:"system_fingerprint"`
		ServiceTier       string       `json:"service_tier"`
	}
	chatChoice struct {
		Index        int        `json:"index"`
		Message      *chatOut   `json:"message,omitempty"`
		Delta        *chatDelta `json:"delta,omitempty"`
		Logprobs     *struct{}  `json:"logprobs"`
		FinishReason *string    `json:"finish_reason"`
	}
	chatOut struct {
		Role        string         `json:"role"`
		Content     *string        `json:"content"`
		Refusal     *string        `json:"refusal"`
		ToolCalls   []chatToolCall `json:"tool_calls,omitempty"`
		Annotations []struct{}     `json:"annotations"`
	}
	chatDelta struct {
		Role      string         `json:"role,omitempty"`
		Content   *string        `json:"content,omitempty"`
		Refusal   *string        `json:"refusal,omitempty"`
		ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
	}
	chatToolCall struct {
		Index    *int   `json:"index,omitempty"` // in stream deltas only
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	chatUsage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
			AudioTokens  int `json:"audio_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens          int `json:"reasoning_tokens"`
			AudioTokens              int `json:"audio_tokens"`
			AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
			RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
		} `json:"completion_tokens_details"`
	}
)

// chatCompletions serves POST /v1/chat/completions.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	body, status, msg := readBody(r)
	c := Call{API: OpenAI, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if status != 0 {
		s.refuse(w, &c, status, errorDetail{message: msg})
		return
	}
	if key, header := requestKey(r, OpenAI); s.checkKey(key, header) != "" {
		s.refuse(w, &c, http.StatusUnauthorized, errorDetail{message: s.checkKey(key, header), code: "invalid_api_key"})
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.refuse(w, &c, http.StatusBadRequest, errorDetail{message: "We could not parse the JSON body of your request: " + err.Error()})
		return
	}
	named, err := readChat(&c, &req)
	if err != nil {
		var bad *badRequest
		errors.As(err, &bad)
		s.refuse(w, &c, http.StatusBadRequest, errorDetail{message: bad.msg, param: bad.param})
		return
	}
	if !s.knows(c.Model) {
		s.refuse(w, &c, http.StatusNotFound, errorDetail{
			message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", c.Model), code: "model_not_found",
		})
		return
	}
	a, ok := s.answer(w, r, &c, OpenAI)
	if !ok {
		return
	}
	finish := "stop"
	switch {
	case a.truncated:
		finish = "length"
	case a.kind == kindTool && !named:
		// A function named by tool_choice ends with "stop"; one the model chose with "tool_calls".
		finish = "tool_calls"
	}
	if req.Stream {
		s.streamChat(w, r, &c, a, finish, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	out := chatOut{Role: "assistant", Annotations: []struct{}{}}
	switch a.kind {
	case kindRefusal:
		out.Refusal = &a.text
	case kindTool:
		call := chatToolCall{ID: "call_" + a.id, Type: "function"}
		call.Function.Name, call.Function.Arguments = c.SchemaName, a.text
		out.ToolCalls = []chatToolCall{call}
	default:
		out.Content = &a.text
	}
	resp := s.chunk(&c, a, "chat.completion")
	resp.Choices = []chatChoice{{Message: &out, FinishReason: &finish}}
	resp.Usage = openAIUsage(a)
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) chunk(c *Call, a answer, object string) chatCompletion {
	return chatCompletion{
		ID: "chatcmpl-" + a.id, Object: object, Created: s.now().Unix(), Model: c.Model,
		SystemFingerprint: "fp_fakemodel", ServiceTier: "default",
	}
}

func openAIUsage(a answer) *chatUsage {
	u := &chatUsage{PromptTokens: a.promptTokens, CompletionTokens: a.completionTokens, TotalTokens: a.promptTokens + a.completionTokens}
	u.PromptTokensDetails.CachedTokens = a.cached
	return u
}

// streamChat writes the answer as Server-Sent Events of chat.completion.chunk objects, ending
// with data: [DONE] (https://platform.openai.com/docs/api-reference/chat-streaming).
func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, c *Call, a answer, finish string, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	pace := pacer{ctx: r.Context(), interval: a.chunkInterval}
	send := func(v any) {
		if !pace.next() {
			return
		}
		b, _ := json.Marshal(v) // the server's own types
		fmt.Fprintf(w, "data: %s\n\n", b)
		flush(w)
	}
	delta := func(d chatDelta, finish *string) {
		ch := s.chunk(c, a, "chat.completion.chunk")
		ch.Choices = []chatChoice{{Delta: &d, FinishReason: finish}}
		send(ch)
	}
	empty, zero := "", 0
	first := chatDelta{Role: "assistant"}
	switch a.kind {
	case kindRefusal:
		first.Refusal = &empty
	case kindTool:
		call := chatToolCall{Index: &zero, ID: "call_" + a.id, Type: "function"}
		call.Function.Name = c.SchemaName
		first.ToolCalls = []chatToolCall{call}
	default:
		first.Content = &empty
	}
	delta(first, nil)
	for _, p := range pieces(a.text) {
		d := chatDelta{}
		switch a.kind {
		case kindRefusal:
			d.Refusal = &p
		case kindTool:
			call := chatToolCall{Index: &zero}
			call.Function.Arguments = p
			d.ToolCalls = []chatToolCall{call}
		default:
			d.Content = &p
		}
		delta(d, nil)
	}
	delta(chatDelta{}, &finish)
	if includeUsage {
		ch := s.chunk(c, a, "chat.completion.chunk")
		ch.Choices = []chatChoice{}
		ch.Usage = openAIUsage(a)
		send(ch)
	}
	if pace.next() {
		fmt.Fprint(w, "data: [DONE]\n\n")
		flush(w)
	}
}

// readChat fills c from an OpenAI request and checks it as the API does. named reports a
// tool_choice that names its function.
func readChat(c *Call, req *chatRequest) (named bool, err error) {
	c.Model, c.Temperature, c.Stream = req.Model, req.Temperature, req.Stream
	if req.MaxCompletionTokens != nil {
		c.MaxTokens = *req.MaxCompletionTokens
	} else if req.MaxTokens != nil {
		c.MaxTokens = *req.MaxTokens
	}
	var system []string
	for i, m := range req.Messages {
		text, images, err := chatContent(m.Content, i)
		if err != nil {
			return false, err
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user", "assistant", "tool", "function":
		default:
			return false, invalid(fmt.Sprintf("messages[%d].role", i), "Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function' and 'developer'.", m.Role)
		}
		c.Messages = append(c.Messages, Message{Role: m.Role, Text: text, Images: images})
	}
	c.System = strings.Join(system, "\n")
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, t.Function.Name)
	}
	switch {
	case req.Model == "":
		return false, invalid("model", "you must provide a model parameter")
	case len(req.Messages) == 0:
		return false, invalid("messages", "[] is too short - 'messages'")
	case req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 2):
		return false, invalid("temperature", "Invalid 'temperature': expected a value between 0 and 2, but got %v instead.", *req.Temperature)
	case req.StreamOptions != nil && !req.Stream:
		return false, invalid("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	case c.MaxTokens < 0:
		return false, invalid("max_tokens", "Invalid 'max_tokens': integer below minimum value.")
	}
	if f := req.ResponseFormat; f != nil {
		switch f.Type {
		case "text":
		case "json_object":
			if !mentionsJSON(c) {
				return false, invalid("messages", "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.")
			}
			c.Format = FormatJSONObject
		case "json_schema":
			if f.JSONSchema == nil {
				return false, invalid("response_format.json_schema", "Missing required parameter: 'response_format.json_schema'.")
			}
			if f.JSONSchema.Name == "" {
				return false, invalid("response_format.json_schema.name", "Missing required parameter: 'response_format.json_schema.name'.")
			}
			c.Format, c.SchemaName, c.Schema = FormatJSONSchema, f.JSONSchema.Name, compact(f.JSONSchema.Schema)
		default:
			return false, invalid("response_format.type", "Invalid value: '%s'. Supported values are: 'json_object', 'json_schema', and 'text'.", f.Type)
		}
	}
	return chatToolChoice(c, req)
}

// chatToolChoice applies tool_choice: "required" or a named function forces a tool call.
func chatToolChoice(c *Call, req *chatRequest) (named bool, err error) {
	if len(req.ToolChoice) == 0 || string(req.ToolChoice) == "null" {
		return false, nil
	}
	var mode string
	if json.Unmarshal(req.ToolChoice, &mode) == nil {
		switch mode {
		case "none", "auto":
			return false, nil
		case "required":
			if len(req.Tools) == 0 {
				return false, invalid("tool_choice", "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
			}
			t := req.Tools[0].Function
			c.Format, c.SchemaName, c.Schema = FormatTool, t.Name, compact(t.Parameters)
			return false, nil
		}
		return false, invalid("tool_choice", "Invalid value: '%s'. Supported values are: 'none', 'auto', and 'required'.", mode)
	}
	var choice struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(req.ToolChoice, &choice); err != nil || choice.Type != "function" {
		return false, invalid("tool_choice", "Invalid value for 'tool_choice'.")
	}
	for _, t := range req.Tools {
		if t.Function.Name == choice.Function.Name {
			c.Format, c.SchemaName, c.Schema = FormatTool, t.Function.Name, compact(t.Function.Parameters)
			return true, nil
		}
	}
	return false, invalid("tool_choice", "Invalid value for 'tool_choice': no function named '%s' was specified in the 'tools' parameter.", choice.Function.Name)
}

// chatContent reads a message's content: a string, an array of parts, or null.
func chatContent(raw json.RawMessage, i int) (text string, images int, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, nil
	}
	if raw[0] == '"' {
		err := json.Unmarshal(raw, &text)
		return text, 0, err
	}
	var parts []chatPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", 0, invalid(fmt.Sprintf("messages[%d].content", i), "Invalid 'messages[%d].content': expected a string or an array of content parts.", i)
	}
	var texts []string
	for j, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "refusal":
			texts = append(texts, p.Refusal)
		case "image_url":
			if p.ImageURL == nil || !validImageURL(p.ImageURL.URL) {
				return "", 0, invalid(fmt.Sprintf("messages[%d].content[%d].image_url", i, j), "Invalid image URL: expected an http(s) URL or a base64 data URL.")
			}
			images++
		}
	}
	return strings.Join(texts, "\n"), images, nil
}

// validImageURL accepts http(s) URLs and data URLs whose base64 payload decodes.
func validImageURL(u string) bool {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return true
	}
	meta, data, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	if !ok || !strings.HasPrefix(u, "data:image/") || !strings.HasSuffix(meta, ";base64") {
		return false
	}
	_, err := base64.StdEncoding.DecodeString(data)
	return err == nil
}

// mentionsJSON reports whether any message mentions JSON, as json_object mode requires.
func mentionsJSON(c *Call) bool {
	for _, m := range c.Messages {
		if strings.Contains(strings.ToLower(m.Text), "json") {
			return true
		}
	}
	return false
}

// compact returns the schema without insignificant space, nil for none.
func compact(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}
