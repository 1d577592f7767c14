package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// streamChunk is a chat.completion.chunk, or the error a stream ends with.
type streamChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// chunkStream is an SSE answer read whole: its chunks, and whether it ended with [DONE].
type chunkStream struct {
	chunks []streamChunk
	done   bool
}

// readChunks reads an SSE answer: every event is one data line and a blank line, [DONE] last.
func readChunks(t *testing.T, res *http.Response) chunkStream {
	t.Helper()
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	var s chunkStream
	lines := bufio.NewScanner(res.Body)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			require.Empty(t, lines.Text(), "an SSE line")
			continue
		}
		require.False(t, s.done, "nothing after [DONE]")
		if data == "[DONE]" {
			s.done = true
			continue
		}
		var c streamChunk
		require.NoError(t, json.Unmarshal([]byte(data), &c), data)
		s.chunks = append(s.chunks, c)
	}
	require.NoError(t, lines.Err())
	return s
}

// text is the content of the stream's deltas, arguments its tool calls' arguments.
func (s chunkStream) text() (content, arguments string) {
	var c, a strings.Builder
	for _, ch := range s.chunks {
		for _, choice := range ch.Choices {
			if choice.Delta.Content != nil {
				c.WriteString(*choice.Delta.Content)
			}
			for _, tc := range choice.Delta.ToolCalls {
				a.WriteString(tc.Function.Arguments)
			}
		}
	}
	return c.String(), a.String()
}

// finish is the stream's finish reason.
func (s chunkStream) finish() string {
	for _, ch := range s.chunks {
		for _, choice := range ch.Choices {
			if choice.FinishReason != nil {
				return *choice.FinishReason
			}
		}
	}
	return ""
}

