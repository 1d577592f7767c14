package fakemodel

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The Amazon Bedrock Converse wire types
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html), as far
// as the server reads and writes them. Unions (content blocks, toolChoice) have one member set.
type (
	converseRequest struct {
		Messages        *[]converseMessage `json:"messages"`
		System          []converseBlock    `json:"system"`
		InferenceConfig *struct {
			MaxTokens     *int     `json:"maxTokens"`
			Temperature   *float64 `json:"temperature"`
			TopP          *float64 `json:"topP"`
			StopSequences []string `json:"stopSequences"`
		} `json:"inferenceConfig"`
		ToolConfig *struct {
			Tools []struct {
				ToolSpec *struct {
					Name        string `json:"name"`
					InputSchema *struct {
						JSON json.RawMessage `json:"json"`
					} `json:"inputSchema"`
				} `json:"toolSpec"`
			} `json:"tools"`
			ToolChoice *struct {
				Auto *struct{} `json:"auto"`
				Any  *struct{} `json:"any"`
				Tool *struct {
					Name string `json:"name"`
				} `json:"tool"`
			} `json:"toolChoice"`
		} `json:"toolConfig"`
	}
	converseMessage struct {
		Role    string          `json:"role"`
		Content []converseBlock `json:"content"`
	}
	// converseBlock is a content block of a message, of the system prompt or of a tool result.
	converseBlock struct {
		Text  *string `json:"text"`
		Image *struct {
			Format string `json:"format"`
			Source struct {
				Bytes *string `json:"bytes"` // base64
			} `json:"source"`
		} `json:"image"`
		ToolUse    *converseToolUse `json:"toolUse"`
		ToolResult *struct {
			ToolUseID string          `json:"toolUseId"`
			Content   []converseBlock `json:"content"`
		} `json:"toolResult"`
		JSON json.RawMessage `json:"json"` // of a tool result
	}
	converseToolUse struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	}

	converseResponse struct {
		Output struct {
			Message struct {
				Role    string             `json:"role"`
				Content []converseOutBlock `json:"content"`
			} `json:"message"`
		} `json:"output"`
		StopReason string        `json:"stopReason"`
		Usage      converseUsage `json:"usage"`
		Metrics    struct {
			LatencyMs int64 `json:"latencyMs"`
		} `json:"metrics"`
	}
	converseOutBlock struct {
		Text    *string          `json:"text,omitempty"`
		ToolUse *converseToolUse `json:"toolUse,omitempty"`
	}
	converseUsage struct {
		InputTokens           int `json:"inputTokens"`
		OutputTokens          int `json:"outputTokens"`
		TotalTokens           int `json:"totalTokens"`
		CacheReadInputTokens  int `json:"cacheReadInputTokens,omitempty"`
		CacheWriteInputTokens int `json:"cacheWriteInputTokens,omitempty"`
	}
)

// converseImageFormats are the image formats Converse takes.
var converseImageFormats = []string{"png", "jpeg", "gif", "webp"}

