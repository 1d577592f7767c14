package gateway

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// This file holds a chat completion request as its bytes: the passthrough relay sends the
// client's body on with only the model renamed (and, for a stream, the usage asked for), so
// the body is indexed, never decoded into values and encoded again. Its members are slices of
// the body; a member replaced is spliced in where it stood.

// chatRequest is a chat completion request, a JSON object: its body, and each top-level
// member's value as the client sent it (a slice of body).
type chatRequest struct {
	body    []byte
	members []member
	// fields are the members' values by name, the last of a name (as encoding/json reads a
	// duplicate); a value replaced by set is its new one.
	fields map[string]json.RawMessage
	// edits are the values set, by name.
	edits map[string]json.RawMessage
}

// member is a top-level member of a JSON object: its name and where its value is in the body.
type member struct {
	name       string
	start, end int
}

// readChatBody indexes body, which must be one JSON object; false when it is not.
func readChatBody(body []byte) (*chatRequest, bool) {
	if !json.Valid(body) {
		return nil, false
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	c := &chatRequest{body: body, fields: map[string]json.RawMessage{}}
	i = skipSpace(body, i+1)
	if body[i] == '}' {
		return c, true
	}
	for { // valid JSON: a string key, a colon, a value, then a comma or the closing brace
		keyEnd := skipValue(body, i)
		name, ok := keyOf(body[i:keyEnd])
		if !ok {
			return nil, false
		}
		start := skipSpace(body, skipSpace(body, keyEnd)+1)
		end := skipValue(body, start)
		c.members = append(c.members, member{name: name, start: start, end: end})
		c.fields[name] = body[start:end:end]
		i = skipSpace(body, end)
		if body[i] == '}' {
			return c, true
		}
		i = skipSpace(body, i+1)
	}
}

// keyOf is the name a JSON string stands for: its bytes when it has no escape, nor a byte
// outside ASCII, which encoding/json would replace if not valid UTF-8.
func keyOf(quoted []byte) (string, bool) {
	inner := quoted[1 : len(quoted)-1]
	plain := bytes.IndexByte(inner, '\\') < 0
	for _, c := range inner {
		plain = plain && c < 0x80
	}
	if plain {
		return string(inner), true
	}
	var s string
	return s, json.Unmarshal(quoted, &s) == nil
}

// set replaces the value of name (every member of that name), or adds it at the end.
func (c *chatRequest) set(name string, value json.RawMessage) {
	if c.edits == nil {
		c.edits = map[string]json.RawMessage{}
	}
	c.edits[name], c.fields[name] = value, value
}

// encode is the request as it now stands: the body, with the values set spliced in where their
// members stood, and those it had no member for added at its end (in name order).
func (c *chatRequest) encode() []byte {
	if len(c.edits) == 0 {
		return c.body
	}
	out := make([]byte, 0, len(c.body)+64)
	at := 0
	placed := make(map[string]bool, len(c.edits))
	for _, m := range c.members {
		if v, ok := c.edits[m.name]; ok {
			out = append(append(out, c.body[at:m.start]...), v...)
			at, placed[m.name] = m.end, true
		}
	}
	closing := bytes.LastIndexByte(c.body, '}')
	out = append(out, c.body[at:closing]...)
	empty := len(c.members) == 0
	for _, name := range slices.Sorted(maps.Keys(c.edits)) {
		if placed[name] {
			continue
		}
		if !empty {
			out = append(out, ',')
		}
		quoted, _ := json.Marshal(name) // a string
		out = append(append(append(out, quoted...), ':'), c.edits[name]...)
		empty = false
	}
	return append(out, c.body[closing:]...)
}

// skipSpace is the index of the first byte from i that is not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue is the index just past the JSON value starting at b[i]: a string, an object or
// an array (strings within skipped whole), or a literal or number (up to the next delimiter).
// It does not check the value, and returns len(b) when b ends first.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return len(b)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