// TestConverseStream: a stream is ConverseStream's answer as chat.completion.chunk events: the
// same content as the answer in one piece, the usage chunk when asked for, [DONE] last.
func TestConverseStream(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(bedrockKeyID), fakemodel.WithRules(
		fakemodel.Rule{Match: fakemodel.SchemaIs("verdict"), Reply: fakemodel.Reply{JSON: json.RawMessage(`{"pass":true,"score":7}`)}},
		fakemodel.Rule{Match: fakemodel.Contains("busy"), Reply: fakemodel.Reply{Status: 429}},
	))
	g := bedrockGateway(t, fake.URL, bedrockKeyID)
	const model = "bedrock/amazon.nova-lite-v1:0"
	user := []map[string]any{{"role": "user", "content": "Tell me about Paris."}}
	verdict := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "verdict", "schema": json.RawMessage(verdictJSONSchema)}}

	tests := []struct {
		name         string
		body         map[string]any
		includeUsage bool
		finish       string
		tool         bool
	}{
		{name: "text with usage", body: map[string]any{"model": model, "messages": user}, includeUsage: true, finish: "stop"},
		{name: "text", body: map[string]any{"model": model, "messages": user}, finish: "stop"},
		{name: "cut", body: map[string]any{"model": model, "messages": user, "max_tokens": 3}, includeUsage: true, finish: "length"},
		{name: "tool call", body: map[string]any{"model": model, "messages": user, "tools": weatherTools, "tool_choice": "required"},
			includeUsage: true, finish: "tool_calls", tool: true},
		{name: "json_schema", body: map[string]any{"model": model, "messages": user, "response_format": verdict}, finish: "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole := decodeCompletion(t, g.post(t, g.api.A.Key, tt.body))
			require.Nil(t, whole.Error)

			stream := map[string]any{"stream": true}
			if tt.includeUsage {
				stream["stream_options"] = map[string]bool{"include_usage": true}
			}
			for k, v := range tt.body {
				stream[k] = v
			}
			res := g.post(t, g.api.A.Key, stream)
			require.Equal(t, http.StatusOK, res.StatusCode)
			s := readChunks(t, res)
			c, _ := lastConverse(t, fake)
			assert.True(t, c.Stream)
			assert.Equal(t, "/model/amazon.nova-lite-v1:0/converse-stream", c.Path)

			require.NotEmpty(t, s.chunks)
			assert.True(t, s.done, "[DONE] last")
			first := s.chunks[0]
			assert.Equal(t, "chat.completion.chunk", first.Object)
			assert.Regexp(t, `^chatcmpl-fakemodel-`, first.ID)
			assert.Equal(t, "amazon.nova-lite-v1:0", first.Model)
			assert.Equal(t, "assistant", first.Choices[0].Delta.Role)
			for _, ch := range s.chunks {
				assert.Equal(t, first.ID, ch.ID, "one id for the stream")
				assert.Nil(t, ch.Error)
			}
			assert.Equal(t, tt.finish, s.finish())
			assert.Equal(t, whole.Choices[0].FinishReason, s.finish(), "as the answer in one piece")
			content, arguments := s.text()
			if tt.tool {
				require.Len(t, whole.Choices[0].Message.ToolCalls, 1)
				call := whole.Choices[0].Message.ToolCalls[0]
				var opened bool
				for _, ch := range s.chunks {
					for _, choice := range ch.Choices {
						for _, tc := range choice.Delta.ToolCalls {
							assert.Equal(t, 0, tc.Index)
							if tc.ID != "" {
								opened = true
								assert.Equal(t, "function", tc.Type)
								assert.Equal(t, call.Function.Name, tc.Function.Name)
							}
						}
					}
				}
				assert.True(t, opened, "the tool call opens with its id and name")
				assert.JSONEq(t, call.Function.Arguments, arguments)
			} else {
				assert.Equal(t, whole.content(), content)
			}

			last := s.chunks[len(s.chunks)-1]
			if !tt.includeUsage {
				assert.Nil(t, last.Usage, "no usage chunk unless asked for")
				return
			}
			require.NotNil(t, last.Usage, "the usage chunk is the last")
			assert.Empty(t, last.Choices, "the usage chunk has no choices")
			assert.Equal(t, whole.Usage.PromptTokens, last.Usage.PromptTokens)
			assert.Equal(t, whole.Usage.CompletionTokens, last.Usage.CompletionTokens)
		})
	}

	t.Run("error before the stream", func(t *testing.T) {
		res := g.post(t, g.api.A.Key, map[string]any{"model": model, "stream": true, "messages": []map[string]any{{"role": "user", "content": "busy"}}})
		assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
		a := decodeCompletion(t, res)
		require.NotNil(t, a.Error)
		assert.Equal(t, "rate_limit_error", a.Error.Type)
	})
}

// converseEvent encodes a ConverseStream event message as Bedrock sends it.
func converseEvent(t testing.TB, typ, payload string) []byte {
	t.Helper()
	return eventStreamMessage(t, payload, ":event-type", typ, ":content-type", "application/json", ":message-type", "event")
}

// eventStreamMessage encodes a message of an AWS event stream with the AWS SDK's encoder, its
// headers given as name and value pairs.
func eventStreamMessage(t testing.TB, payload string, headers ...string) []byte {
	t.Helper()
	msg := eventstream.Message{Payload: []byte(payload)}
	for i := 0; i+1 < len(headers); i += 2 {
		msg.Headers.Set(headers[i], eventstream.StringValue(headers[i+1]))
	}
	var b bytes.Buffer
	require.NoError(t, eventstream.NewEncoder().Encode(&b, msg))
	return b.Bytes()
}

