package gateway

// This file reads what a recorded call was answered, for its span (trace.go): an
// answerReader takes the answer's values (chat completions, chunks, errors) and keeps its
// text, finish reason, usage and the time of its first token; an answerScanner reads an
// answer's bytes into one, for the relay that passes the provider's answer on as it is (its
// one reading of the answer, usage included); an answerRecorder is the writer the call is
// answered through, which notes the status and when the first byte left. The translating
// relays hand their reader the values they write: nothing is read back.

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/llm/wire"
	"github.com/plumehq/plume/shared/textcut"
)

// Bounds of what an answerRecorder keeps.
const (
	// maxAnswerText bounds the text of an answer kept for its span (content, tool calls).
	maxAnswerText = 64 << 10
	// maxAnswerJSON bounds a JSON answer kept to be read at its end; a larger one is passed on
	// unread.
	maxAnswerJSON = 8 << 20
	// maxAnswerLine bounds a stream line kept to be read; a longer one is passed on unread.
	maxAnswerLine = 256 << 10
	// maxAnswerToolCalls bounds the tool calls of a streamed answer that are assembled.
	maxAnswerToolCalls = 128
)

// answerRecorder is the http.ResponseWriter a recorded call is answered through. Everything is
// passed on to the writer it wraps as it comes, unchanged (Flush and, through Unwrap,
// http.ResponseController reach it); on the way it notes the status and the time of the first
// byte. When it reads (a passthrough relay's answer, the provider's own bytes), it also reads
// the OpenAI-shaped answer into its reader: a JSON chat.completion, kept up to maxAnswerJSON
// and read at the end, or a stream of chat.completion.chunk data lines, read line by line as
// they pass (never kept whole). What it cannot read it ignores: reading never fails or changes
// the client's answer.
type answerRecorder struct {
	w         http.ResponseWriter
	now       func() time.Time
	reads     bool
	status    int // 0 until the status is committed
	firstByte time.Time
	writeErr  error
	scan      answerScanner
}

// newAnswerRecorder returns a recorder passing an answer on to w; now is its clock. reads says
// whether it reads the bytes written as the answer (Answer, FirstToken).
func newAnswerRecorder(w http.ResponseWriter, now func() time.Time, reads bool) *answerRecorder {
	return &answerRecorder{w: w, now: now, reads: reads, scan: answerScanner{rd: answerReader{now: now}}}
}

// Header is the wrapped writer's header.
func (a *answerRecorder) Header() http.Header { return a.w.Header() }

// WriteHeader passes the status on and notes it (the first final one, as net/http keeps).
func (a *answerRecorder) WriteHeader(code int) {
	if code >= 200 {
		a.commit(code)
	}
	a.w.WriteHeader(code)
}

// Write passes p on and reads what was written of it.
func (a *answerRecorder) Write(p []byte) (int, error) {
	a.commit(http.StatusOK)
	if len(p) > 0 && a.firstByte.IsZero() {
		a.firstByte = a.now()
	}
	n, err := a.w.Write(p)
	if err != nil && a.writeErr == nil {
		a.writeErr = err
	}
	a.read(p[:max(0, min(n, len(p)))])
	return n, err
}

// Flush flushes the wrapped writer, if it can.
func (a *answerRecorder) Flush() { _ = a.FlushError() }

// FlushError flushes the wrapped writer: http.ResponseController's Flush on the recorder calls
// it, and returns its error (http.ErrNotSupported for a writer that cannot flush).
func (a *answerRecorder) FlushError() error {
	err := http.NewResponseController(a.w).Flush()
	if err == nil {
		a.commit(http.StatusOK) // a flush commits the header, as a first Write does
	}
	return err
}

// Unwrap is the wrapped writer, for http.ResponseController.
func (a *answerRecorder) Unwrap() http.ResponseWriter { return a.w }

// Status is the answer's status; 0 when nothing was written.
func (a *answerRecorder) Status() int { return a.status }

// FirstByte is when the first byte of the body was written; zero when none was.
func (a *answerRecorder) FirstByte() time.Time { return a.firstByte }

// FirstToken is when a stream's first content or tool call delta was written; zero for a JSON
// answer and a stream without any.
func (a *answerRecorder) FirstToken() time.Time { return a.scan.rd.firstToken }

// WriteErr is the first error of the wrapped writer (the client went away); nil when none.
func (a *answerRecorder) WriteErr() error { return a.writeErr }

// Streamed reports whether the answer was a stream (text/event-stream).
func (a *answerRecorder) Streamed() bool { return a.scan.sse }

// Answer is what the answer said. It ends the reading: it is called once the relay is done,
// and what is written after it is passed on unread.
func (a *answerRecorder) Answer() answer { return a.scan.answer() }

// commit notes the status of the answer, and its kind from its content type, once.
func (a *answerRecorder) commit(code int) {
	if a.status != 0 {
		return
	}
	a.status = code
	a.scan.sse = isStream(a.w.Header().Get("Content-Type"))
}

// isStream reports whether contentType is a stream's, text/event-stream.
func isStream(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/event-stream")
}