// converseName is the pattern of tool names and tool use ids.
var converseName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// converse serves POST /model/{modelId}/converse and, with stream, /converse-stream.
func (s *Server) converse(stream bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, status, msg := readBody(r)
		c := Call{API: Bedrock, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Model: r.PathValue("modelId"), Stream: stream}
		if status != 0 {
			s.refuse(w, &c, status, errorDetail{message: msg})
			return
		}
		if e, ok := s.checkSignature(r); !ok {
			s.refuse(w, &c, http.StatusForbidden, e)
			return
		}
		var req converseRequest
		if err := json.Unmarshal(body, &req); err != nil {
			s.refuse(w, &c, http.StatusBadRequest, errorDetail{message: "Malformed input request, please reformat your input and try again: " + err.Error()})
			return
		}
		if err := readConverse(&c, &req); err != nil {
			var bad *badRequest
			errors.As(err, &bad)
			s.refuse(w, &c, http.StatusBadRequest, errorDetail{message: bad.msg})
			return
		}
		if !s.knows(c.Model) {
			s.refuse(w, &c, http.StatusNotFound, errorDetail{message: "Could not resolve the foundation model from the provided model identifier."})
			return
		}
		a, ok := s.answer(w, r, &c, Bedrock)
		if !ok {
			return
		}
		w.Header().Set("X-Amzn-Requestid", "fakemodel-"+a.id)
		out := converseAnswer(&c, a)
		if stream {
			streamConverse(w, r, out, a.chunkInterval)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// converseAnswer writes answer a to call c in Converse's shape. A refusal stops as a content
// filter does (content_filtered), a cut answer with max_tokens.
func converseAnswer(c *Call, a answer) converseResponse {
	var out converseResponse
	out.Output.Message.Role = "assistant"
	stop := "end_turn"
	block := converseOutBlock{Text: &a.text}
	switch {
	case a.kind == kindRefusal:
		stop = "content_filtered"
	case a.kind == kindTool && (a.truncated || json.Valid([]byte(a.text))):
		// A tool call cut short has no usable input; a reply that is not JSON is not a call.
		stop = "tool_use"
		input := json.RawMessage(a.text)
		if a.truncated || !json.Valid(input) {
			input = json.RawMessage("{}")
		}
		block = converseOutBlock{ToolUse: &converseToolUse{ToolUseID: "tooluse_" + a.id, Name: c.SchemaName, Input: input}}
	}
	if a.truncated {
		stop = "max_tokens"
	}
	out.Output.Message.Content = []converseOutBlock{block}
	out.StopReason = stop
	out.Usage = converseUsage{
		// inputTokens counts only what was not read from the cache.
		InputTokens: a.promptTokens - a.cached, CacheReadInputTokens: a.cached,
		OutputTokens: a.completionTokens, TotalTokens: a.promptTokens + a.completionTokens,
	}
	return out
}

// streamConverse writes the answer as ConverseStream does
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html): an
// AWS event stream (application/vnd.amazon.eventstream) whose messages carry the headers
// :event-type, :content-type and :message-type and a JSON payload. A tool call opens with
// contentBlockStart, text with its first delta; the usage (metadata) follows messageStop.
// Payloads are padded as Bedrock pads them, with a "p" of letters.
func streamConverse(w http.ResponseWriter, r *http.Request, out converseResponse, interval time.Duration) {
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	pace := pacer{ctx: r.Context(), interval: interval}
	seq := 0
	send := func(event string, payload map[string]any) {
		if !pace.next() {
			return
		}
		seq++
		payload["p"] = padding[:seq*7%len(padding)+1]
		b, _ := json.Marshal(payload) // the server's own values
		_, _ = w.Write(eventMessage(b, ":event-type", event, ":content-type", "application/json", ":message-type", "event"))
		flush(w)
	}
	send("messageStart", map[string]any{"role": "assistant"})
	block := out.Output.Message.Content[0]
	delta := func(p string) map[string]any { return map[string]any{"text": p} }
	text := ""
	if tu := block.ToolUse; tu != nil {
		send("contentBlockStart", map[string]any{"contentBlockIndex": 0, "start": map[string]any{
			"toolUse": map[string]string{"toolUseId": tu.ToolUseID, "name": tu.Name},
		}})
		delta = func(p string) map[string]any { return map[string]any{"toolUse": map[string]string{"input": p}} }
		text = string(tu.Input)
	} else {
		text = *block.Text
	}
	for _, p := range pieces(text) {
		send("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": delta(p)})
	}
	send("contentBlockStop", map[string]any{"contentBlockIndex": 0})
	send("messageStop", map[string]any{"stopReason": out.StopReason})
	send("metadata", map[string]any{"usage": out.Usage, "metrics": map[string]int{"latencyMs": 0}})
}

// eventMessage encodes one message of an AWS event stream
// (https://smithy.io/2.0/aws/amazon-eventstream.html): the prelude (the message's length and
// its headers' length, big-endian, and their CRC32), the headers, given as name and value
// pairs, all of the string type (7), the payload, and the CRC32 of everything before it.
func eventMessage(payload []byte, headers ...string) []byte {
	var h []byte
	for i := 0; i+1 < len(headers); i += 2 {
		name, value := headers[i], headers[i+1]
		h = append(h, byte(len(name)))
		h = append(h, name...)
		h = append(h, eventHeaderString)
		h = binary.BigEndian.AppendUint16(h, uint16(len(value)))
		h = append(h, value...)
	}
	total := eventPreludeLen + len(h) + len(payload) + 4
	m := make([]byte, 0, total)
	m = binary.BigEndian.AppendUint32(m, uint32(total))
	m = binary.BigEndian.AppendUint32(m, uint32(len(h)))
	m = binary.BigEndian.AppendUint32(m, crc32.ChecksumIEEE(m))
	m = append(m, h...)
	m = append(m, payload...)
	return binary.BigEndian.AppendUint32(m, crc32.ChecksumIEEE(m))
}

