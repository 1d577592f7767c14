package gateway

import (
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/wire"
)

// This file translates OpenAI's Chat Completions to Amazon Bedrock's Converse
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html) and back;
// relay_bedrock_stream.go does the same for ConverseStream; Converse's side of the wire is
// wire.Converse*. The OpenAI side is shared with the Messages relay: the request is read once
// as a conversation (request.go, conversation.go), which toConverse writes in Converse's words,
// and answers are written as wire.ChatCompletion and wire.ChatChunk. Converse was modelled on Messages,
// so tool choices (auto, any, a named tool) and stop reasons go through Messages' words too.

// relayConverse serves a chat completion with Bedrock's Converse API: the request translated
// (toConverse), signed with the deployment's AWS credentials, the answer translated back, a
// stream (ConverseStream, an AWS event stream) event by event as it arrives. What Converse
// cannot take (n > 1, image URLs, audio and file parts, the legacy functions) is refused with
// 400 before any call.
func relayConverse(w http.ResponseWriter, r *http.Request, up llm.Upstream, req *chatRequest, traced bool) outcome {
	call, err := toConverse(req.fields)
	if err != nil {
		return outcome{}.failed(w, http.StatusBadRequest, typeInvalidRequest, "", err.Error())
	}
	res, out, ok := sendJSON(w, r, up, call.req, call.stream)
	if !ok {
		return out
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return writeConverseError(w, r, up.Target.Provider, res, out)
	}
	id := cvCompletionID(res.Header.Get("X-Amzn-Requestid"))
	if call.stream {
		return streamConverse(w, r, res.Body, up.Target, call, id, out, traced)
	}
	var answer wire.ConverseResponse
	if !readAnswer(r, up.Target.Provider, res.Body, &answer) {
		return out.failed(w, http.StatusBadGateway, typeServer, "upstream_invalid", up.Target.Provider+"'s answer cannot be read")
	}
	return writeCompletion(w, up.Target.Provider, fromConverse(&answer, id, call.answerTool, up.Target.Model, time.Now()), out, traced)
}

// cvCall is a translated request and what translating its answer needs.
type cvCall struct {
	req wire.ConverseRequest
	// answerTool is the forced tool standing for response_format json_schema: its input is
	// the answer's content. "" when the request has none.
	answerTool   string
	stream       bool
	includeUsage bool
}

// cvImageFormats are the image formats Converse takes, by media type.
var cvImageFormats = map[string]string{
	"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp",
}

// toConverse translates an OpenAI chat completion request to a Converse request (the model is
// in the URL, not the body): the conversation (readConversation) in Converse's blocks, which
// must start with a user turn; images only as bytes of the formats Converse takes; empty stop
// sequences left out; max tokens are the model's when the request names none. Errors are
// *invalidError.
func toConverse(fields map[string]json.RawMessage) (*cvCall, error) {
	c, err := readOAChat(fields, llm.ProviderBedrock)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(c.Messages, isTurn); c.Messages[i].Role != "user" {
		return nil, invalidf("messages[%d]: a Converse conversation starts with a user message, not %s", i, c.Messages[i].Role)
	}
	call := &cvCall{stream: c.Stream, includeUsage: c.IncludeUsage}
	inference := wire.ConverseInference{MaxTokens: c.MaxTokens, Temperature: c.Temperature, TopP: c.TopP}
	for _, s := range c.Stop {
		if s != "" { // Converse refuses empty stop sequences; OpenAI's matches nothing
			inference.StopSequences = append(inference.StopSequences, s)
		}
	}
	if inference.MaxTokens != nil || inference.Temperature != nil || inference.TopP != nil || len(inference.StopSequences) > 0 {
		call.req.InferenceConfig = &inference
	}
	conv, err := readConversation(c, dialect[*wire.ConverseImage]{provider: llm.ProviderBedrock, imageOf: cvImageOf})
	if err != nil {
		return nil, err
	}
	call.answerTool = conv.answerTool
	for _, s := range conv.system {
		call.req.System = append(call.req.System, wire.ConverseBlock{Text: s})
	}
	for _, t := range conv.turns {
		call.req.Messages = append(call.req.Messages, wire.ConverseMessage{Role: t.role, Content: cvBlocks(t.blocks)})
	}
	call.req.ToolConfig = cvToolConfigOf(conv)
	return call, nil
}

