package gateway

import (
	"bufio"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/otlp"
	"github.com/plumehq/plume/shared/trace"
)

// The W3C example, and its Plume ids (COMPAT.md, "OTLP").
const (
	exampleTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	exampleTraceID     = "0af76519-16cd-43dd-8448-eb211c80319c"
	exampleParentID    = "b7ad6b71-6920-3331-0000-000000000000"
)

func TestParseTraceMode(t *testing.T) {
	tests := []struct {
		in      string
		want    TraceMode
		wantErr bool
	}{
		{"", TraceOff, false},
		{"off", TraceOff, false},
		{" OFF ", TraceOff, false},
		{"all", TraceAll, false},
		{"All", TraceAll, false},
		{"on", "", true},
		{"sdk", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTraceMode(tt.in)
			if tt.wantErr {
				assert.ErrorContains(t, err, "PLUME_GATEWAY_TRACE")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTraceparent(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		ok     bool
		trace  string // the Plume trace id when ok ("" = exampleTraceID)
		parent string // the Plume parent span id when ok ("" = exampleParentID)
	}{
		{name: "spec example", values: []string{exampleTraceparent}, ok: true},
		{name: "not sampled", values: []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"}, ok: true},
		{name: "other ids", values: []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, ok: true,
			trace: "4bf92f35-77b3-4da6-a3ce-929d0e0e4736", parent: "00f067aa-0ba9-02b7-0000-000000000000"},
		{name: "higher version with more fields", values: []string{"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-comes-next"}, ok: true},
		{name: "higher version, same fields", values: []string{"cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, ok: true},
		{name: "version ff", values: []string{"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
		{name: "version 00 with more fields", values: []string{exampleTraceparent + "-00"}},
		{name: "higher version, no dash after the flags", values: []string{"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x"}},
		{name: "version not hex", values: []string{"0g-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
		{name: "uppercase hex", values: []string{"00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01"}},
		{name: "trace id not hex", values: []string{"00-0af7651916cd43dd8448eb211c80319z-b7ad6b7169203331-01"}},
		{name: "parent id not hex", values: []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333g-01"}},
		{name: "flags not hex", values: []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0x"}},
		{name: "all-zero trace id", values: []string{"00-00000000000000000000000000000000-b7ad6b7169203331-01"}},
		{name: "all-zero parent id", values: []string{"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"}},
		{name: "short trace id", values: []string{"00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01"}},
		{name: "long parent id", values: []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333100-01"}},
		{name: "short", values: []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331"}},
		{name: "underscores", values: []string{"00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01"}},
		{name: "spaces inside", values: []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333 -01"}},
		{name: "empty", values: []string{""}},
		{name: "absent", values: nil},
		{name: "twice", values: []string{exampleTraceparent, exampleTraceparent}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc, ok := parseTraceparent(tt.values)
			require.Equal(t, tt.ok, ok)
			if !ok {
				assert.Zero(t, tc)
				return
			}
			assert.Equal(t, traceContext{
				traceID:      cmp.Or(tt.trace, exampleTraceID),
				parentSpanID: cmp.Or(tt.parent, exampleParentID),
			}, tc)
			// The OTLP receiver's mapping of the same ids: one trace, whichever way it came.
			var tid pcommon.TraceID
			var sid pcommon.SpanID
			_, err := hex.Decode(tid[:], []byte(tt.values[0][3:35]))
			require.NoError(t, err)
			_, err = hex.Decode(sid[:], []byte(tt.values[0][36:52]))
			require.NoError(t, err)
			assert.Equal(t, otlp.TraceID(tid), tc.traceID)
			assert.Equal(t, otlp.SpanID(sid), tc.parentSpanID)
		})
	}
}

func TestTraceRequest(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string]string
		mode    TraceMode
		on      bool
		joined  bool // the trace is the traceparent's
	}{
		{name: "nothing", mode: TraceOff},
		{name: "nothing, mode all", mode: TraceAll, on: true},
		{name: "traceparent", headers: map[string]string{"traceparent": exampleTraceparent}, mode: TraceOff, on: true, joined: true},
		{name: "traceparent, mode all", headers: map[string]string{"traceparent": exampleTraceparent}, mode: TraceAll, on: true, joined: true},
		{name: "invalid traceparent", headers: map[string]string{"traceparent": "00-nope"}, mode: TraceOff},
		{name: "invalid traceparent, mode all", headers: map[string]string{"traceparent": "00-nope"}, mode: TraceAll, on: true},
		{name: "invalid traceparent, asked", headers: map[string]string{"traceparent": "00-nope", TraceHeader: "on"}, mode: TraceOff, on: true},
		{name: "on", headers: map[string]string{TraceHeader: "on"}, mode: TraceOff, on: true},
		{name: "true", headers: map[string]string{TraceHeader: "true"}, mode: TraceOff, on: true},
		{name: "1", headers: map[string]string{TraceHeader: "1"}, mode: TraceOff, on: true},
		{name: "ON", headers: map[string]string{TraceHeader: " ON "}, mode: TraceOff, on: true},
		{name: "on with traceparent", headers: map[string]string{TraceHeader: "on", "traceparent": exampleTraceparent}, mode: TraceOff, on: true, joined: true},
		{name: "off", headers: map[string]string{TraceHeader: "off"}, mode: TraceAll},
		{name: "false", headers: map[string]string{TraceHeader: "false"}, mode: TraceAll},
		{name: "0", headers: map[string]string{TraceHeader: "0"}, mode: TraceAll},
		{name: "Off beats traceparent", headers: map[string]string{TraceHeader: "Off", "traceparent": exampleTraceparent}, mode: TraceAll},
		{name: "unknown value is absent", headers: map[string]string{TraceHeader: "maybe"}, mode: TraceOff},
		{name: "unknown value is absent, mode all", headers: map[string]string{TraceHeader: "maybe"}, mode: TraceAll, on: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			tc, on := traceRequest(r, tt.mode)
			require.Equal(t, tt.on, on)
			switch {
			case !on:
				assert.Zero(t, tc)
			case tt.joined:
				assert.Equal(t, exampleTraceID, tc.traceID)
				assert.Equal(t, exampleParentID, tc.parentSpanID)
			default:
				id, err := uuid.Parse(tc.traceID)
				require.NoError(t, err)
				assert.Equal(t, id.String(), tc.traceID, "lowercase and hyphenated")
				assert.Equal(t, uuid.Version(4), id.Version())
				assert.Empty(t, tc.parentSpanID, "a new trace's root")
			}
			if on {
				id, err := uuid.Parse(tc.spanID)
				require.NoError(t, err, "the span's id is known before the call is answered")
				assert.Equal(t, id.String(), tc.spanID)
				assert.Equal(t, uuid.Version(4), id.Version())
			}
		})
	}
}

// TestTraceRequestHeaderCasing reads the headers as the server parses them off the wire: their
// names in any case.
func TestTraceRequestHeaderCasing(t *testing.T) {
	raw := "POST /v1/chat/completions HTTP/1.1\r\nHost: plume\r\ntRaCePaReNt: " + exampleTraceparent + "\r\n\r\n"
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	require.NoError(t, err)
	tc, on := traceRequest(r, TraceOff)
	assert.True(t, on)
	assert.Equal(t, exampleTraceID, tc.traceID)

	raw = "POST /v1/chat/completions HTTP/1.1\r\nHost: plume\r\nTRACEPARENT: " + exampleTraceparent + "\r\nx-plume-TRACE: OFF\r\n\r\n"
	r, err = http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	require.NoError(t, err)
	_, on = traceRequest(r, TraceAll)
	assert.False(t, on)
}

// clock is a time that moves only when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)

// writeIn writes body to w in writes of n bytes.
func writeIn(t *testing.T, w http.ResponseWriter, body string, n int) {
	t.Helper()
	for rest := body; rest != ""; {
		k := min(n, len(rest))
		m, err := w.Write([]byte(rest[:k]))
		require.NoError(t, err)
		require.Equal(t, k, m)
		rest = rest[k:]
	}
}

// sse is the stream of chunks: each a data line and a blank line.
func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

var (
	textStream = sse(
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Héllo, "}}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":1,"delta":{"content":"another choice"}}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"wörld 🌍"}}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}`,
		`[DONE]`)
	toolStream = sse(
		`{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
		`{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`,
		`{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Zürich\"}"}}]}}]}`,
		`{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{}"}}]}}]}`,
		`{"id":"chatcmpl-2","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`[DONE]`)
)

func TestAnswerRecorderStream(t *testing.T) {
	tests := []struct {
		name string
		body string
		want answer
	}{
		{"text with a usage chunk", textStream, answer{ID: "chatcmpl-1", Text: "Héllo, wörld 🌍", FinishReason: "stop", Usage: Usage{12, 5}, HasUsage: true}},
		{"tool calls", toolStream, answer{ID: "chatcmpl-2", FinishReason: "tool_calls",
			Text: `[{"tool":"get_weather","arguments":"{\"city\":\"Zürich\"}"},{"tool":"get_time","arguments":"{}"}]`}},
		{"CRLF lines, event and comment lines", strings.ReplaceAll(": keep-alive\nevent: message\n"+textStream, "\n", "\r\n"),
			answer{ID: "chatcmpl-1", Text: "Héllo, wörld 🌍", FinishReason: "stop", Usage: Usage{12, 5}, HasUsage: true}},
		{"a last line without its newline", strings.TrimSuffix(sse(`{"choices":[{"delta":{"content":"Hi"}}]}`), "\n\n"), answer{Text: "Hi"}},
		{"an error line after content", sse(`{"choices":[{"delta":{"content":"Hi"}}]}`,
			`{"error":{"message":"Overloaded","type":"api_error","code":"overloaded"}}`),
			answer{Text: "Hi", Error: &answerError{Message: "Overloaded", Type: "api_error", Code: "overloaded"}}},
		{"values of other types are skipped", sse(`{"id":7,"choices":[{"delta":{"content":"Hi","role":1}}],"usage":{"prompt_tokens":3,"completion_tokens":"x"}}`),
			answer{Text: "Hi", Usage: Usage{PromptTokens: 3}, HasUsage: true}},
		{"not JSON", sse(`{"choices":`, `nope`), answer{}},
	}
	for _, tt := range tests {
		// Writes of every size from one byte: lines, and UTF-8 sequences, split anywhere.
		for _, n := range []int{1, 2, 3, 5, 7, 13, 64, len(tt.body)} {
			t.Run(tt.name, func(t *testing.T) {
				rw := httptest.NewRecorder()
				rec := newAnswerRecorder(rw, (&clock{t0}).now, true)
				rec.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
				writeIn(t, rec, tt.body, n)
				assert.Equal(t, tt.want, rec.Answer(), "writes of %d bytes", n)
				assert.True(t, rec.Streamed())
				assert.Equal(t, tt.body, rw.Body.String())
			})
		}
	}
}

func TestAnswerRecorderJSON(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   answer
	}{
		{"content", 200,
			"{\n  \"id\": \"chatcmpl-9\",\n  \"object\": \"chat.completion\",\n  \"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", \"content\": \"Grüß dich 👋\"}, \"finish_reason\": \"stop\"}],\n  \"usage\": {\"prompt_tokens\": 9, \"completion_tokens\": 4, \"total_tokens\": 13}\n}\n",
			answer{ID: "chatcmpl-9", Text: "Grüß dich 👋", FinishReason: "stop", Usage: Usage{9, 4}, HasUsage: true}},
		{"tool calls", 200,
			`{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":20,"completion_tokens":8}}`,
			answer{ID: "c", Text: `[{"tool":"get_weather","arguments":"{\"city\":\"Paris\"}"}]`, FinishReason: "tool_calls", Usage: Usage{20, 8}, HasUsage: true}},
		{"content and tool calls: the content", 200,
			`{"choices":[{"message":{"content":"Let me look.","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}`,
			answer{Text: "Let me look."}},
		{"choice 0 whatever its position", 200,
			`{"choices":[{"index":1,"message":{"content":"second"}},{"index":0,"message":{"content":"first"}}]}`,
			answer{Text: "first"}},
		{"content parts", 200,
			`{"choices":[{"message":{"content":[{"type":"text","text":"hi"}]}}]}`,
			answer{Text: `[{"type":"text","text":"hi"}]`}},
		{"OpenAI error", 429,
			`{"error":{"message":"Rate limit reached","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`,
			answer{Error: &answerError{Message: "Rate limit reached", Type: "rate_limit_error", Code: "rate_limit_exceeded"}}},
		{"numeric error code", 400, `{"error":{"message":"bad","code":400}}`,
			answer{Error: &answerError{Message: "bad", Code: "400"}}},
		{"bare error string", 404, `{"error":"model \"x\" not found"}`,
			answer{Error: &answerError{Message: `model "x" not found`}}},
		{"not JSON", 502, "<html>Bad Gateway</html>", answer{}},
		{"empty", 204, "", answer{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw := httptest.NewRecorder()
			rec := newAnswerRecorder(rw, (&clock{t0}).now, true)
			rec.Header().Set("Content-Type", "application/json")
			rec.WriteHeader(tt.status)
			writeIn(t, rec, tt.body, 3)
			assert.Equal(t, tt.want, rec.Answer())
			assert.Equal(t, tt.status, rec.Status())
			assert.False(t, rec.Streamed())
			assert.Zero(t, rec.FirstToken())
			assert.Equal(t, tt.body, rw.Body.String())
			assert.Equal(t, tt.status, rw.Code)
		})
	}
}

func TestAnswerRecorderTruncates(t *testing.T) {
	long := strings.Repeat("é", 50_000) + strings.Repeat("🌍", 10_000) // 140,000 bytes
	chunks := make([]string, 0, 141)
	for rest := long; rest != ""; {
		piece, _ := cutRunes(rest, 1000)
		b, err := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]string{"content": piece}}}})
		require.NoError(t, err)
		chunks = append(chunks, string(b))
		rest = rest[len(piece):]
	}
	chunks = append(chunks, `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":60000}}`, "[DONE]")
	jsonBody, err := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"content": long}}}})
	require.NoError(t, err)
	tooLong := strings.Repeat("x", maxAnswerLine)

	tests := []struct {
		name        string
		contentType string
		body        string
		prefixOf    string // the kept text is a prefix of it
		min         int    // of at least this many bytes
		usage       bool
		tool        bool // the text checked is the first tool call's arguments
	}{
		{name: "stream", contentType: "text/event-stream", body: sse(chunks...), prefixOf: long, min: maxAnswerText - 3, usage: true},
		{name: "JSON answer", contentType: "application/json", body: string(jsonBody), prefixOf: long, min: maxAnswerText - 3},
		{name: "tool call arguments", contentType: "text/event-stream", tool: true,
			body:     sse(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"` + strings.Repeat("a", maxAnswerText) + `"}}]}}]}`),
			prefixOf: strings.Repeat("a", maxAnswerText), min: maxAnswerText - len("f")},
		{name: "too many tool calls", contentType: "text/event-stream", prefixOf: "ok", min: 2,
			body: sse(`{"choices":[{"delta":{"tool_calls":[{"index":500,"function":{"name":"f","arguments":"{}"}}]}}]}`, `{"choices":[{"delta":{"content":"ok"}}]}`)},
		{name: "a line too long to read", contentType: "text/event-stream", prefixOf: "after", min: 5,
			body: sse(`{"choices":[{"delta":{"content":"`+tooLong+`"}}]}`, `{"choices":[{"delta":{"content":"after"}}]}`)},
		{name: "a JSON answer too large to read", contentType: "application/json",
			body: `{"choices":[{"message":{"content":"` + strings.Repeat("x", maxAnswerJSON) + `"}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw := httptest.NewRecorder()
			rec := newAnswerRecorder(rw, (&clock{t0}).now, true)
			rec.Header().Set("Content-Type", tt.contentType)
			writeIn(t, rec, tt.body, 4093)
			got := rec.Answer()
			assert.True(t, got.Truncated)
			text := got.Text
			if tt.tool {
				var calls []struct{ Tool, Arguments string }
				require.NoError(t, json.Unmarshal([]byte(got.Text), &calls))
				require.Len(t, calls, 1)
				assert.Equal(t, "f", calls[0].Tool)
				text = calls[0].Arguments
			}
			assert.True(t, utf8.ValidString(text))
			assert.True(t, strings.HasPrefix(tt.prefixOf, text), "a prefix of the whole text")
			assert.GreaterOrEqual(t, len(text), tt.min)
			assert.LessOrEqual(t, len(text), maxAnswerText)
			assert.Equal(t, tt.usage, got.HasUsage, "lines after the cut are still read")
			assert.Equal(t, len(tt.body), rw.Body.Len(), "everything is passed on")
		})
	}
}