// The event stream encoding's constants: the prelude's length and the string header type.
const (
	eventPreludeLen   = 12
	eventHeaderString = 7
)

// padding is what a streamed event's "p" is cut from.
const padding = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// checkSignature checks that a request is signed as AWS's clients sign Bedrock's: an
// Authorization header "AWS4-HMAC-SHA256 Credential=<key id>/<date>/<region>/bedrock/aws4_request,
// SignedHeaders=..., Signature=...", whose key id is the server's key when it has one
// (WithAPIKey). The signature itself is not verified: the server has no secret key. ok is
// false with the 403 error Bedrock answers.
func (s *Server) checkSignature(r *http.Request) (e errorDetail, ok bool) {
	invalid := errorDetail{code: "UnrecognizedClientException", message: "The security token included in the request is invalid."}
	rest, isV4 := strings.CutPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ")
	if !isV4 {
		return invalid, false
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(f), "="); ok {
			fields[k] = v
		}
	}
	scope := strings.Split(fields["Credential"], "/")
	switch {
	case len(scope) != 5 || scope[0] == "" || fields["SignedHeaders"] == "" || fields["Signature"] == "":
		return invalid, false
	case scope[3] != "bedrock" || scope[4] != "aws4_request":
		return errorDetail{code: "InvalidSignatureException", message: "Credential should be scoped to correct service: 'bedrock'."}, false
	case s.apiKey != "" && scope[0] != s.apiKey:
		return invalid, false
	}
	return errorDetail{}, true
}

// readConverse fills c from a Converse request and checks it as Bedrock does where a client's
// mistake would otherwise pass unseen: the conversation's shape, blank text, images, tool use
// without a toolConfig, tool calls without their results in the next turn and results for
// calls the previous turn did not make, and the inference parameters' ranges.
func readConverse(c *Call, req *converseRequest) error {
	var system []string
	for i, b := range req.System {
		if b.Text == nil || *b.Text == "" {
			return invalid("system", "The text field in the SystemContentBlock object at system.%d is blank. Add text to the text field, and try again.", i)
		}
		system = append(system, *b.Text)
	}
	c.System = strings.Join(system, "\n")
	if err := readInference(c, req); err != nil {
		return err
	}
	if req.Messages == nil {
		return invalid("messages", "1 validation error detected: Value null at 'messages' failed to satisfy constraint: Member must not be null")
	}
	toolBlocks := false
	var calls []string // the tool use ids of the last assistant turn
	for i, m := range *req.Messages {
		switch {
		case m.Role != "user" && m.Role != "assistant":
			return invalid("messages", "1 validation error detected: Value '%s' at 'messages.%d.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]", m.Role, i+1)
		case i == 0 && m.Role != "user":
			return invalid("messages", "A conversation must start with a user message. Try again with a conversation that starts with a user message.")
		case i > 0 && m.Role == (*req.Messages)[i-1].Role:
			return invalid("messages", "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.")
		case len(m.Content) == 0:
			return invalid("messages", "The content field in the Message object at messages.%d is empty. Add a ContentBlock object to the content field and try again.", i)
		}
		msg := Message{Role: m.Role}
		var texts, made, answered []string
		for j, b := range m.Content {
			where := fmt.Sprintf("messages.%d.content.%d", i, j)
			text, images, err := converseBlockText(b, where, false)
			if err != nil {
				return err
			}
			switch {
			case b.ToolUse != nil && m.Role == "assistant":
				made = append(made, b.ToolUse.ToolUseID)
			case b.ToolUse != nil || (b.ToolResult != nil && m.Role == "assistant"):
				return invalid("messages", "The %s block at %s is not allowed in a %s message.", blockKind(b), where, m.Role)
			case b.ToolResult != nil && !slices.Contains(calls, b.ToolResult.ToolUseID):
				return invalid("messages", "The toolResult block at %s answers toolUseId %s, which the previous assistant turn did not use.", where, b.ToolResult.ToolUseID)
			case b.ToolResult != nil:
				answered = append(answered, b.ToolResult.ToolUseID)
			}
			toolBlocks = toolBlocks || b.ToolUse != nil || b.ToolResult != nil
			if text != "" {
				texts = append(texts, text)
			}
			msg.Images += images
		}
		if m.Role == "user" {
			for _, id := range calls {
				if !slices.Contains(answered, id) {
					return invalid("messages", "Expected toolResult blocks at messages.%d.content for the following Ids: %s", i, id)
				}
			}
		}
		calls = made
		msg.Text = strings.Join(texts, "\n")
		c.Messages = append(c.Messages, msg)
	}
	if len(*req.Messages) == 0 {
		return invalid("messages", "A conversation must start with a user message. Try again with a conversation that starts with a user message.")
	}
	if toolBlocks && req.ToolConfig == nil {
		return invalid("toolConfig", "The toolConfig field must be defined when using toolUse and toolResult content blocks.")
	}
	return readToolConfig(c, req)
}