// cvBlocks writes a conversation's blocks as Converse content blocks. A tool result must say
// something: an empty one is one space.
func cvBlocks(blocks []block[*wire.ConverseImage]) []wire.ConverseBlock {
	var out []wire.ConverseBlock
	for _, b := range blocks {
		switch b.kind {
		case blockText:
			out = append(out, wire.ConverseBlock{Text: b.text})
		case blockImage:
			out = append(out, wire.ConverseBlock{Image: b.image})
		case blockToolUse:
			out = append(out, wire.ConverseBlock{ToolUse: &wire.ConverseToolUse{ToolUseID: b.id, Name: b.name, Input: b.input}})
		case blockToolResult:
			content := cvBlocks(b.content)
			if len(content) == 0 {
				content = []wire.ConverseBlock{{Text: " "}}
			}
			out = append(out, wire.ConverseBlock{ToolResult: &wire.ConverseToolResult{ToolUseID: b.id, Content: content}})
		}
	}
	return out
}

// cvImageOf is an image as Converse takes it, only its bytes: a data URL's are decoded, an
// http(s) URL is refused (the gateway does not fetch), and so are formats Converse lacks.
func cvImageOf(img image) (*wire.ConverseImage, error) {
	if img.url != "" {
		return nil, fmt.Errorf("%s takes no image URLs, only the image itself: send it as a base64 data URL (data:image/png;base64,...)", llm.ProviderBedrock)
	}
	format, ok := cvImageFormats[img.mediaType]
	if !ok {
		return nil, fmt.Errorf("%q: %s takes image/png, image/jpeg, image/gif and image/webp", img.mediaType, llm.ProviderBedrock)
	}
	data, err := base64.StdEncoding.DecodeString(img.data)
	if err != nil {
		return nil, fmt.Errorf("the data URL's data is not valid base64")
	}
	out := &wire.ConverseImage{Format: format}
	out.Source.Bytes = data
	return out, nil
}

// cvToolConfigOf is the conversation's tools and choice as Converse's toolConfig, nil when it
// has no tools. Converse has no choice "none": then no toolConfig is sent, unless the
// conversation holds tool calls (Converse wants the tools then), when the tools go without a
// choice. parallel_tool_calls (conv.oneCall) is not translated: Converse cannot say it.
func cvToolConfigOf(conv *conversation[*wire.ConverseImage]) *wire.ConverseToolConfig {
	if len(conv.tools) == 0 {
		return nil
	}
	cfg := &wire.ConverseToolConfig{}
	for _, t := range conv.tools {
		var ct wire.ConverseTool
		ct.ToolSpec.Name, ct.ToolSpec.Description, ct.ToolSpec.InputSchema.JSON = t.name, t.description, t.schema
		cfg.Tools = append(cfg.Tools, ct)
	}
	switch c := conv.choice; c.mode {
	case "none":
		if !conv.hasToolBlocks() {
			return nil
		}
	case "auto":
		cfg.ToolChoice = &wire.ConverseToolChoice{Auto: &struct{}{}}
	case "any":
		cfg.ToolChoice = &wire.ConverseToolChoice{Any: &struct{}{}}
	case "tool":
		cfg.ToolChoice = &wire.ConverseToolChoice{Tool: &wire.ConverseToolNamed{Name: c.name}}
	}
	return cfg
}

// cvCompletionID is the id of the completion answering the provider's request id (its
// x-amzn-RequestId), a random one when the answer has none.
func cvCompletionID(requestID string) string {
	return "chatcmpl-" + cmp.Or(requestID, rand.Text())
}

// fromConverse translates a Converse answer to a chat completion: as a Messages answer, which
// fromMessages translates (the answer tool's input is the content, other toolUse blocks are
// tool calls).
func fromConverse(res *wire.ConverseResponse, id, answerTool, model string, now time.Time) *wire.ChatCompletion {
	m := wire.MessagesResponse{ID: id, StopReason: cvStopReason(res.StopReason), Usage: messagesUsage(res.Usage)}
	for _, b := range res.Output.Message.Content {
		switch {
		case b.Text != nil:
			m.Content = append(m.Content, wire.MessagesOutBlock{Type: "text", Text: *b.Text})
		case b.ToolUse != nil:
			m.Content = append(m.Content, wire.MessagesOutBlock{Type: "tool_use", ID: b.ToolUse.ToolUseID, Name: b.ToolUse.Name, Input: b.ToolUse.Input})
		}
	}
	return fromMessages(&m, answerTool, model, now)
}

// cvStopReason is a Converse stopReason in Messages' words, which amFinishReason translates:
// content_filtered and guardrail_intervened are a refusal (content_filter); end_turn,
// stop_sequence, max_tokens, model_context_window_exceeded and tool_use are the same in both.
func cvStopReason(stop string) string {
	switch stop {
	case "content_filtered", "guardrail_intervened":
		return "refusal"
	}
	return stop
}

// messagesUsage is Converse's usage in Messages' words: as there, inputTokens excludes the tokens
// read from and written to the prompt cache.
func messagesUsage(u wire.ConverseUsage) wire.MessagesUsage {
	return wire.MessagesUsage{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadInputTokens: u.CacheReadInputTokens, CacheCreationInputTokens: u.CacheWriteInputTokens,
	}
}