// joinFrames joins encoded messages.
func joinFrames(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// corruptFrame flips a byte of a message's payload: its CRC no longer holds.
func corruptFrame(msg []byte) []byte {
	out := bytes.Clone(msg)
	out[len(out)-6] ^= 0xff
	return out
}

// converseStreamUpstream is a Bedrock upstream whose ConverseStream answer is body().
func converseStreamUpstream(t testing.TB, body func() []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/converse-stream") {
			http.Error(w, `{"message":"not a stream"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(body())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The events of a short answer, "Hi there".
func converseEvents(t testing.TB) (start, hi, there, stop, metadata []byte) {
	return converseEvent(t, "messageStart", `{"role":"assistant","p":"abc"}`),
		converseEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abcdef"}`),
		converseEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":" there"}}`),
		joinFrames(converseEvent(t, "contentBlockStop", `{"contentBlockIndex":0}`), converseEvent(t, "messageStop", `{"stopReason":"end_turn"}`)),
		converseEvent(t, "metadata", `{"usage":{"inputTokens":5,"outputTokens":2,"totalTokens":7},"metrics":{"latencyMs":12}}`)
}

// TestConverseStreamFailures: a broken stream (a bad CRC, a cut message, a hostile length, an
// exception) ends with OpenAI's error object as its last data line and no [DONE] once chunks
// are out, or as an HTTP error before; never a panic, never a hang.
func TestConverseStreamFailures(t *testing.T) {
	start, hi, there, stop, metadata := converseEvents(t)
	hostile := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 1<<30), 0)
	hostile = binary.BigEndian.AppendUint32(hostile, crc32.ChecksumIEEE(hostile))
	tests := []struct {
		name    string
		body    []byte
		status  int    // of the answer; 200: a stream
		content string // streamed before the end
		errType string // of the error the stream ends with, "" for none
		inMsg   string
	}{
		{name: "whole", body: joinFrames(start, hi, there, stop, metadata), status: 200, content: "Hi there"},
		{name: "reasoning and unknown events skipped", body: joinFrames(start,
			converseEvent(t, "contentBlockStart", `{"contentBlockIndex":0,"start":{"reasoningContent":{}}}`),
			converseEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"hmm"}}}`),
			converseEvent(t, "somethingNew", `{}`),
			converseEvent(t, "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":"Hi"}}`),
			stop, metadata), status: 200, content: "Hi"},
		{name: "no metadata", body: joinFrames(start, hi, stop), status: 200, content: "Hi"},
		{name: "bad CRC", body: joinFrames(start, hi, corruptFrame(there), stop, metadata), status: 200, content: "Hi", errType: "api_error", inMsg: "checksum"},
		{name: "cut message", body: joinFrames(start, hi, there[:len(there)/2]), status: 200, content: "Hi", errType: "api_error", inMsg: "cut short"},
		{name: "cut prelude", body: joinFrames(start, hi, there[:5]), status: 200, content: "Hi", errType: "api_error", inMsg: "cut short"},
		{name: "hostile length", body: joinFrames(start, hi, hostile), status: 200, content: "Hi", errType: "api_error", inMsg: "bytes"},
		{name: "ended early", body: joinFrames(start, hi), status: 200, content: "Hi", errType: "api_error", inMsg: "ended before"},
		{name: "exception", body: joinFrames(start, hi, eventStreamMessage(t, `{"message":"Too many tokens, please wait."}`,
			":exception-type", "throttlingException", ":content-type", "application/json", ":message-type", "exception")),
			status: 200, content: "Hi", errType: "rate_limit_error", inMsg: "Too many tokens"},
		{name: "model stream error", body: joinFrames(start, eventStreamMessage(t, `{"message":"","originalStatusCode":400,"originalMessage":"model failed"}`,
			":exception-type", "modelStreamErrorException", ":message-type", "exception")), status: 200, errType: "api_error", inMsg: "model failed"},
		{name: "error message", body: joinFrames(start, hi, eventStreamMessage(t, "", ":error-code", "InternalFailure", ":error-message", "oops", ":message-type", "error")),
			status: 200, content: "Hi", errType: "api_error", inMsg: "oops"},
		{name: "corrupt first message", body: joinFrames(corruptFrame(start), hi), status: 502, inMsg: "checksum"},
		{name: "exception first", body: eventStreamMessage(t, `{"message":"slow down"}`, ":exception-type", "throttlingException", ":message-type", "exception"),
			status: 429, inMsg: "slow down"},
		{name: "empty", body: nil, status: 502, inMsg: "ended before"},
	}
	var body atomic.Pointer[[]byte]
	g := bedrockGateway(t, converseStreamUpstream(t, func() []byte { return *body.Load() }), bedrockKeyID)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body.Store(&tt.body)
			res := g.post(t, g.api.A.Key, map[string]any{"model": "bedrock/amazon.nova-lite-v1:0", "stream": true,
				"stream_options": map[string]bool{"include_usage": true}, "messages": []map[string]any{{"role": "user", "content": "hi"}}})
			require.Equal(t, tt.status, res.StatusCode)
			if tt.status != http.StatusOK {
				a := decodeCompletion(t, res)
				require.NotNil(t, a.Error)
				assert.Contains(t, a.Error.Message, tt.inMsg)
				return
			}
			s := readChunks(t, res)
			content, _ := s.text()
			assert.Equal(t, tt.content, content)
			last := s.chunks[len(s.chunks)-1]
			if tt.errType == "" {
				assert.True(t, s.done)
				assert.Equal(t, "stop", s.finish())
				require.NotNil(t, last.Usage)
				return
			}
			assert.False(t, s.done, "no [DONE] after an error")
			require.NotNil(t, last.Error, "the stream ends with an error")
			assert.Equal(t, tt.errType, last.Error.Type)
			assert.Contains(t, last.Error.Message, tt.inMsg)
		})
	}
}

