package gateway

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/wire"
)

// cvMaxFrame bounds one message of the event stream; Bedrock's events are small deltas.
const cvMaxFrame = 8 << 20

// cvFrames reads the messages of an AWS event stream
// (https://smithy.io/2.0/aws/amazon-eventstream.html): each a prelude (its total length and
// its headers' length, big-endian, and their CRC32), headers, a payload, and the CRC32 of all
// before it. The prelude is checked here, so that a corrupt or hostile length can neither
// make the decoder allocate nor read past the message; the AWS SDK's decoder reads the rest
// and checks the message's CRC.
type cvFrames struct {
	r       io.Reader
	dec     *eventstream.Decoder
	payload []byte // the last payload's buffer, reused
}

// cvPreludeLen is the prelude's length; a message is at least its prelude and its CRC.
const cvPreludeLen = 12

// next returns the next message: io.EOF at the end of the stream, another error for a message
// cut short, corrupt or too large.
func (f *cvFrames) next() (eventstream.Message, error) {
	var prelude [cvPreludeLen]byte
	switch _, err := io.ReadFull(f.r, prelude[:]); {
	case errors.Is(err, io.EOF): // nothing more, between two messages
		return eventstream.Message{}, io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		return eventstream.Message{}, fmt.Errorf("event stream: a message is cut short: %w", err)
	case err != nil:
		return eventstream.Message{}, fmt.Errorf("event stream: %w", err)
	}
	total, headers := binary.BigEndian.Uint32(prelude[0:4]), binary.BigEndian.Uint32(prelude[4:8])
	if crc32.ChecksumIEEE(prelude[:8]) != binary.BigEndian.Uint32(prelude[8:]) {
		return eventstream.Message{}, fmt.Errorf("event stream: a message's prelude: %w", eventstream.ChecksumError{})
	}
	if total < cvPreludeLen+4 || total > cvMaxFrame || headers > total-cvPreludeLen-4 {
		return eventstream.Message{}, fmt.Errorf("event stream: a message of %d bytes with %d bytes of headers (at most %d bytes)", total, headers, cvMaxFrame)
	}
	rest := io.LimitReader(f.r, int64(total)-cvPreludeLen)
	msg, err := f.dec.Decode(io.MultiReader(bytes.NewReader(prelude[:]), rest), f.payload[:0])
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF): // inside the message
		return eventstream.Message{}, fmt.Errorf("event stream: a message of %d bytes is cut short: %w", total, io.ErrUnexpectedEOF)
	case err != nil:
		return eventstream.Message{}, fmt.Errorf("event stream: a message of %d bytes: %w", total, err)
	}
	if msg.Payload != nil {
		f.payload = msg.Payload
	}
	return msg, nil
}

// cvHeader is a message's string header, "" when it has none.
func cvHeader(m eventstream.Message, name string) string {
	if v, ok := m.Headers.Get(name).(eventstream.StringValue); ok {
		return string(v)
	}
	return ""
}

// cvStreamError is an exception of the stream: an exception message (:message-type exception,
// its type in :exception-type, such as "throttlingException") or an error message (:error-code).
type cvStreamError struct{ typ, msg string }

// Error says the exception's type and message.
func (e *cvStreamError) Error() string { return e.typ + ": " + e.msg }

// streamConverse relays a ConverseStream answer: each event is read as it arrives and its
// chunk, if it makes one, written and flushed at once, through the Messages relay's amStream
// (the same chunks, from Converse's events). Converse sends the usage (metadata) after
// messageStop: the finish reason is written at messageStop, the usage chunk and [DONE] once the
// usage is known.
func streamConverse(w http.ResponseWriter, r *http.Request, body io.Reader, t llm.Target, call *cvCall, id string, out outcome, traced bool) outcome {
	s := newAMStream(w, &amCall{answerTool: call.answerTool, includeUsage: call.includeUsage}, t.Model, time.Now(), traced)
	s.id = id
	err := readConverseStream(s, body)
	var e *cvStreamError
	switch {
	case err == nil:
	case errors.As(err, &e):
		slog.WarnContext(r.Context(), "gateway: the provider's stream failed", "provider", t.Provider, "type", e.typ, "message", e.msg)
		s.fail(cvFailureOf(e.typ, http.StatusBadGateway).status, fmt.Sprintf("%s (%s): %s", t.Provider, e.typ, e.msg))
	case r.Context().Err() != nil:
		// the client is gone: nobody to tell
	default:
		slog.WarnContext(r.Context(), "gateway: the provider's stream was cut", "provider", t.Provider, "error", err)
		s.fail(http.StatusBadGateway, fmt.Sprintf("%s: %v", t.Provider, err))
	}
	return s.outcome(out)
}

