package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/plumehq/plume/shared/llm/wire"
)

// This file reads an OpenAI request (as readOAChat has it) once into what the translating
// relays send, in no provider's words: a conversation. Anthropic's Messages and Bedrock's
// Converse see a conversation alike (a system prompt apart; turns of user and assistant made
// of content blocks; tool calls and their results as blocks of those turns; tools with a
// choice of auto, none, any or one named tool), so the conversation is that model, and each
// relay only writes it in its wire types with its provider's own rules (relay_anthropic.go,
// relay_bedrock.go).

// defaultAnswerTool names the forced tool of a json_schema request without a name.
const defaultAnswerTool = "json_answer"

// jsonObjectInstruction is added to the system prompt for response_format json_object:
// neither Messages nor Converse has a JSON mode.
const jsonObjectInstruction = "Answer with a single JSON object and nothing else: no prose, no code fence."

// conversation is an OpenAI request's messages, tools, tool_choice, parallel_tool_calls and
// response_format as the translating relays send them. I is the provider's form of an image
// (dialect.imageOf).
type conversation[I any] struct {
	// system is the system prompt's texts, none empty: those of the system and developer
	// messages in order, wherever they stand, then response_format json_object's instruction.
	system []string
	// turns are the other messages, consecutive messages of one role merged into one turn,
	// tool results into a user turn. A message that says nothing adds nothing: no turn is
	// empty, and there may be no turn at all.
	turns []turn[I]
	// tools are the request's function tools, then the answer tool if there is one.
	tools  []tool
	choice toolChoice
	// answerTool is the forced tool standing for response_format json_schema: its input is
	// the answer's content. "" when the request has none.
	answerTool string
	// oneCall is parallel_tool_calls false in a request with tools that the model may call:
	// the answer is to make one tool call at the most.
	oneCall bool
}

// turn is a turn of a conversation: its role ("user" or "assistant") and its blocks.
type turn[I any] struct {
	role   string
	blocks []block[I]
}

// blockKind is which of a block's fields are set.
type blockKind int

// The kinds of block.
const (
	blockText       blockKind = iota // text
	blockImage                       // image
	blockToolUse                     // id, name and input
	blockToolResult                  // id and content
)

// block is a content block of a turn, or of a tool result: the fields of its kind are set.
type block[I any] struct {
	kind blockKind
	// text is a text block's text, never empty.
	text string
	// image is an image block's image, in the provider's form. Only user turns have images.
	image I
	// id is a tool use's call id, or that of the call a tool result answers.
	id string
	// name is the function a tool use calls, input its arguments: a JSON object.
	name  string
	input json.RawMessage
	// content is a tool result's text blocks; it may have none.
	content []block[I]
}

// image is an image_url part's image: a base64 data URL's media type (in lower case) and
// data, as they are, or an http(s) URL.
type image struct {
	mediaType, data string
	url             string
}

// tool is a function tool the model may call.
type tool struct {
	name, description string
	// schema is the function's parameters, a JSON schema: objectSchema's.
	schema json.RawMessage
}

// toolChoice is tool_choice in Messages' words, which Converse shares: mode "auto", "none",
// "any" (OpenAI's "required": some tool) or "tool" (the one named name); mode "" when the
// request says none, or names none or auto with no tools to choose from.
type toolChoice struct {
	mode, name string
}

// dialect is what reading a conversation needs to know of the provider it is for.
type dialect[I any] struct {
	// provider names the provider in errors.
	provider string
	// imageOf is an image in the provider's form, or why the provider cannot take it: asked
	// where the image stands, so that a request's first error is the one reported.
	imageOf func(image) (I, error)
}

// readConversation reads c's messages, then its tools, tool_choice, parallel_tool_calls and
// response_format, for d's provider. response_format json_schema becomes a forced tool
// (answerTool), json_object an instruction in the system prompt. Errors are *invalidError,
// the first in the request's order.
func readConversation[I any](c *oaChat, d dialect[I]) (*conversation[I], error) {
	conv := &conversation[I]{}
	for i, m := range c.Messages {
		if err := conv.addMessage(i, m, d); err != nil {
			return nil, err
		}
	}
	if err := conv.addTools(c); err != nil {
		return nil, err
	}
	return conv, conv.addFormat(c.Format)
}

