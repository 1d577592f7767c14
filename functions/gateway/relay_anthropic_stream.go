package gateway

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/wire"
)

// amMaxEvent bounds one event's line; Anthropic's events are small deltas.
const amMaxEvent = 4 << 20

// What a content block of the stream is to the client.
const (
	amBlockIgnored = iota // thinking and other blocks OpenAI's chunks have no place for
	amBlockText
	amBlockTool   // a tool call
	amBlockAnswer // the answer tool: its input is content
)

// amBlockState is a content block the stream has opened.
type amBlockState struct {
	kind int
	tool int // the tool call's index in OpenAI's tool_calls
}

// amStream translates a Messages stream to chat completion chunks, writing and flushing each
// chunk as its event arrives. Until the first chunk the answer's status is open, so an error
// event before any content is an HTTP error; after it, an error is a data line with OpenAI's
// error object.
type amStream struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	answerTool   string
	includeUsage bool

	id, model string
	created   int64
	started   bool // the status and the first chunk are written
	blocks    map[int]amBlockState
	tools     int // tool calls so far
	usage     wire.MessagesUsage
	stop      string
	buf       bytes.Buffer // one data line, reused
	// textFrame is a text chunk's JSON around its content, made once the stream's id and model
	// are known; nil until then (textChunk).
	textFrame [2][]byte
	text      *json.Encoder // encodes a text into buf
	// rd reads the chunks written, for the call's span; nil when the call is not traced.
	rd *answerReader
}

// errStreamEnded is a stream that ended without message_stop.
var errStreamEnded = errors.New("the stream ended before the answer did")

// streamMessages relays a Messages stream: each event is read as it arrives and its chunk, if
// it makes one, written and flushed at once. It returns out with the stream's usage and, when
// traced, what it answered.
func streamMessages(w http.ResponseWriter, r *http.Request, body io.Reader, t llm.Target, call *amCall, out outcome, traced bool) outcome {
	s := newAMStream(w, call, t.Model, time.Now(), traced)
	err := s.read(body)
	var e *amStreamError
	switch {
	case err == nil:
	case errors.As(err, &e):
		slog.WarnContext(r.Context(), "gateway: the provider's stream failed", "provider", t.Provider, "type", e.typ, "message", e.msg)
		s.fail(amErrorStatuses[e.typ], t.Provider+": "+e.msg)
	case r.Context().Err() != nil:
		// the client is gone: nobody to tell
	default:
		slog.WarnContext(r.Context(), "gateway: the provider's stream was cut", "provider", t.Provider, "error", err)
		s.fail(http.StatusBadGateway, fmt.Sprintf("%s: %v", t.Provider, err))
	}
	return s.outcome(out)
}

// newAMStream returns a stream writing to w, reading what it writes when traced.
func newAMStream(w http.ResponseWriter, call *amCall, model string, now time.Time, traced bool) *amStream {
	s := &amStream{w: w, rc: http.NewResponseController(w), answerTool: call.answerTool,
		includeUsage: call.includeUsage, model: model, created: now.Unix(), blocks: map[int]amBlockState{}}
	if traced {
		s.rd = &answerReader{now: time.Now}
	}
	return s
}

// outcome is out with what the stream came to: its usage once it started, and what it answered.
func (s *amStream) outcome(out outcome) outcome {
	if s.started {
		u := chatUsage(s.usage)
		out = out.metered(Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens})
	}
	if s.rd != nil {
		a := s.rd.answer()
		out.answer, out.firstToken = &a, s.rd.firstToken
	}
	return out
}

// amStreamError is an error event of the stream.
type amStreamError struct{ typ, msg string }

func (e *amStreamError) Error() string { return e.typ + ": " + e.msg }

