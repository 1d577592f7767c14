package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/llm/wire"
)

// Usage is what a call consumed, as the relay read it from the provider's answer: what the
// limits and the cost are counted from.
type Usage struct {
	PromptTokens, CompletionTokens int64
}

// Total is every token of the call.
func (u Usage) Total() int64 { return u.PromptTokens + u.CompletionTokens }

// outcome is what a relay's call came to, returned to the gateway, which accounts for it and
// records it after the relay: the usage the limits, the metrics and the span count, the
// provider's request id and, when the call is traced, what it answered (the answer and when
// its first token left): a translating relay's read from the values it wrote, the
// passthrough's from the provider's bytes as they passed.
type outcome struct {
	usage     Usage
	hasUsage  bool
	requestID string
	// answer is what the relay answered, when the call is traced or failed in the gateway.
	answer     *answer
	firstToken time.Time
}

// failed answers an error in OpenAI's shape (writeError) and returns o with it as its answer.
func (o outcome) failed(w http.ResponseWriter, status int, typ, code, message string) outcome {
	writeError(w, status, typ, code, message, 0)
	o.answer = &answer{Error: &answerError{Message: message, Type: typ, Code: code}}
	return o
}

// metered is o with u as its usage.
func (o outcome) metered(u Usage) outcome {
	o.usage, o.hasUsage = u, true
	return o
}

// usageOf reads the usage of an OpenAI-shaped answer or stream chunk ({"usage": {...}});
// ok is false when it has none. It decodes the value of the last "usage" key only, not the
// whole answer (which decoding dominated the gateway's own time, BenchmarkChatCompletion): the
// bytes "usage" between unescaped quotes cannot occur inside a JSON string, and OpenAI writes
// usage last.
func usageOf(data []byte) (Usage, bool) {
	if !bytes.Contains(data, []byte(`"usage"`)) { // most chunks of a stream; bytes.Index is the faster scan
		return Usage{}, false
	}
	i := bytes.LastIndex(data, []byte(`"usage"`))
	if i < 0 {
		return Usage{}, false
	}
	value, ok := bytes.CutPrefix(bytes.TrimLeft(data[i+len(`"usage"`):], " \t\r\n"), []byte(":"))
	if !ok {
		return Usage{}, false
	}
	value = value[:skipValue(value, skipSpace(value, 0))]
	var u *wire.ChatUsage
	if err := json.Unmarshal(value, &u); err != nil || u == nil {
		return Usage{}, false
	}
	return usageOfChat(u), true
}

// watcher reads the usage of an answer as it is passed on.
type watcher interface {
	io.Writer
	// Usage is the answer's usage; ok is false when it had none.
	Usage() (Usage, bool)
}

// usageWatcher is the watcher of an answer of contentType: a stream's lines, or a JSON body.
func usageWatcher(contentType string) watcher {
	if strings.HasPrefix(contentType, "text/event-stream") {
		return &sseUsage{}
	}
	return &jsonUsage{}
}

// maxWatchedJSON bounds the JSON answer kept to read its usage.
const maxWatchedJSON = 8 << 20

// jsonUsage keeps a JSON answer to read its usage at the end.
type jsonUsage struct {
	body     bytes.Buffer
	tooLarge bool
}

func (j *jsonUsage) Write(p []byte) (int, error) {
	if !j.tooLarge {
		if j.body.Len()+len(p) > maxWatchedJSON {
			j.tooLarge = true
			j.body.Reset()
		} else {
			j.body.Write(p)
		}
	}
	return len(p), nil
}

func (j *jsonUsage) Usage() (Usage, bool) {
	if j.tooLarge {
		return Usage{}, false
	}
	return usageOf(j.body.Bytes())
}

// sseUsage watches the lines of an OpenAI SSE stream as they pass and keeps the last usage
// (the final chunk's, sent when the request asked for stream_options.include_usage).
type sseUsage struct {
	line  []byte // the part of a line not ended yet
	usage Usage
	found bool
}

