package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// Usage is what a call consumed, as the relay read it from the provider's answer: what the
// limits and the cost are counted from.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Total is every token of the call.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

type usageKey struct{}

// withUsage returns r carrying a Usage its relay fills in (reportUsage).
func withUsage(r *http.Request) (*http.Request, *Usage) {
	u := &Usage{}
	return r.WithContext(context.WithValue(r.Context(), usageKey{}, u)), u
}

// reportUsage records a call's usage on r (a relay calls it once it knows); a request without
// a Usage (a test calling a relay directly) ignores it.
func reportUsage(r *http.Request, u Usage) {
	if p, ok := r.Context().Value(usageKey{}).(*Usage); ok {
		*p = u
	}
}

// usageOf reads the usage of an OpenAI-shaped answer or stream chunk ({"usage": {...}});
// ok is false when it has none.
func usageOf(data []byte) (Usage, bool) {
	if !bytes.Contains(data, []byte(`"usage"`)) {
		return Usage{}, false
	}
	var v struct {
		Usage *Usage `json:"usage"`
	}
	if err := json.Unmarshal(data, &v); err != nil || v.Usage == nil {
		return Usage{}, false
	}
	return *v.Usage, true
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