// read takes in bytes of the body as they are written, when it reads.
func (a *answerRecorder) read(p []byte) {
	if a.reads {
		a.scan.read(p)
	}
}

// answerScanner reads an OpenAI-shaped answer from its bytes, in whatever pieces they come,
// into its answerReader: a JSON chat.completion, kept up to maxAnswerJSON and read at the end,
// or a stream of chat.completion.chunk data lines, read line by line as they pass (never kept
// whole). What it cannot read it ignores. Its zero value, with its reader's clock and sse set,
// is ready.
type answerScanner struct {
	sse      bool // a stream, else a JSON answer
	finished bool

	body     []byte // JSON: the answer so far
	tooLarge bool   // JSON: larger than maxAnswerJSON, not kept
	line     []byte // stream: the part of a line not ended yet
	longLine bool   // stream: in a line longer than maxAnswerLine, skipped

	rd answerReader
}

// newAnswerScanner returns a scanner of an answer of contentType; now is its clock.
func newAnswerScanner(now func() time.Time, contentType string) *answerScanner {
	return &answerScanner{sse: isStream(contentType), rd: answerReader{now: now}}
}

// Write reads p, and never fails: the scanner watches an answer passed on.
func (a *answerScanner) Write(p []byte) (int, error) {
	a.read(p)
	return len(p), nil
}

// Usage is the answer's usage (answer): the scanner is the watcher of a traced call's answer.
func (a *answerScanner) Usage() (Usage, bool) {
	ans := a.answer()
	return ans.Usage, ans.HasUsage
}

// answer is what the answer said. It ends the reading: what comes after is not read.
func (a *answerScanner) answer() answer {
	if !a.finished {
		a.finished = true
		if a.sse {
			if len(a.line) > 0 && !a.longLine { // a last line without its newline
				a.streamLine(a.line)
			}
		} else {
			a.readJSON()
		}
		a.body, a.line = nil, nil
	}
	return a.rd.answer()
}

// read takes in the next bytes of the answer.
func (a *answerScanner) read(p []byte) {
	if a.finished || len(p) == 0 {
		return
	}
	if !a.sse {
		if a.tooLarge || len(a.body)+len(p) > maxAnswerJSON {
			a.tooLarge, a.body = true, nil
			return
		}
		a.body = append(a.body, p...)
		return
	}
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if !a.longLine && len(a.line)+len(rest) > maxAnswerLine {
				a.longLine, a.line, a.rd.ans.Truncated = true, a.line[:0], true
			}
			if !a.longLine {
				a.line = append(a.line, rest...)
			}
			return
		}
		switch {
		case a.longLine:
		case len(a.line)+i > maxAnswerLine:
			a.rd.ans.Truncated = true
		default:
			a.line = append(a.line, rest[:i]...)
			a.streamLine(a.line)
		}
		a.line, a.longLine, rest = a.line[:0], false, rest[i+1:]
	}
}

// answer is what an answerRecorder read of an OpenAI-shaped answer.
type answer struct {
	// ID is the answer's id (chatcmpl-...), the openai_id of the SDKs' spans.
	ID string
	// Text is choice 0's content, or, without content, its tool calls as JSON in the zeroeval
	// SDKs' form ([{"tool": name, "arguments": text}]): at most maxAnswerText bytes of text.
	Text string
	// Truncated is true when some of the text was not kept (past maxAnswerText, or in a JSON
	// answer or stream line too large to read).
	Truncated bool
	// FinishReason is choice 0's finish_reason.
	FinishReason string
	// Usage is the answer's usage (a JSON answer's, a stream's usage chunk); HasUsage is false
	// without one.
	Usage    Usage
	HasUsage bool
	// Error is the error the answer carried (an error body, a stream's error line); nil when
	// none.
	Error *answerError
}

// usageOfChat is the Usage of an OpenAI-shaped answer's usage.
func usageOfChat(u *wire.ChatUsage) Usage {
	return Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
}

// answerError is an OpenAI error object.
type answerError struct {
	Message, Type, Code string
}

// answerText is an answer's text as it is read, within maxAnswerText bytes in all.
type answerText struct {
	content   []byte
	tools     []toolText
	used      int
	truncated bool
}

// toolText is a tool call of an answer.
type toolText struct {
	name      string
	arguments []byte
}

// keep appends what is left room for of s to *dst, cut at a character boundary.
func (t *answerText) keep(dst *[]byte, s string) {
	s, cut := textcut.Cut(s, maxAnswerText-t.used)
	*dst = append(*dst, s...)
	t.used += len(s)
	t.truncated = t.truncated || cut
}

// tool returns the tool call of index i, nil beyond maxAnswerToolCalls.
func (t *answerText) tool(i int) *toolText {
	if i < 0 || i >= maxAnswerToolCalls {
		t.truncated = true
		return nil
	}
	for len(t.tools) <= i {
		t.tools = append(t.tools, toolText{})
	}
	return &t.tools[i]
}

// name sets a tool call's name (a stream sends it once, with its first delta).
func (t *answerText) name(tc *toolText, name string) {
	var b []byte
	t.keep(&b, name)
	tc.name = string(b)
}