// cutRunes is the prefix of s of n runes.
func cutRunes(s string, n int) (string, bool) {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i], i < len(s)
}

func TestAnswerRecorderTimes(t *testing.T) {
	c := &clock{t0}
	rec := newAnswerRecorder(httptest.NewRecorder(), c.now, true)
	rec.Header().Set("Content-Type", "text/event-stream")
	assert.Zero(t, rec.FirstByte())
	writeIn(t, rec, sse(`{"choices":[{"delta":{"role":"assistant","content":""}}]}`), 1000)
	c.t = t0.Add(300 * time.Millisecond)
	writeIn(t, rec, `data: {"choices":[{"del`, 1000)
	c.t = t0.Add(400 * time.Millisecond)
	writeIn(t, rec, "ta\":{\"content\":\"Hi\"}}]}\n\n", 1000) // the token's line ends here
	c.t = t0.Add(time.Second)
	writeIn(t, rec, sse(`{"choices":[{"delta":{"content":"!"}}]}`), 1000)
	assert.Equal(t, t0, rec.FirstByte())
	assert.Equal(t, t0.Add(400*time.Millisecond), rec.FirstToken(), "the first content, not the role chunk")
	assert.Equal(t, http.StatusOK, rec.Status(), "implied by the first write")
}

func TestAnswerRecorderPassesThrough(t *testing.T) {
	rw := httptest.NewRecorder()
	rec := newAnswerRecorder(rw, (&clock{t0}).now, true)
	rec.Header().Set("Content-Type", "text/event-stream")
	rec.Header().Set("X-Request-Id", "req_1")
	rec.WriteHeader(http.StatusOK)
	rec.WriteHeader(http.StatusTeapot) // superfluous: neither passed on as a status nor noted
	assert.Equal(t, rw, rec.Unwrap())

	require.False(t, rw.Flushed)
	writeIn(t, rec, textStream[:40], 7)
	require.False(t, rw.Flushed, "the recorder does not flush by itself")
	require.NoError(t, http.NewResponseController(rec).Flush())
	assert.True(t, rw.Flushed, "http.ResponseController reaches the wrapped writer")
	writeIn(t, rec, textStream[40:], 5)

	assert.Equal(t, http.StatusOK, rw.Code)
	assert.Equal(t, http.StatusOK, rec.Status())
	assert.Equal(t, "req_1", rw.Header().Get("X-Request-Id"))
	assert.Equal(t, textStream, rw.Body.String(), "byte for byte")

	rw = httptest.NewRecorder()
	rec = newAnswerRecorder(rw, (&clock{t0}).now, true)
	rec.Flush()
	assert.True(t, rw.Flushed, "Flush reaches the wrapped writer")
	assert.Equal(t, http.StatusOK, rec.Status(), "a flush commits the status")

	// A writer that cannot flush (a buffered Lambda answer) says so through the recorder.
	rec = newAnswerRecorder(struct{ http.ResponseWriter }{httptest.NewRecorder()}, (&clock{t0}).now, true)
	assert.ErrorIs(t, http.NewResponseController(rec).Flush(), http.ErrNotSupported)
	assert.Zero(t, rec.Status())
}