// cvFailure is the OpenAI error answering a Bedrock error type.
type cvFailure struct {
	status    int
	typ, code string
}

// cvFailures answer Bedrock's error types
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors,
// https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html). Refused
// credentials and a model the account may not use are the deployment's problem, not the
// caller's: 502 upstream_auth, as relayChatCompletions has it. A model not ready (429 at AWS,
// which OpenAI clients read as a rate limit) is 503; a model that timed out (408) is 504;
// model failures (424) are 502.
var cvFailures = map[string]cvFailure{
	"ValidationException":                 {http.StatusBadRequest, typeInvalidRequest, ""},
	"ThrottlingException":                 {http.StatusTooManyRequests, typeRateLimit, "rate_limit_exceeded"},
	"ServiceQuotaExceededException":       {http.StatusTooManyRequests, typeRateLimit, "insufficient_quota"},
	"ResourceNotFoundException":           {http.StatusNotFound, typeInvalidRequest, "model_not_found"},
	"ModelNotReadyException":              {http.StatusServiceUnavailable, typeServer, "model_not_ready"},
	"ServiceUnavailableException":         {http.StatusServiceUnavailable, typeServer, ""},
	"ModelTimeoutException":               {http.StatusGatewayTimeout, typeServer, "timeout"},
	"ModelErrorException":                 {http.StatusBadGateway, typeServer, "upstream_error"},
	"ModelStreamErrorException":           {http.StatusBadGateway, typeServer, "upstream_error"},
	"InternalServerException":             {http.StatusInternalServerError, typeServer, ""},
	"AccessDeniedException":               {http.StatusBadGateway, typeServer, "upstream_auth"},
	"UnrecognizedClientException":         {http.StatusBadGateway, typeServer, "upstream_auth"},
	"InvalidSignatureException":           {http.StatusBadGateway, typeServer, "upstream_auth"},
	"IncompleteSignatureException":        {http.StatusBadGateway, typeServer, "upstream_auth"},
	"MissingAuthenticationTokenException": {http.StatusBadGateway, typeServer, "upstream_auth"},
	"ExpiredTokenException":               {http.StatusBadGateway, typeServer, "upstream_auth"},
}

// cvFailureOf is the OpenAI error for a Bedrock error type, or for the HTTP status of an
// error whose type is unknown (as the Messages relay maps statuses).
func cvFailureOf(typ string, status int) cvFailure {
	if f, ok := cvFailures[typ]; ok {
		return f
	}
	s, t, c := amErrorFor(status)
	return cvFailure{s, t, c}
}

// cvErrorType is an error's type, from the x-amzn-ErrorType header
// ("ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/") or the body's
// __type ("com.amazon.coral.service#UnrecognizedClientException").
func cvErrorType(header, bodyType string) string {
	t, _, _ := strings.Cut(cmp.Or(header, bodyType), ":")
	if i := strings.LastIndexByte(t, '#'); i >= 0 {
		t = t[i+1:]
	}
	return strings.TrimSpace(t)
}

// writeConverseError answers a Bedrock error in OpenAI's shape, Retry-After passed on. A
// refused credential is logged by its type only and answered with a generic message: AWS's
// message may name the deployment's account and role, and an InvalidSignatureException's
// quotes the canonical request, the session token among its signed headers.
func writeConverseError(w http.ResponseWriter, r *http.Request, provider string, res *http.Response, out outcome) outcome {
	data, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var e wire.ConverseErrorBody
	_ = json.Unmarshal(data, &e) // an unreadable body leaves the status to go by
	typ := cvErrorType(res.Header.Get("X-Amzn-Errortype"), e.Type)
	f := cvFailureOf(typ, res.StatusCode)
	msg := fmt.Sprintf("%s answered %d %s", provider, res.StatusCode, http.StatusText(res.StatusCode))
	switch {
	case f.code == "upstream_auth":
		slog.WarnContext(r.Context(), "gateway: the provider refused the deployment's credentials",
			"provider", provider, "status", res.StatusCode, "type", typ)
		msg = fmt.Sprintf("%s refused the deployment's AWS credentials (%s)", provider, cmp.Or(typ, http.StatusText(res.StatusCode)))
	case e.Message != "" && typ != "":
		msg = fmt.Sprintf("%s (%s): %s", provider, typ, e.Message)
	case e.Message != "":
		msg = provider + ": " + e.Message
	}
	if v := res.Header.Get("Retry-After"); v != "" {
		w.Header().Set("Retry-After", v)
	}
	return out.failed(w, f.status, f.typ, f.code, msg)
}