// read reads Server-Sent Events from body (https://html.spec.whatwg.org/multipage/server-sent-events.html):
// data lines up to a blank line make one event. It returns nil once message_stop is relayed.
func (s *amStream) read(body io.Reader) error {
	lines := bufio.NewScanner(body)
	lines.Buffer(make([]byte, 0, 4<<10), amMaxEvent) // grown for a longer line
	var data []byte
	for lines.Scan() {
		line := lines.Bytes()
		if len(line) == 0 {
			if len(data) == 0 {
				continue
			}
			done, err := s.event(data)
			if done || err != nil {
				return err
			}
			data = data[:0]
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
	}
	if err := lines.Err(); err != nil {
		return err
	}
	if len(data) > 0 { // the last event, without its blank line
		if done, err := s.event(data); done || err != nil {
			return err
		}
	}
	return errStreamEnded
}

// event relays one event; done is true after message_stop.
func (s *amStream) event(data []byte) (done bool, err error) {
	if i, text, ok := amTextDelta(data); ok { // most of a stream: read without the decoder
		if s.blocks[i].kind == amBlockText && text != "" {
			return false, s.textDelta(text)
		}
		return false, nil
	}
	ev, ok := amEvent(data) // the other events Anthropic writes: read without the decoder too
	if !ok {
		if err := json.Unmarshal(data, &ev); err != nil {
			return false, fmt.Errorf("unreadable event: %w", err)
		}
	}
	switch ev.Type {
	case "message_start":
		if m := ev.Message; m != nil {
			s.id, s.model, s.usage = m.ID, cmp.Or(m.Model, s.model), m.Usage
			s.textFrame = [2][]byte{}
		}
		return false, s.chunk(wire.ChatDelta{Role: "assistant", Content: ptr(wire.ChatText(""))}, nil, nil)
	case "content_block_start":
		return false, s.blockStart(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		if ev.Delta == nil {
			return false, nil
		}
		b := s.blocks[ev.Index]
		switch {
		case ev.Delta.Type == "text_delta" && b.kind == amBlockText && ev.Delta.Text != "":
			return false, s.chunk(wire.ChatDelta{Content: ptr(wire.ChatText(ev.Delta.Text))}, nil, nil)
		case ev.Delta.Type == "input_json_delta" && b.kind == amBlockAnswer && ev.Delta.PartialJSON != "":
			return false, s.chunk(wire.ChatDelta{Content: ptr(wire.ChatText(ev.Delta.PartialJSON))}, nil, nil)
		case ev.Delta.Type == "input_json_delta" && b.kind == amBlockTool && ev.Delta.PartialJSON != "":
			d := wire.ChatToolCallDelta{Index: b.tool}
			d.Function.Arguments = ev.Delta.PartialJSON
			return false, s.chunk(wire.ChatDelta{ToolCalls: []wire.ChatToolCallDelta{d}}, nil, nil)
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			s.stop = ev.Delta.StopReason
		}
		if u := ev.Usage; u != nil { // cumulative counts: the latest wins
			s.usage.OutputTokens = cmp.Or(u.OutputTokens, s.usage.OutputTokens)
			s.usage.InputTokens = cmp.Or(u.InputTokens, s.usage.InputTokens)
			s.usage.CacheReadInputTokens = cmp.Or(u.CacheReadInputTokens, s.usage.CacheReadInputTokens)
			s.usage.CacheCreationInputTokens = cmp.Or(u.CacheCreationInputTokens, s.usage.CacheCreationInputTokens)
		}
	case "message_stop":
		return true, s.finish()
	case "error":
		e := &amStreamError{typ: "api_error", msg: "the stream failed"}
		if ev.Error != nil {
			e.typ, e.msg = cmp.Or(ev.Error.Type, e.typ), cmp.Or(ev.Error.Message, e.msg)
		}
		return false, e
	}
	return false, nil // ping, content_block_stop, and events added later
}

// amTextDeltaPrefix is how Anthropic writes a text delta event, up to its index
// (https://docs.anthropic.com/en/docs/build-with-claude/streaming#text-delta).
const amTextDeltaPrefix = `{"type":"content_block_delta","index":`

// amTextDelta reads a text delta event written as Anthropic writes it,
// {"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}: its
// block's index and its text, what json.Unmarshal reads from it. ok is false for any other
// event, and any other writing of one (spaces, another order, more members, a large index),
// which the decoder reads.
func amTextDelta(data []byte) (index int, text string, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(amTextDeltaPrefix))
	if !ok {
		return 0, "", false
	}
	n := 0
	for n < len(rest) && n < 6 && '0' <= rest[n] && rest[n] <= '9' {
		index = index*10 + int(rest[n]-'0')
		n++
	}
	if n == 0 || (n > 1 && rest[0] == '0') {
		return 0, "", false
	}
	if rest, ok = bytes.CutPrefix(rest[n:], []byte(`,"delta":{"type":"text_delta","text":`)); !ok || len(rest) == 0 || rest[0] != '"' {
		return 0, "", false
	}
	end := skipValue(rest, 0)
	if string(rest[end:]) != "}}" {
		return 0, "", false
	}
	quoted := rest[:end]
	for _, c := range quoted[1 : len(quoted)-1] {
		if c < 0x20 || c == '\\' || c >= 0x80 { // an escape, a control or UTF-8: the decoder's to read
			err := json.Unmarshal(quoted, &text)
			return index, text, err == nil
		}
	}
	return index, string(quoted[1 : len(quoted)-1]), true
}

// amForms are the stream's other events as Anthropic writes them
// (https://docs.anthropic.com/en/docs/build-with-claude/streaming#event-types), each a form
// whose values are holes ($s a string, $d a count), and what the decoder reads from it.
var amForms = []struct {
	form string
	fill func(ev *wire.MessagesEvent, v []amHole)
}{
	{`{"type":"message_start","message":{"id":$s,"type":"message","role":"assistant","model":$s,"content":[],` +
		`"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":$d,"output_tokens":$d}}}`,
		func(ev *wire.MessagesEvent, v []amHole) {
			ev.Message = &wire.MessagesResponse{ID: v[0].str(), Model: v[1].str(), Content: []wire.MessagesOutBlock{},
				Usage: wire.MessagesUsage{InputTokens: v[2].n, OutputTokens: v[3].n}}
		}},
	{`{"type":"message_start","message":{"id":$s,"type":"message","role":"assistant","model":$s,"content":[],` +
		`"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":$d,"cache_creation_input_tokens":$d,` +
		`"cache_read_input_tokens":$d,"output_tokens":$d}}}`,
		func(ev *wire.MessagesEvent, v []amHole) {
			ev.Message = &wire.MessagesResponse{ID: v[0].str(), Model: v[1].str(), Content: []wire.MessagesOutBlock{},
				Usage: wire.MessagesUsage{InputTokens: v[2].n, CacheCreationInputTokens: v[3].n, CacheReadInputTokens: v[4].n, OutputTokens: v[5].n}}
		}},
	{`{"type":"content_block_start","index":$d,"content_block":{"type":"text","text":$s}}`,
		func(ev *wire.MessagesEvent, v []amHole) {
			ev.Index, ev.ContentBlock = int(v[0].n), &wire.MessagesOutBlock{Type: "text", Text: v[1].str()}
		}},
	{`{"type":"content_block_stop","index":$d}`,
		func(ev *wire.MessagesEvent, v []amHole) { ev.Index = int(v[0].n) }},
	{`{"type":"message_delta","delta":{"stop_reason":$s,"stop_sequence":null},"usage":{"output_tokens":$d}}`,
		func(ev *wire.MessagesEvent, v []amHole) {
			ev.Delta, ev.Usage = &wire.MessagesDelta{StopReason: v[0].str()}, &wire.MessagesUsage{OutputTokens: v[1].n}
		}},
	{`{"type":"message_stop"}`, func(*wire.MessagesEvent, []amHole) {}},
	{`{"type":"ping"}`, func(*wire.MessagesEvent, []amHole) {}},
}

// amHole is a value read in a hole of an event's form: a string's bytes, or a count.
type amHole struct {
	s []byte
	n int64
}

func (h amHole) str() string { return string(h.s) }

// amEvent reads an event written in one of amForms: what json.Unmarshal reads from it. ok is
// false for any other event or writing of one (an escape, a long count, spaces, another
// order), which the decoder reads.
func amEvent(data []byte) (ev wire.MessagesEvent, ok bool) {
	var holes [6]amHole
	for _, f := range amForms {
		if v, ok := amMatch(data, f.form, holes[:0]); ok {
			ev.Type = amEventType(f.form)
			f.fill(&ev, v)
			return ev, true
		}
	}
	return ev, false
}

// amEventType is a form's type: the string after its `{"type":`.
func amEventType(form string) string {
	form = form[len(`{"type":"`):]
	return form[:strings.IndexByte(form, '"')]
}

// amMatch matches data to form, appending the values of its holes to v: a string hole holds
// printable ASCII without an escape, a count hole at most nine digits without a leading zero.
func amMatch(data []byte, form string, v []amHole) ([]amHole, bool) {
	for {
		i := strings.IndexByte(form, '$')
		if i < 0 {
			return v, string(data) == form
		}
		if len(data) < i || string(data[:i]) != form[:i] {
			return nil, false
		}
		data = data[i:]
		var n int
		switch form[i+1] {
		case 's':
			if len(data) == 0 || data[0] != '"' {
				return nil, false
			}
			for n = 1; n < len(data) && data[n] != '"'; n++ {
				if c := data[n]; c < 0x20 || c == '\\' || c >= 0x80 {
					return nil, false
				}
			}
			if n == len(data) {
				return nil, false
			}
			v = append(v, amHole{s: data[1:n]})
			n++
		case 'd':
			var h amHole
			for n < len(data) && n < 9 && '0' <= data[n] && data[n] <= '9' {
				h.n = h.n*10 + int64(data[n]-'0')
				n++
			}
			if n == 0 || (n > 1 && data[0] == '0') {
				return nil, false
			}
			v = append(v, h)
		}
		data, form = data[n:], form[i+2:]
	}
}

// blockStart opens content block i: a tool call starts with its id and name.
func (s *amStream) blockStart(i int, b *wire.MessagesOutBlock) error {
	if b == nil {
		return nil
	}
	switch {
	case b.Type == "text":
		s.blocks[i] = amBlockState{kind: amBlockText}
		if b.Text != "" {
			return s.chunk(wire.ChatDelta{Content: ptr(wire.ChatText(b.Text))}, nil, nil)
		}
	case b.Type == "tool_use" && s.answerTool != "" && b.Name == s.answerTool:
		s.blocks[i] = amBlockState{kind: amBlockAnswer}
	case b.Type == "tool_use":
		d := wire.ChatToolCallDelta{Index: s.tools, ID: b.ID, Type: "function"}
		d.Function.Name = b.Name
		s.blocks[i] = amBlockState{kind: amBlockTool, tool: s.tools}
		s.tools++
		return s.chunk(wire.ChatDelta{ToolCalls: []wire.ChatToolCallDelta{d}}, nil, nil)
	default:
		s.blocks[i] = amBlockState{kind: amBlockIgnored}
	}
	return nil
}

// finish writes the chunk with the finish reason, the usage chunk when the request asked for
// it, and [DONE].
func (s *amStream) finish() error {
	reason := amFinishReason(s.stop, s.tools > 0)
	if err := s.chunk(wire.ChatDelta{}, &reason, nil); err != nil {
		return err
	}
	if s.includeUsage {
		u := chatUsage(s.usage)
		if err := s.chunk(wire.ChatDelta{}, nil, &u); err != nil {
			return err
		}
	}
	return s.line([]byte("[DONE]"))
}

// chunk writes one chunk; a usage chunk has no choices.
func (s *amStream) chunk(delta wire.ChatDelta, finish *string, usage *wire.ChatUsage) error {
	c := wire.ChatChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model,
		Choices: []wire.ChatChunkChoice{{Delta: delta, FinishReason: finish}}, Usage: usage}
	if !s.started {
		c.Choices[0].Delta.Role = "assistant"
	}
	if usage != nil {
		c.Choices = []wire.ChatChunkChoice{}
	}
	if err := s.write(&c); err != nil {
		return err
	}
	if s.rd != nil {
		s.rd.chunk(&c)
	}
	return nil
}