// readInference reads and checks inferenceConfig.
func readInference(c *Call, req *converseRequest) error {
	ic := req.InferenceConfig
	if ic == nil {
		return nil
	}
	c.Temperature = ic.Temperature
	out := func(field string, v any, bound string) error {
		return invalid("inferenceConfig", "1 validation error detected: Value '%v' at 'inferenceConfig.%s' failed to satisfy constraint: Member must have value %s", v, field, bound)
	}
	switch {
	case ic.MaxTokens != nil && *ic.MaxTokens < 1:
		return out("maxTokens", *ic.MaxTokens, "greater than or equal to 1")
	case ic.Temperature != nil && *ic.Temperature < 0:
		return out("temperature", *ic.Temperature, "greater than or equal to 0")
	case ic.Temperature != nil && *ic.Temperature > 1:
		return out("temperature", *ic.Temperature, "less than or equal to 1")
	case ic.TopP != nil && *ic.TopP < 0:
		return out("topP", *ic.TopP, "greater than or equal to 0")
	case ic.TopP != nil && *ic.TopP > 1:
		return out("topP", *ic.TopP, "less than or equal to 1")
	case len(ic.StopSequences) > 2500:
		return invalid("inferenceConfig", "1 validation error detected: Value at 'inferenceConfig.stopSequences' failed to satisfy constraint: Member must have length less than or equal to 2500")
	case slices.Contains(ic.StopSequences, ""):
		return invalid("inferenceConfig", "1 validation error detected: Value at 'inferenceConfig.stopSequences' failed to satisfy constraint: Member must satisfy constraint: [Member must have length greater than or equal to 1]")
	}
	if ic.MaxTokens != nil {
		c.MaxTokens = *ic.MaxTokens
	}
	return nil
}