// String is the answer's text (answer.Text).
func (t *answerText) String() string {
	if len(t.content) > 0 {
		return string(t.content)
	}
	type sdkToolCall struct {
		Tool      string `json:"tool"`
		Arguments string `json:"arguments"`
	}
	var calls []sdkToolCall
	for _, tc := range t.tools {
		if tc.name != "" || len(tc.arguments) > 0 {
			calls = append(calls, sdkToolCall{Tool: tc.name, Arguments: string(tc.arguments)})
		}
	}
	if len(calls) == 0 {
		return ""
	}
	b, _ := json.Marshal(calls) // strings only
	return string(b)
}

// decodeLoosely decodes data into v, keeping what fits where a value has another type than
// expected (json.Unmarshal skips those): false when data is not JSON.
func decodeLoosely(data []byte, v any) bool {
	var typeErr *json.UnmarshalTypeError
	err := json.Unmarshal(data, v)
	return err == nil || errors.As(err, &typeErr)
}

// readJSON reads a JSON answer.
func (a *answerScanner) readJSON() {
	if a.tooLarge {
		a.rd.ans.Truncated = true
		return
	}
	var v wire.ChatCompletion
	if len(a.body) > 0 && decodeLoosely(a.body, &v) {
		a.rd.completion(&v)
	}
}

// streamLine reads one line of a stream: a data line with a chunk or an error object; others
// (event:, comments, blank lines, data: [DONE]) say nothing of the answer.
func (a *answerScanner) streamLine(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	var c wire.ChatChunk
	if len(data) > 0 && data[0] == '{' && decodeLoosely(data, &c) {
		a.rd.chunk(&c)
	}
}

// answerReader reads an OpenAI-shaped answer from its values as they are written: a chat
// completion, or a stream's chunks one by one, and the error a relay answered with. Its zero
// value, with a clock, is ready.
type answerReader struct {
	now        func() time.Time
	firstToken time.Time
	ans        answer
	out        answerText
}

// completion reads a JSON answer.
func (r *answerReader) completion(v *wire.ChatCompletion) {
	r.ans.ID, r.ans.Error = v.ID, errorOf(v.Error)
	if v.Usage != nil {
		r.ans.Usage, r.ans.HasUsage = usageOfChat(v.Usage), true
	}
	for _, c := range v.Choices {
		if c.Index != 0 {
			continue
		}
		r.ans.FinishReason = c.FinishReason
		r.out.keep(&r.out.content, textOf(c.Message.Content))
		for i, call := range c.Message.ToolCalls {
			if tc := r.out.tool(i); tc != nil {
				r.out.name(tc, call.Function.Name)
				r.out.keep(&tc.arguments, call.Function.Arguments)
			}
		}
		break
	}
}

// chunk reads one chunk of a stream, or its error line.
func (r *answerReader) chunk(c *wire.ChatChunk) {
	if r.ans.ID == "" {
		r.ans.ID = c.ID
	}
	if c.Usage != nil {
		r.ans.Usage, r.ans.HasUsage = usageOfChat(c.Usage), true
	}
	if e := errorOf(c.Error); e != nil {
		r.ans.Error = e
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			r.ans.FinishReason = *ch.FinishReason
		}
		content := textOf(ch.Delta.Content)
		r.out.keep(&r.out.content, content)
		token := content != ""
		for _, call := range ch.Delta.ToolCalls {
			tc := r.out.tool(call.Index)
			if tc == nil {
				continue
			}
			if call.Function.Name != "" {
				r.out.name(tc, call.Function.Name)
			}
			r.out.keep(&tc.arguments, call.Function.Arguments)
			token = true
		}
		if token && r.firstToken.IsZero() {
			r.firstToken = r.now()
		}
	}
}

// failed reads the error a relay answered with.
func (r *answerReader) failed(typ, code, message string) {
	r.ans.Error = &answerError{Message: message, Type: typ, Code: code}
}

// answer is what was read, its text made.
func (r *answerReader) answer() answer {
	a := r.ans
	a.Text, a.Truncated = r.out.String(), r.out.truncated || a.Truncated
	return a
}

// textOf is the text of a message's content, "" for none.
func textOf(t *wire.ChatText) string {
	if t == nil {
		return ""
	}
	return string(*t)
}

// jsonTextOf is the text of a JSON value: a string's, "" for null or nothing, else its JSON text.
func jsonTextOf(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return ""
	}
	return b.String()
}

// errorOf reads an error value: OpenAI's object ({message, type, code}) or a bare string, as
// some OpenAI-compatible servers send; nil for anything else.
func errorOf(raw json.RawMessage) *answerError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &answerError{Message: s}
	}
	var e struct{ Message, Type, Code json.RawMessage }
	if len(raw) == 0 || raw[0] != '{' || !decodeLoosely(raw, &e) {
		return nil
	}
	return &answerError{Message: jsonTextOf(e.Message), Type: jsonTextOf(e.Type), Code: jsonTextOf(e.Code)}
}