// maxWatchedLine bounds the part of a line kept; a longer line (a huge chunk) is not read for
// usage, and is still passed on.
const maxWatchedLine = 256 << 10

func (s *sseUsage) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if len(s.line)+len(rest) <= maxWatchedLine {
				s.line = append(s.line, rest...)
			} else {
				s.line = s.line[:0]
			}
			break
		}
		line := append(s.line, rest[:i]...)
		if data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
			if u, ok := usageOf(bytes.TrimSpace(data)); ok {
				s.usage, s.found = u, true
			}
		}
		s.line = s.line[:0]
		rest = rest[i+1:]
	}
	return len(p), nil
}

func (s *sseUsage) Usage() (Usage, bool) {
	if len(s.line) > 0 { // a last line without its newline
		_, _ = s.Write([]byte("\n"))
	}
	return s.usage, s.found
}

// usageHider passes an OpenAI stream on to dst line by line, except the usage chunk (a data
// line whose chunk has no choices but a usage) and the blank line that ends its event: the
// chunk the gateway asks the provider for (stream_options.include_usage), to count a call's
// tokens, when the client did not. A line longer than maxWatchedLine is passed on unread.
type usageHider struct {
	dst       io.Writer
	line      []byte // the part of a line not ended yet
	long      bool   // passing on the rest of a long line
	dropBlank bool   // the next line, if blank, ends a dropped event
}

func (h *usageHider) Write(p []byte) (int, error) {
	// kept is where the lines of p passed on as they are start: they are written together,
	// one write for the events of a read rather than one per line.
	kept, at := 0, 0
	flush := func() error {
		if kept < at {
			if err := h.pass(p[kept:at]); err != nil {
				return err
			}
		}
		kept = at
		return nil
	}
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if h.long || (i < 0 && len(h.line)+len(rest) > maxWatchedLine) {
			n := len(rest)
			if i >= 0 {
				n = i + 1
			}
			if err := flush(); err != nil {
				return 0, err
			}
			if err := h.pass(append(h.line, rest[:n]...)); err != nil {
				return 0, err
			}
			h.line, h.long, rest = h.line[:0], i < 0, rest[n:]
			at += n
			kept = at
			continue
		}
		if i < 0 {
			if err := flush(); err != nil {
				return 0, err
			}
			h.line = append(h.line, rest...)
			return len(p), nil
		}
		carried := len(h.line) > 0
		line := append(h.line, rest[:i+1]...)
		rest = rest[i+1:]
		dropped := h.drop(line)
		switch {
		case dropped || carried: // p's lines so far, then this one if kept
			if err := flush(); err != nil {
				return 0, err
			}
			if !dropped {
				if err := h.pass(line); err != nil {
					return 0, err
				}
			}
			at += i + 1
			kept = at
		default:
			at += i + 1
		}
		h.line = line[:0]
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close passes on a last line without its newline.
func (h *usageHider) Close() error {
	if len(h.line) == 0 {
		return nil
	}
	err := h.pass(h.line)
	h.line = h.line[:0]
	return err
}

func (h *usageHider) pass(b []byte) error {
	_, err := h.dst.Write(b)
	return err
}

// drop reports whether line is the usage chunk's data line or the blank line after it.
func (h *usageHider) drop(line []byte) bool {
	trimmed := bytes.TrimSpace(line)
	if h.dropBlank {
		h.dropBlank = false
		if len(trimmed) == 0 {
			return true
		}
	}
	data, ok := bytes.CutPrefix(trimmed, []byte("data:"))
	if !ok || !bytes.Contains(data, []byte(`"usage"`)) {
		return false
	}
	var chunk struct {
		Choices []json.RawMessage `json:"choices"`
		Usage   *wire.ChatUsage   `json:"usage"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &chunk) != nil || len(chunk.Choices) > 0 || chunk.Usage == nil {
		return false
	}
	h.dropBlank = true
	return true
}