// readConverseStream relays the events of body to s. It returns nil once the answer is
// finished: messageStop and metadata relayed, or messageStop and the end of the stream.
func readConverseStream(s *amStream, body io.Reader) error {
	frames := &cvFrames{r: body, dec: eventstream.NewDecoder()}
	var stopped, metered bool
	for {
		msg, err := frames.next()
		if err == io.EOF {
			if !stopped {
				return errStreamEnded
			}
			return cvFinish(s)
		}
		if err != nil {
			return err
		}
		switch kind := cvHeader(msg, ":message-type"); kind {
		case "event":
		case "exception":
			var ev wire.ConverseEvent
			_ = json.Unmarshal(msg.Payload, &ev) // an unreadable one is still an exception
			return &cvStreamError{typ: cvExceptionType(cvHeader(msg, ":exception-type")), msg: cmp.Or(ev.Message, ev.OriginalMessage, "the stream failed")}
		case "error":
			return &cvStreamError{typ: cmp.Or(cvHeader(msg, ":error-code"), "InternalServerException"), msg: cmp.Or(cvHeader(msg, ":error-message"), "the stream failed")}
		default:
			return fmt.Errorf("event stream: a message of type %q", kind)
		}
		var ev wire.ConverseEvent
		if err := json.Unmarshal(msg.Payload, &ev); err != nil {
			return fmt.Errorf("unreadable %s event: %w", cvHeader(msg, ":event-type"), err)
		}
		switch cvHeader(msg, ":event-type") {
		case "messageStart":
			err = s.chunk(wire.ChatDelta{Role: "assistant", Content: ptr(wire.ChatText(""))}, nil, nil)
		case "contentBlockStart":
			err = cvBlockStart(s, ev)
		case "contentBlockDelta":
			err = cvBlockDelta(s, ev)
		case "messageStop":
			stopped = true
			s.stop = cvStopReason(ev.StopReason)
			reason := amFinishReason(s.stop, s.tools > 0)
			err = s.chunk(wire.ChatDelta{}, &reason, nil)
		case "metadata":
			if ev.Usage != nil {
				s.usage, metered = messagesUsage(*ev.Usage), true
			}
		} // contentBlockStop, and events added later, say nothing a chunk carries
		if err != nil {
			return err
		}
		if stopped && metered {
			return cvFinish(s)
		}
	}
}

// cvBlockStart opens a content block: a tool call starts with its id and name. Text blocks
// have no start event: their first delta opens them (cvBlockDelta).
func cvBlockStart(s *amStream, ev wire.ConverseEvent) error {
	if ev.Start != nil && ev.Start.ToolUse != nil {
		tu := ev.Start.ToolUse
		return s.blockStart(ev.ContentBlockIndex, &wire.MessagesOutBlock{Type: "tool_use", ID: tu.ToolUseID, Name: tu.Name})
	}
	s.blocks[ev.ContentBlockIndex] = amBlockState{kind: amBlockIgnored} // reasoning, and blocks added later
	return nil
}

// cvBlockDelta relays a delta: text as content, a tool call's input as its arguments (or as
// content, for the answer tool). Reasoning and other deltas are not relayed.
func cvBlockDelta(s *amStream, ev wire.ConverseEvent) error {
	d, i := ev.Delta, ev.ContentBlockIndex
	if d == nil {
		return nil
	}
	if _, open := s.blocks[i]; !open && d.Text != nil {
		s.blocks[i] = amBlockState{kind: amBlockText}
	}
	switch b := s.blocks[i]; {
	case d.Text != nil && *d.Text != "" && b.kind == amBlockText:
		return s.chunk(wire.ChatDelta{Content: (*wire.ChatText)(d.Text)}, nil, nil)
	case d.ToolUse != nil && d.ToolUse.Input != "" && b.kind == amBlockAnswer:
		return s.chunk(wire.ChatDelta{Content: ptr(wire.ChatText(d.ToolUse.Input))}, nil, nil)
	case d.ToolUse != nil && d.ToolUse.Input != "" && b.kind == amBlockTool:
		td := wire.ChatToolCallDelta{Index: b.tool}
		td.Function.Arguments = d.ToolUse.Input
		return s.chunk(wire.ChatDelta{ToolCalls: []wire.ChatToolCallDelta{td}}, nil, nil)
	}
	return nil
}

// cvFinish ends the answer: the usage chunk when the request asked for it, and [DONE].
func cvFinish(s *amStream) error {
	if s.includeUsage {
		u := chatUsage(s.usage)
		if err := s.chunk(wire.ChatDelta{}, nil, &u); err != nil {
			return err
		}
	}
	return s.line([]byte("[DONE]"))
}

// cvExceptionType is an exception event's type as an error type: the stream's member names
// ("throttlingException") are the error types ("ThrottlingException") in lower camel case.
func cvExceptionType(name string) string {
	if name == "" {
		return "InternalServerException"
	}
	return strings.ToUpper(name[:1]) + name[1:]
}