// brokenWriter is a client that went away.
type brokenWriter struct{ http.ResponseWriter }

var errGone = errors.New("client gone")

func (brokenWriter) Write([]byte) (int, error) { return 0, errGone }

func TestAnswerRecorderWriteError(t *testing.T) {
	rec := newAnswerRecorder(brokenWriter{httptest.NewRecorder()}, (&clock{t0}).now, true)
	rec.Header().Set("Content-Type", "text/event-stream")
	n, err := rec.Write([]byte(sse(`{"choices":[{"delta":{"content":"Hi"}}]}`)))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, errGone, "the writer's error, unchanged")
	assert.ErrorIs(t, rec.WriteErr(), errGone)
	assert.Empty(t, rec.Answer().Text, "what was not written was not said")
}

// recorded is the recorder of an answer written with status and content type.
func recorded(t *testing.T, c *clock, status int, contentType, body string) *answerRecorder {
	t.Helper()
	rec := newAnswerRecorder(httptest.NewRecorder(), c.now, true)
	rec.Header().Set("Content-Type", contentType)
	rec.WriteHeader(status)
	writeIn(t, rec, body, 11)
	return rec
}

func TestSpanOfStream(t *testing.T) {
	c := &clock{t0.Add(250 * time.Millisecond)}
	call := &gatewayCall{
		ProjectID:         "11111111-2222-4333-8444-555555555555",
		Model:             "zeroeval/gpt-4o-mini",
		Target:            llm.Target{Provider: llm.ProviderOpenAI, API: llm.APIChatCompletions, Model: "gpt-4o-mini"},
		Messages:          json.RawMessage("[\n  {\"role\": \"user\", \"content\": \"Say hi <b>\"}\n]"),
		Stream:            true,
		Started:           t0,
		Ended:             t0.Add(1500 * time.Millisecond),
		Answer:            recorded(t, c, http.StatusOK, "text/event-stream", textStream),
		Usage:             Usage{PromptTokens: 14, CompletionTokens: 6},
		HasUsage:          true,
		ProviderRequestID: "req_abc",
		Link:              trace.PromptLink{PromptVersionID: "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE", ContentHash: "ABC123", Task: "greeter"},
	}
	tc := traceContext{traceID: exampleTraceID, parentSpanID: exampleParentID, spanID: "0f0e0d0c-0b0a-4908-8706-050403020100"}
	sp := spanOf(call, tc)

	require.NoError(t, sp.Check(t0.Add(time.Minute)))
	assert.Equal(t, tc.spanID, sp.ID)
	assert.Equal(t, exampleTraceID, sp.TraceID)
	assert.Equal(t, ptr(exampleParentID), sp.ParentSpanID)
	assert.Equal(t, call.ProjectID, sp.ProjectID)
	assert.Equal(t, "chat.completions", sp.Name)
	assert.Equal(t, trace.KindLLM, sp.Kind)
	assert.Equal(t, ptr(trace.StatusOK), sp.Status)
	assert.Equal(t, t0.Truncate(time.Microsecond), sp.StartedAt)
	assert.Equal(t, ptr(t0.Add(1500*time.Millisecond).Truncate(time.Microsecond)), sp.EndedAt)
	assert.Equal(t, ptr(1500.0), sp.DurationMS)
	assert.Equal(t, ptr(`[{"role":"user","content":"Say hi <b>"}]`), sp.InputData, "compact")
	assert.Equal(t, ptr("Héllo, wörld 🌍"), sp.OutputData)
	assert.Nil(t, sp.Cost, "Ingest prices it")
	assert.Nil(t, sp.ErrorCode)
	assert.Nil(t, sp.ErrorMessage)
	assert.Equal(t, trace.Tags{{Key: "integration", Value: "gateway"}}, sp.Tags)
	assert.Equal(t, &trace.LLMUsage{Provider: "openai", Model: "gpt-4o-mini", InputTokens: 14, OutputTokens: 6}, sp.LLM,
		"the relay's usage before the answer's")
	assert.Equal(t, &trace.PromptLink{PromptVersionID: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", ContentHash: "abc123", Task: "greeter"}, sp.Link)

	var attrs map[string]any
	require.NoError(t, json.Unmarshal(sp.Attributes, &attrs))
	assert.Equal(t, map[string]any{
		"provider":            "openai",
		"model":               "gpt-4o-mini",
		"inputTokens":         14.0,
		"outputTokens":        6.0,
		"streaming":           true,
		"ttft_ms":             250.0,
		"provider_request_id": "req_abc",
		"openai_id":           "chatcmpl-1",
		"request_model":       "zeroeval/gpt-4o-mini",
		"finish_reason":       "stop",
		"status_code":         200.0,
		"zeroeval":            map[string]any{"task": "greeter", "prompt_version_id": "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", "content_hash": "abc123"},
		"gateway":             true,
	}, attrs)

	assertIngestedAsSent(t, sp)
}

func TestSpanOfCalls(t *testing.T) {
	target := llm.Target{Provider: llm.ProviderAnthropic, API: llm.APIMessages, Model: "claude-3-5-haiku-latest"}
	okJSON := `{"id":"msg_1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":2}}`
	rateLimited := `{"error":{"message":"Rate limit reached","type":"rate_limit_error","code":"rate_limit_exceeded"}}`
	hugeMessages := json.RawMessage(`[{"role":"user","content":"` + strings.Repeat("é", trace.MaxDataBytes) + `"}]`)
	tests := []struct {
		name     string
		call     func(*clock) *gatewayCall
		status   string
		code     string // error_code
		message  string // error_message
		tokens   [2]int64
		noTokens bool
		check    func(t *testing.T, sp trace.Span, attrs map[string]any)
	}{
		{name: "JSON answer, usage from the answer", status: trace.StatusOK, tokens: [2]int64{7, 2},
			call: func(c *clock) *gatewayCall {
				return &gatewayCall{Answer: recorded(t, c, 200, "application/json", okJSON)}
			},
			check: func(t *testing.T, sp trace.Span, attrs map[string]any) {
				assert.Equal(t, false, attrs["streaming"])
				assert.Equal(t, 100.0, attrs["ttft_ms"], "to the first byte of a JSON answer")
				assert.Nil(t, sp.ParentSpanID)
			}},
		{name: "no usage known", status: trace.StatusOK, noTokens: true,
			call: func(c *clock) *gatewayCall {
				return &gatewayCall{Answer: recorded(t, c, 200, "text/event-stream", sse(`{"choices":[{"delta":{"content":"Hi"}}]}`))}
			},
			check: func(t *testing.T, sp trace.Span, attrs map[string]any) {
				assert.NotContains(t, attrs, "inputTokens")
				assert.NotContains(t, attrs, "outputTokens")
			}},
		{name: "provider error", status: trace.StatusError, code: "rate_limit_exceeded", message: "Rate limit reached", noTokens: true,
			call: func(c *clock) *gatewayCall {
				return &gatewayCall{Answer: recorded(t, c, 429, "application/json", rateLimited)}
			},
			check: func(t *testing.T, sp trace.Span, attrs map[string]any) {
				assert.Equal(t, 429.0, attrs["status_code"])
				assert.Equal(t, "rate_limit_error", attrs["error_type"])
				assert.Nil(t, sp.OutputData)
			}},
		{name: "error status without an error body", status: trace.StatusError, code: "http_502", message: "the answer was 502 Bad Gateway", noTokens: true,
			call: func(c *clock) *gatewayCall {
				return &gatewayCall{Answer: recorded(t, c, 502, "text/html", "<html>oops</html>")}
			}},
		{name: "the gateway's own reason", status: trace.StatusError, code: "upstream_unreachable", message: "openai cannot be reached: timeout", noTokens: true,
			call: func(c *clock) *gatewayCall {
				body := `{"error":{"message":"openai cannot be reached","type":"api_error","code":"upstream_unreachable"}}`
				return &gatewayCall{Answer: recorded(t, c, 502, "application/json", body), Err: "openai cannot be reached: timeout"}
			}},
		{name: "an error after the stream started", status: trace.StatusError, code: "overloaded", message: "Overloaded", noTokens: true,
			call: func(c *clock) *gatewayCall {
				body := sse(`{"choices":[{"delta":{"content":"Hi"}}]}`, `{"error":{"message":"Overloaded","type":"api_error","code":"overloaded"}}`)
				return &gatewayCall{Answer: recorded(t, c, 200, "text/event-stream", body)}
			},
			check: func(t *testing.T, sp trace.Span, attrs map[string]any) {
				assert.Equal(t, ptr("Hi"), sp.OutputData, "what was said before")
			}},
		{name: "the client went away", status: trace.StatusError, code: "answer_not_delivered", message: "the answer could not be written to the client: client gone", noTokens: true,
			call: func(c *clock) *gatewayCall {
				rec := newAnswerRecorder(brokenWriter{httptest.NewRecorder()}, c.now, true)
				_, _ = rec.Write([]byte("data: {}\n\n"))
				return &gatewayCall{Answer: rec}
			}},
		{name: "nothing answered", status: trace.StatusError, code: "no_answer", message: "no answer was written", noTokens: true,
			call: func(c *clock) *gatewayCall {
				return &gatewayCall{Answer: newAnswerRecorder(httptest.NewRecorder(), c.now, true)}
			}},
		{name: "messages past MaxDataBytes", status: trace.StatusOK, tokens: [2]int64{7, 2},
			call: func(c *clock) *gatewayCall {
				return &gatewayCall{Messages: hugeMessages, Answer: recorded(t, c, 200, "application/json", okJSON)}
			},
			check: func(t *testing.T, sp trace.Span, attrs map[string]any) {
				require.NotNil(t, sp.InputData)
				assert.LessOrEqual(t, len(*sp.InputData), trace.MaxDataBytes)
				assert.GreaterOrEqual(t, len(*sp.InputData), trace.MaxDataBytes-3)
				assert.True(t, strings.HasPrefix(string(hugeMessages), *sp.InputData))
				assert.Equal(t, true, attrs["input_truncated"])
			}},
		{name: "counts ingestion would ignore", status: trace.StatusOK, noTokens: true,
			call: func(c *clock) *gatewayCall {
				return &gatewayCall{Usage: Usage{PromptTokens: -1, CompletionTokens: -5}, HasUsage: true, Answer: recorded(t, c, 200, "application/json", okJSON)}
			}},
		{name: "ended before it started", status: trace.StatusOK, tokens: [2]int64{7, 2},
			call: func(c *clock) *gatewayCall {
				return &gatewayCall{Ended: t0.Add(-time.Second), Answer: recorded(t, c, 200, "application/json", okJSON)}
			},
			check: func(t *testing.T, sp trace.Span, attrs map[string]any) {
				assert.Equal(t, sp.StartedAt, *sp.EndedAt)
				assert.Equal(t, ptr(0.0), sp.DurationMS)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := tt.call(&clock{t0.Add(100 * time.Millisecond)})
			call.ProjectID, call.Model, call.Target, call.Started = "p1", "claude-3-5-haiku-latest", target, t0
			if call.Ended.IsZero() {
				call.Ended = t0.Add(2 * time.Second)
			}
			sp := spanOf(call, traceContext{traceID: exampleTraceID})
			require.NoError(t, sp.Check(t0.Add(time.Minute)))
			id, err := uuid.Parse(sp.ID)
			require.NoError(t, err, "a new span id without one in the trace context")
			assert.Equal(t, uuid.Version(4), id.Version())
			assert.Equal(t, ptr(tt.status), sp.Status)
			if tt.code == "" {
				assert.Nil(t, sp.ErrorCode)
				assert.Nil(t, sp.ErrorMessage)
			} else {
				assert.Equal(t, ptr(tt.code), sp.ErrorCode)
				assert.Equal(t, ptr(tt.message), sp.ErrorMessage)
			}
			want := &trace.LLMUsage{Provider: "anthropic", Model: "claude-3-5-haiku-latest"}
			if !tt.noTokens {
				want.InputTokens, want.OutputTokens = tt.tokens[0], tt.tokens[1]
			}
			assert.Equal(t, want, sp.LLM)
			var attrs map[string]any
			require.NoError(t, json.Unmarshal(sp.Attributes, &attrs))
			assert.Equal(t, true, attrs["gateway"])
			if tt.check != nil {
				tt.check(t, sp, attrs)
			}
			assertIngestedAsSent(t, sp)
		})
	}
}

// assertIngestedAsSent checks that sp is the span POST /spans makes of sp sent as a zeroeval
// SDK sends an llm span (trace.DecodeBatch): the same fields, its LLM usage and prompt link read
// from its attributes by ingestion's own parser.
func assertIngestedAsSent(t *testing.T, sp trace.Span) {
	t.Helper()
	wire := map[string]any{
		"id":         sp.ID,
		"trace_id":   sp.TraceID,
		"name":       sp.Name,
		"kind":       sp.Kind,
		"status":     *sp.Status,
		"started_at": sp.StartedAt.Format(time.RFC3339Nano),
		"ended_at":   sp.EndedAt.Format(time.RFC3339Nano),
		"attributes": json.RawMessage(sp.Attributes),
		"tags":       sp.Tags,
	}
	for k, v := range map[string]*string{"parent_span_id": sp.ParentSpanID, "input_data": sp.InputData,
		"output_data": sp.OutputData, "error_code": sp.ErrorCode, "error_message": sp.ErrorMessage} {
		if v != nil {
			wire[k] = *v
		}
	}
	body, err := json.Marshal([]any{wire})
	require.NoError(t, err)
	got, rejected, err := trace.DecodeBatch(body, sp.ProjectID, sp.UpdatedAt)
	require.NoError(t, err)
	require.Empty(t, rejected)
	require.Len(t, got, 1)
	got[0].CreatedAt, got[0].UpdatedAt = sp.CreatedAt, sp.UpdatedAt
	assert.Equal(t, sp, got[0])
}

// fakeIngester keeps the spans it is given.
type fakeIngester struct {
	projectID string
	spans     []trace.Span
	err       error
}

func (f *fakeIngester) Ingest(_ context.Context, projectID string, spans []trace.Span) ([]trace.Span, error) {
	f.projectID, f.spans = projectID, append(f.spans, spans...)
	return spans, f.err
}

func TestRecordCallIngestsOneSpan(t *testing.T) {
	newCall := func() *gatewayCall {
		return &gatewayCall{
			ProjectID: "p1", Model: "gpt-4o-mini", Target: llm.Target{Provider: "openai", Model: "gpt-4o-mini"},
			Started: t0, Ended: t0.Add(time.Second),
			Answer: recorded(t, &clock{t0}, 200, "text/event-stream", textStream),
		}
	}
	tc := traceContext{traceID: exampleTraceID, parentSpanID: exampleParentID}

	ing := &fakeIngester{}
	require.NoError(t, recordCall(t.Context(), ing, newCall(), tc))
	assert.Equal(t, "p1", ing.projectID)
	require.Len(t, ing.spans, 1)
	assert.Equal(t, exampleTraceID, ing.spans[0].TraceID)
	assert.Equal(t, &trace.LLMUsage{Provider: "openai", Model: "gpt-4o-mini", InputTokens: 12, OutputTokens: 5}, ing.spans[0].LLM)

	storeDown := errors.New("table unavailable")
	ing = &fakeIngester{err: storeDown}
	err := recordCall(t.Context(), ing, newCall(), tc)
	assert.ErrorIs(t, err, storeDown)
	assert.ErrorContains(t, err, ing.spans[0].ID)

	invalid := newCall()
	invalid.Started, invalid.Ended = time.Time{}, time.Time{}
	ing = &fakeIngester{}
	assert.ErrorContains(t, recordCall(t.Context(), ing, invalid, tc), "started_at")
	assert.Empty(t, ing.spans, "an invalid span is not sent")
}

func FuzzTraceparent(f *testing.F) {
	f.Add(exampleTraceparent)
	f.Add("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x")
	f.Add("00-00000000000000000000000000000000-b7ad6b7169203331-01")
	f.Fuzz(func(t *testing.T, h string) {
		tc, ok := parseTraceparent([]string{h})
		if !ok {
			return
		}
		for _, id := range []string{tc.traceID, tc.parentSpanID} {
			u, err := uuid.Parse(id)
			require.NoError(t, err)
			require.Equal(t, u.String(), id)
		}
		require.Equal(t, h[3:35], strings.ReplaceAll(tc.traceID, "-", ""))
		require.Equal(t, h[36:52]+"0000000000000000", strings.ReplaceAll(tc.parentSpanID, "-", ""))
	})
}

func FuzzAnswerRecorder(f *testing.F) {
	f.Add([]byte(textStream), uint8(3), true)
	f.Add([]byte(toolStream), uint8(1), true)
	f.Add([]byte(`{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`), uint8(5), false)
	f.Add([]byte(`{"error":"x"}`), uint8(0), false)
	f.Fuzz(func(t *testing.T, body []byte, split uint8, stream bool) {
		rw := httptest.NewRecorder()
		rec := newAnswerRecorder(rw, (&clock{t0}).now, true)
		if stream {
			rec.Header().Set("Content-Type", "text/event-stream")
		}
		writeIn(t, rec, string(body), int(split)+1)
		require.Equal(t, string(body), rw.Body.String())
		got := rec.Answer()
		require.True(t, utf8.ValidString(got.Text))
		sp := spanOf(&gatewayCall{ProjectID: "p", Target: llm.Target{Provider: "openai", Model: "m"},
			Started: t0, Ended: t0.Add(time.Second), Answer: rec}, traceContext{traceID: exampleTraceID})
		require.NoError(t, sp.Check(t0))
	})
}