// readToolConfig reads and checks toolConfig: toolChoice any or tool forces a tool call (the
// first tool for any), which the call's Format says.
func readToolConfig(c *Call, req *converseRequest) error {
	tc := req.ToolConfig
	if tc == nil {
		return nil
	}
	if len(tc.Tools) == 0 {
		return invalid("toolConfig", "1 validation error detected: Value '[]' at 'toolConfig.tools' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	schemas := map[string]json.RawMessage{}
	for i, t := range tc.Tools {
		switch {
		case t.ToolSpec == nil:
			return invalid("toolConfig", "The tool at toolConfig.tools.%d has no toolSpec.", i)
		case !converseName.MatchString(t.ToolSpec.Name):
			return invalid("toolConfig", "1 validation error detected: Value '%s' at 'toolConfig.tools.%d.member.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+", t.ToolSpec.Name, i+1)
		case t.ToolSpec.InputSchema == nil || len(bytes.TrimSpace(t.ToolSpec.InputSchema.JSON)) == 0:
			return invalid("toolConfig", "The toolSpec at toolConfig.tools.%d has no inputSchema.json.", i)
		}
		c.Tools = append(c.Tools, t.ToolSpec.Name)
		schemas[t.ToolSpec.Name] = t.ToolSpec.InputSchema.JSON
	}
	ch := tc.ToolChoice
	if ch == nil {
		return nil
	}
	set := 0
	for _, on := range []bool{ch.Auto != nil, ch.Any != nil, ch.Tool != nil} {
		if on {
			set++
		}
	}
	switch {
	case set != 1:
		return invalid("toolConfig", "toolConfig.toolChoice must have exactly one of auto, any and tool.")
	case ch.Any != nil:
		c.Format, c.SchemaName, c.Schema = FormatTool, c.Tools[0], compact(schemas[c.Tools[0]])
	case ch.Tool != nil:
		if _, ok := schemas[ch.Tool.Name]; !ok {
			return invalid("toolConfig", "The tool %s named by toolConfig.toolChoice is not among the tools.", ch.Tool.Name)
		}
		c.Format, c.SchemaName, c.Schema = FormatTool, ch.Tool.Name, compact(schemas[ch.Tool.Name])
	}
	return nil
}

// converseBlockText checks a content block at where (of a tool result's content when
// inResult) and returns its text (a tool result's text and JSON) and its images.
func converseBlockText(b converseBlock, where string, inResult bool) (text string, images int, err error) {
	set := 0
	for _, on := range []bool{b.Text != nil, b.Image != nil, b.ToolUse != nil, b.ToolResult != nil, b.JSON != nil} {
		if on {
			set++
		}
	}
	switch {
	case set != 1:
		return "", 0, invalid(where, "The ContentBlock object at %s must have exactly one of its members set.", where)
	case inResult && (b.ToolUse != nil || b.ToolResult != nil):
		return "", 0, invalid(where, "The toolResult content at %s must be text, json or an image.", where)
	case !inResult && b.JSON != nil:
		return "", 0, invalid(where, "The json member at %s is only allowed in a toolResult's content.", where)
	}
	switch {
	case b.Text != nil:
		if *b.Text == "" {
			return "", 0, invalid(where, "The text field in the ContentBlock object at %s is blank. Add text to the text field, and try again.", where)
		}
		return *b.Text, 0, nil
	case b.JSON != nil:
		return string(compact(b.JSON)), 0, nil
	case b.Image != nil:
		if !slices.Contains(converseImageFormats, b.Image.Format) {
			return "", 0, invalid(where, "1 validation error detected: Value '%s' at '%s.member.image.format' failed to satisfy constraint: Member must satisfy enum value set: [png, jpeg, gif, webp]", b.Image.Format, where)
		}
		if src := b.Image.Source.Bytes; src == nil || *src == "" {
			return "", 0, invalid(where, "The image at %s has no source bytes.", where)
		} else if _, err := base64.StdEncoding.DecodeString(*src); err != nil {
			return "", 0, invalid(where, "The image bytes at %s are not valid base64.", where)
		}
		return "", 1, nil
	case b.ToolUse != nil:
		if !converseName.MatchString(b.ToolUse.ToolUseID) || b.ToolUse.Name == "" {
			return "", 0, invalid(where, "The toolUse block at %s needs a toolUseId matching [a-zA-Z0-9_-]+ and a name.", where)
		}
		if in := bytes.TrimSpace(b.ToolUse.Input); len(in) == 0 || in[0] != '{' || !json.Valid(in) {
			return "", 0, invalid(where, "The toolUse input at %s must be a JSON object.", where)
		}
		return "", 0, nil
	}
	r := b.ToolResult
	if !converseName.MatchString(r.ToolUseID) {
		return "", 0, invalid(where, "The toolResult block at %s needs a toolUseId matching [a-zA-Z0-9_-]+.", where)
	}
	var texts []string
	for k, rb := range r.Content {
		t, n, err := converseBlockText(rb, fmt.Sprintf("%s.toolResult.content.%d", where, k), true)
		if err != nil {
			return "", 0, err
		}
		if t != "" {
			texts = append(texts, t)
		}
		images += n
	}
	return strings.Join(texts, "\n"), images, nil
}

// blockKind names a tool block for messages.
func blockKind(b converseBlock) string {
	if b.ToolUse != nil {
		return "toolUse"
	}
	return "toolResult"
}

// bedrockErrorTypes name the error type (x-amzn-ErrorType) of each status an error reply may
// have; statuses not listed are ValidationException below 500 and InternalServerException
// from 500 (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors).
var bedrockErrorTypes = map[int]string{
	http.StatusUnauthorized:        "UnrecognizedClientException",
	http.StatusForbidden:           "AccessDeniedException",
	http.StatusNotFound:            "ResourceNotFoundException",
	http.StatusRequestTimeout:      "ModelTimeoutException",
	http.StatusFailedDependency:    "ModelErrorException",
	http.StatusTooManyRequests:     "ThrottlingException",
	http.StatusServiceUnavailable:  "ServiceUnavailableException",
	http.StatusInternalServerError: "InternalServerException",
}

// writeBedrockError writes an error as Bedrock does: {"message": ...}, its type in the
// x-amzn-ErrorType header, with the namespace AWS appends to it. The type is e.code when that
// names an AWS error type ("...Exception"; not OpenAI's codes, such as unknown_url), else the
// status's.
func writeBedrockError(w http.ResponseWriter, status int, e errorDetail) {
	typ := e.code
	if !strings.HasSuffix(typ, "Exception") {
		typ = bedrockErrorTypes[status]
	}
	if typ == "" {
		typ = "ValidationException"
		if status >= 500 {
			typ = "InternalServerException"
		}
	}
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	writeJSON(w, status, map[string]string{"message": e.message})
}