// addMessage adds OpenAI message i to conv: to the system prompt, or as blocks of a turn.
func (conv *conversation[I]) addMessage(i int, m wire.ChatMessage, d dialect[I]) error {
	text, parts, err := readContent(m.Content)
	if err != nil {
		return invalidf("messages[%d].content: %v", i, err)
	}
	var blocks []block[I]
	role := m.Role
	switch m.Role {
	case "system", "developer":
		if text != "" {
			conv.system = append(conv.system, text)
		}
		for j, p := range parts {
			if p.Type != "text" {
				return invalidf("messages[%d].content[%d].type: a %s message takes text parts only", i, j, m.Role)
			}
			if p.Text != "" {
				conv.system = append(conv.system, p.Text)
			}
		}
		return nil
	case "user", "assistant":
		if blocks, err = d.blocks(text, parts, m.Role); err != nil {
			return invalidf("messages[%d].content%v", i, err)
		}
		if m.Role == "user" && len(m.ToolCalls) > 0 {
			return invalidf("messages[%d].tool_calls: only assistant messages make tool calls", i)
		}
		for j, tc := range m.ToolCalls {
			input, err := toolInput(tc.Function.Arguments)
			if err != nil || tc.ID == "" || tc.Function.Name == "" {
				return invalidf("messages[%d].tool_calls[%d]: want an id, a function name and arguments that are a JSON object", i, j)
			}
			blocks = append(blocks, block[I]{kind: blockToolUse, id: tc.ID, name: tc.Function.Name, input: input})
		}
	case "tool":
		if m.ToolCallID == "" {
			return invalidf("messages[%d].tool_call_id: required in a tool message", i)
		}
		result := block[I]{kind: blockToolResult, id: m.ToolCallID}
		if result.content, err = d.blocks(text, parts, m.Role); err != nil {
			return invalidf("messages[%d].content%v", i, err)
		}
		blocks, role = []block[I]{result}, "user"
	default:
		return invalidf("messages[%d].role: %q is not translated (want system, developer, user, assistant or tool)", i, m.Role)
	}
	if len(blocks) == 0 { // both providers refuse empty turns: an empty message says nothing
		return nil
	}
	if last := len(conv.turns) - 1; last >= 0 && conv.turns[last].role == role {
		conv.turns[last].blocks = append(conv.turns[last].blocks, blocks...)
		return nil
	}
	conv.turns = append(conv.turns, turn[I]{role: role, blocks: blocks})
	return nil
}

// blocks reads a user, assistant or tool message's content: text (a refusal part of an
// assistant message is text too) and, in a user message, images. An error starts with the
// part it is about ("[2].image_url: ...").
func (d dialect[I]) blocks(text string, parts []wire.ChatPart, role string) ([]block[I], error) {
	if text != "" {
		return []block[I]{{kind: blockText, text: text}}, nil
	}
	var blocks []block[I]
	for j, p := range parts {
		switch {
		case p.Type == "text" || (p.Type == "refusal" && role == "assistant"):
			if t := p.Text + p.Refusal; t != "" {
				blocks = append(blocks, block[I]{kind: blockText, text: t})
			}
		case p.Type == "image_url" && role == "user":
			img, err := readImageURL(p.ImageURL.URL)
			var out I
			if err == nil {
				out, err = d.imageOf(img)
			}
			if err != nil {
				return nil, fmt.Errorf("[%d].image_url: %v", j, err)
			}
			blocks = append(blocks, block[I]{kind: blockImage, image: out})
		default:
			return nil, fmt.Errorf("[%d].type: %q parts of a %s message are not translated to %s", j, p.Type, role, d.provider)
		}
	}
	return blocks, nil
}

// readImageURL reads an image URL: a data: URL, whose media type and base64 data are taken as
// they are (the provider judges them), or an http(s) URL.
func readImageURL(url string) (image, error) {
	if meta, data, ok := strings.Cut(url, ","); ok && len(meta) > 5 && strings.EqualFold(meta[:5], "data:") {
		mediaType, isBase64 := strings.CutSuffix(meta[5:], ";base64")
		if !isBase64 || mediaType == "" || data == "" {
			return image{}, fmt.Errorf("a data URL must be data:<media type>;base64,<data>")
		}
		return image{mediaType: strings.ToLower(mediaType), data: data}, nil
	}
	lower := strings.ToLower(url[:min(len(url), 8)])
	if strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://") {
		return image{url: url}, nil
	}
	return image{}, fmt.Errorf("want an http(s) URL or a base64 data URL")
}