// textDelta writes the chunk of a text, as chunk does; straight in its frame (textChunk) when
// the chunk itself is not needed: after the first chunk and when the call is not traced.
func (s *amStream) textDelta(text string) error {
	if s.started && s.rd == nil {
		return s.textChunk(text)
	}
	return s.chunk(wire.ChatDelta{Content: ptr(wire.ChatText(text))}, nil, nil)
}

// write writes c's data line. Most of a stream's chunks carry a text and nothing else, all
// alike but for it: those are written in a frame made once (textChunk), the others encoded.
func (s *amStream) write(c *wire.ChatChunk) error {
	if s.started && c.Usage == nil && len(c.Choices) == 1 && c.Choices[0].FinishReason == nil {
		if d := c.Choices[0].Delta; d.Role == "" && d.ToolCalls == nil && d.Content != nil {
			return s.textChunk(string(*d.Content))
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return s.line(b)
}

// textChunk writes the data line of a chunk whose delta is text alone, byte for byte what
// json.Marshal writes: the stream's text frame (the encoding of such a chunk with an empty
// text, cut where the text goes) around the text's JSON string, escaped as json.Marshal does.
func (s *amStream) textChunk(text string) error {
	const empty = `"content":""`
	if s.textFrame[0] == nil {
		frame, err := json.Marshal(wire.ChatChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model,
			Choices: []wire.ChatChunkChoice{{Delta: wire.ChatDelta{Content: ptr(wire.ChatText(""))}}}})
		if err != nil {
			return err
		}
		// The first such key outside a string: within a string its quotes are escaped.
		i := bytes.Index(frame, []byte(empty)) + len(`"content":`)
		s.textFrame = [2][]byte{frame[:i], frame[i+len(`""`):]}
		s.text = json.NewEncoder(&s.buf)
	}
	s.buf.Reset()
	s.buf.WriteString("data: ")
	s.buf.Write(s.textFrame[0])
	if plainJSON(text) {
		s.buf.WriteByte('"')
		s.buf.WriteString(text)
		s.buf.WriteByte('"')
	} else {
		if err := s.text.Encode(text); err != nil {
			return err
		}
		s.buf.Truncate(s.buf.Len() - 1) // Encode's newline
	}
	s.buf.Write(s.textFrame[1])
	s.buf.WriteString("\n\n")
	return s.send()
}

// plainJSON reports whether text is written in JSON as it is, between quotes, by
// json.Marshal: printable ASCII with nothing it escapes (a quote, a backslash, <, > and &).
func plainJSON(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// line writes "data: <data>" and flushes it, the status first if it is not written yet.
func (s *amStream) line(data []byte) error {
	if !s.started {
		s.started = true
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
	}
	s.buf.Reset()
	s.buf.WriteString("data: ")
	s.buf.Write(data)
	s.buf.WriteString("\n\n")
	return s.send()
}

// send writes buf, a data line, and flushes it.
func (s *amStream) send() error {
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return err
	}
	_ = s.rc.Flush() // a writer that cannot flush (a buffered Lambda answer) sends at the end
	return nil
}

// fail tells the client the answer failed: an HTTP error while nothing is written, OpenAI's
// error object as a data line after (the stream then ends without [DONE]).
func (s *amStream) fail(anthropicStatus int, msg string) {
	status, typ, code := amErrorFor(cmp.Or(anthropicStatus, http.StatusInternalServerError))
	if s.rd != nil {
		s.rd.failed(typ, code, msg)
	}
	if !s.started {
		writeError(s.w, status, typ, code, msg, 0)
		return
	}
	body := wire.ChatErrorBody{Error: wire.ChatError{Message: msg, Type: typ}}
	if code != "" {
		body.Error.Code = &code
	}
	b, _ := json.Marshal(body) // strings only
	_ = s.line(b)
}