// TestConverseStreamPassesThrough: chunks reach the client as Bedrock sends its events: the
// upstream holds the rest of its answer until the first text has reached the client.
func TestConverseStreamPassesThrough(t *testing.T) {
	start, hi, there, stop, metadata := converseEvents(t)
	firstSeen := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(joinFrames(start, hi))
		w.(http.Flusher).Flush()
		select {
		case <-firstSeen:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(joinFrames(there, stop, metadata))
	}))
	t.Cleanup(upstream.Close)
	g := bedrockGateway(t, upstream.URL, bedrockKeyID)

	res := g.post(t, g.api.A.Key, map[string]any{"model": "bedrock/amazon.nova-lite-v1:0", "stream": true,
		"messages": []map[string]any{{"role": "user", "content": "hi"}}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	lines := bufio.NewScanner(res.Body)
	var data []string
	for lines.Scan() {
		line, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		data = append(data, line)
		if strings.Contains(line, `"content":"Hi"`) {
			close(firstSeen) // only now does the upstream send the rest
		}
	}
	require.NoError(t, lines.Err())
	require.Len(t, data, 5, "role, Hi, there, finish, [DONE]: %q", data)
	assert.Contains(t, data[2], `" there"`)
	assert.Equal(t, "[DONE]", data[4])
}

// FuzzConverseStream: whatever bytes a ConverseStream answer is, the client gets an HTTP
// answer that is an OpenAI error or a stream of JSON chunks.
func FuzzConverseStream(f *testing.F) {
	start, hi, there, stop, metadata := converseEvents(f)
	f.Add(joinFrames(start, hi, there, stop, metadata))
	f.Add(joinFrames(start, hi, corruptFrame(there)))
	f.Add(joinFrames(start, hi[:7]))
	f.Add(converseEvent(f, "contentBlockStart", `{"contentBlockIndex":3,"start":{"toolUse":{"toolUseId":"t","name":"n"}}}`))
	var body atomic.Pointer[[]byte]
	g := bedrockGateway(f, converseStreamUpstream(f, func() []byte { return *body.Load() }), bedrockKeyID)
	f.Fuzz(func(t *testing.T, b []byte) {
		body.Store(&b)
		res := g.post(t, g.api.A.Key, map[string]any{"model": "bedrock/amazon.nova-lite-v1:0", "stream": true,
			"messages": []map[string]any{{"role": "user", "content": "hi"}}})
		if res.StatusCode != http.StatusOK {
			decodeCompletion(t, res)
			return
		}
		readChunks(t, res)
	})
}
