package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/plumehq/plume/shared/textcut"
)

// payload is a span's input or output as its detail shows it: chat messages when it is an
// OpenAI-style array of {role, content} (or an object with such "messages"), else JSON
// pretty-printed (folded), else text. At most maxShownBytes of it are shown.
type payload struct {
	Present  bool
	Messages []message
	// JSON is set for JSON that is not chat messages, Text for anything else.
	JSON, Text shown
	// Omitted counts the bytes of messages not shown (past the bound).
	Omitted int
	// TestID names the payload for tests (span-input, span-output).
	TestID string
}

// message is one chat message: its role and its content's parts.
type message struct {
	Role  string
	Parts []part
}

// part is one part of a message's content: text, an image, or other JSON.
type part struct {
	Text string
	// JSON is a part of another kind, compact.
	JSON string
	// ImageURL is an image at an http(s) URL, linked and never loaded from the page (another
	// origin). ImageNote stands for an image whose bytes are in the span itself (a data: URL
	// or base64), never shown: its kind and size.
	ImageURL  string
	ImageNote string
}

// readPayload reads a span's input or output.
func readPayload(s *string, testID string) payload {
	p := readPayloadText(s)
	p.TestID = testID
	return p
}

func readPayloadText(s *string) payload {
	if s == nil {
		return payload{}
	}
	text := strings.TrimSpace(*s)
	if text == "" || (text[0] != '[' && text[0] != '{') {
		return payload{Present: true, Text: show(s)}
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if dec.Decode(&v) != nil || dec.More() {
		return payload{Present: true, Text: show(s)}
	}
	if raw, ok := chatMessages(v); ok {
		p := payload{Present: true}
		budget := maxShownBytes
		for _, m := range raw {
			msg, omitted := readMessage(m, &budget)
			p.Messages = append(p.Messages, msg)
			p.Omitted += omitted
		}
		return p
	}
	var buf bytes.Buffer
	pretty := text
	if json.Indent(&buf, []byte(text), "", "  ") == nil {
		pretty = buf.String()
	}
	return payload{Present: true, JSON: show(&pretty)}
}

// chatMessages returns the messages of v when v is chat messages: an array of objects that
// each have a string role, or an object whose "messages" is one.
func chatMessages(v any) ([]map[string]any, bool) {
	if o, ok := v.(map[string]any); ok {
		v = o["messages"]
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, false
	}
	out := make([]map[string]any, 0, len(arr))
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		if _, ok := m["role"].(string); !ok {
			return nil, false
		}
		out = append(out, m)
	}
	return out, true
}

// readMessage reads one message, spending *budget bytes of text at most; it returns how many
// bytes were left out.
func readMessage(m map[string]any, budget *int) (message, int) {
	msg := message{Role: m["role"].(string)}
	omitted := 0
	text := func(s string) string {
		cut, _ := textcut.Cut(s, max(*budget, 0))
		*budget -= len(cut)
		omitted += len(s) - len(cut)
		return cut
	}
	compact := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return text(string(b))
	}
	switch c := m["content"].(type) {
	case string:
		msg.Parts = append(msg.Parts, part{Text: text(c)})
	case []any:
		for _, e := range c {
			msg.Parts = append(msg.Parts, readPart(e, text, compact))
		}
	case nil:
	default:
		msg.Parts = append(msg.Parts, part{JSON: compact(c)})
	}
	for _, k := range []string{"tool_calls", "function_call", "tool_call_id", "name"} {
		if v, ok := m[k]; ok && v != nil {
			msg.Parts = append(msg.Parts, part{JSON: compact(map[string]any{k: v})})
		}
	}
	return msg, omitted
}

// readPart reads one part of a message's content: {type: text}, {type: image_url} (OpenAI),
// {type: input_image} (OpenAI responses), {type: image, source: {type: base64}} (Anthropic);
// any other part is shown as JSON.
func readPart(e any, text func(string) string, compact func(any) string) part {
	o, ok := e.(map[string]any)
	if !ok {
		if s, ok := e.(string); ok {
			return part{Text: text(s)}
		}
		return part{JSON: compact(e)}
	}
	switch o["type"] {
	case "text", "input_text", "output_text":
		if s, ok := o["text"].(string); ok {
			return part{Text: text(s)}
		}
	case "image_url", "input_image":
		u := o["image_url"]
		if obj, ok := u.(map[string]any); ok {
			u = obj["url"]
		}
		if s, ok := u.(string); ok {
			return imagePart(s)
		}
	case "image":
		if src, ok := o["source"].(map[string]any); ok {
			if data, ok := src["data"].(string); ok {
				return part{ImageNote: fmt.Sprintf("Image (base64, %d bytes) not shown.", len(data))}
			}
			if u, ok := src["url"].(string); ok {
				return imagePart(u)
			}
		}
	}
	return part{JSON: compact(o)}
}

// imagePart is an image at u: an http(s) URL is linked, a data: URL (or anything else) is
// only described.
func imagePart(u string) part {
	if strings.HasPrefix(strings.ToLower(u), "data:") {
		return part{ImageNote: fmt.Sprintf("Image (data URL, %d bytes) not shown.", len(u))}
	}
	if p, err := url.Parse(u); err == nil && (p.Scheme == "https" || p.Scheme == "http") && p.Host != "" {
		return part{ImageURL: u}
	}
	return part{ImageNote: fmt.Sprintf("Image (%d bytes of reference) not shown.", len(u))}
}

// imageOrigin is the origin (scheme://host[:port]) of a presigned URL, "" when the URL is not
// plain http(s) with a host of letters, digits, dots, dashes and a port: the bucket's origin
// goes into every page's Content-Security-Policy header, and an attachment is shown inline
// only when its URL's origin is that one.
func imageOrigin(u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.User != nil || p.Host == "" {
		return ""
	}
	for _, r := range p.Host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == ':') {
			return ""
		}
	}
	return p.Scheme + "://" + p.Host
}