// toolInput is a tool call's arguments as a tool use's input: a JSON object ("" is {}).
func toolInput(arguments string) (json.RawMessage, error) {
	in := bytes.TrimSpace([]byte(arguments))
	if len(in) == 0 {
		return json.RawMessage("{}"), nil
	}
	if in[0] != '{' || !json.Valid(in) {
		return nil, fmt.Errorf("not a JSON object")
	}
	return in, nil
}

// hasToolBlocks reports whether the conversation's turns hold tool calls or results.
func (conv *conversation[I]) hasToolBlocks() bool {
	for _, t := range conv.turns {
		for _, b := range t.blocks {
			if b.kind == blockToolUse || b.kind == blockToolResult {
				return true
			}
		}
	}
	return false
}

// addTools reads c's tools, tool_choice and parallel_tool_calls into conv.
func (conv *conversation[I]) addTools(c *oaChat) error {
	for i, t := range c.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return invalidf("tools[%d]: only function tools with a name are translated", i)
		}
		conv.tools = append(conv.tools, tool{name: t.Function.Name, description: t.Function.Description, schema: objectSchema(t.Function.Parameters)})
	}
	var err error
	if conv.choice, err = readToolChoice(c.ToolChoice, conv.tools); err != nil {
		return err
	}
	conv.oneCall = c.Parallel != nil && !*c.Parallel && len(conv.tools) > 0 && conv.choice.mode != "none"
	return nil
}

// readToolChoice reads tool_choice: "auto", "none", "required" (mode "any") or
// {"type": "function", "function": {"name": ...}} (mode "tool"), the name one of tools.
func readToolChoice(raw json.RawMessage, tools []tool) (toolChoice, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return toolChoice{}, nil
	}
	var mode string
	if raw[0] == '"' && json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "auto", "none":
			if len(tools) == 0 {
				return toolChoice{}, nil // nothing to choose from: the providers want no choice then
			}
			return toolChoice{mode: mode}, nil
		case "required":
			if len(tools) == 0 {
				return toolChoice{}, invalidf("tool_choice: \"required\" needs tools")
			}
			return toolChoice{mode: "any"}, nil
		}
		return toolChoice{}, invalidf("tool_choice: %q is not one of auto, none, required", mode)
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &named); err != nil || named.Type != "function" || named.Function.Name == "" {
		return toolChoice{}, invalidf("tool_choice: want auto, none, required or {\"type\": \"function\", \"function\": {\"name\": ...}}")
	}
	for _, t := range tools {
		if t.name == named.Function.Name {
			return toolChoice{mode: "tool", name: t.name}, nil
		}
	}
	return toolChoice{}, invalidf("tool_choice: %q is not among the tools", named.Function.Name)
}

// addFormat reads response_format into conv. json_object is an instruction in the system
// prompt. json_schema is a tool whose input schema is the schema, forced when the request has
// no tools of its own (or tool_choice none); with tools, the model must call one of them or
// the answer tool ("any"), unless tool_choice names a tool or asks for one already.
func (conv *conversation[I]) addFormat(f wire.ChatResponseFormat) error {
	switch f.Type {
	case "", "text":
		return nil
	case "json_object":
		conv.system = append(conv.system, jsonObjectInstruction)
		return nil
	case "json_schema":
	default:
		return invalidf("response_format.type: %q is not one of text, json_object, json_schema", f.Type)
	}
	if f.JSONSchema == nil {
		return invalidf("response_format.json_schema: required with type json_schema")
	}
	s := f.JSONSchema
	answer := tool{name: cmp.Or(s.Name, defaultAnswerTool), schema: objectSchema(s.Schema),
		description: cmp.Or(s.Description, "Give your answer: the input is the answer, following the schema.")}
	for _, t := range conv.tools {
		if t.name == answer.name {
			return invalidf("response_format.json_schema.name: %q is also the name of a tool", answer.name)
		}
	}
	conv.answerTool = answer.name
	switch {
	case len(conv.tools) == 0 || conv.choice.mode == "none":
		conv.choice = toolChoice{mode: "tool", name: answer.name}
	case conv.choice.mode == "" || conv.choice.mode == "auto":
		conv.choice = toolChoice{mode: "any"}
	}
	conv.tools = append(conv.tools, answer)
	return nil
}

// objectSchema is a JSON schema as both providers' input schemas, which must say
// "type": "object": none (null) is an object without properties, and an object schema without
// a type, such as the "parameters": {} OpenAI takes for a function without parameters, gets
// it. Anything else is passed on for the provider to judge.
func objectSchema(schema json.RawMessage) json.RawMessage {
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
