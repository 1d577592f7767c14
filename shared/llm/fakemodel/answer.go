package fakemodel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// imageTokens is what one image part adds to the prompt's token count (OpenAI's price of a
// low-detail image).
const imageTokens = 85

// Tokens is the fake tokenizer: one token per four bytes of text, rounded up. It makes usage,
// and so cost, a deterministic function of the text.
func Tokens(text string) int { return (len(text) + 3) / 4 }

// PromptTokens is the prompt's size in tokens as the server reports it: Tokens of the system
// prompt, of each other message and of the schema, plus 85 per image.
func (c Call) PromptTokens() int {
	n := Tokens(c.System) + Tokens(string(c.Schema))
	for _, m := range c.Messages {
		if m.Role == "system" || m.Role == "developer" {
			continue // in c.System
		}
		n += Tokens(m.Text) + imageTokens*m.Images
	}
	return max(n, 1)
}

// hash is a short digest of what decides the default answer.
func (c Call) hash() string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field(string(c.API))
	field(c.Model)
	field(c.System)
	for _, m := range c.Messages {
		field(m.Role)
		field(m.Text)
		field(strconv.Itoa(m.Images))
	}
	field(c.Format)
	field(c.SchemaName)
	field(string(c.Schema))
	return hex.EncodeToString(h.Sum(nil))[:8]
}

// answerKind is what an answer holds.
type answerKind int

const (
	kindText    answerKind = iota // text, or JSON as text
	kindRefusal                   // a refusal
	kindTool                      // a tool call whose arguments are text
)

// answer is a successful reply, independent of the protocol it is written in.
type answer struct {
	kind answerKind
	// text is the content, the refusal, or the tool call's arguments.
	text      string
	truncated bool
	// id is unique per call and the same for the same request at the same position.
	id                                     string
	promptTokens, completionTokens, cached int
	// chunkInterval is the wait before each streamed event after the first (Reply.ChunkInterval).
	chunkInterval time.Duration
}

// compose builds the answer reply r gives to call c.
func compose(c *Call, r Reply) answer {
	a := answer{kind: kindText, id: fmt.Sprintf("%s%04d", c.hash(), c.Seq), chunkInterval: r.ChunkInterval}
	switch {
	case r.Refusal != "":
		a.kind, a.text = kindRefusal, r.Refusal
	case r.JSON != nil:
		a.text = string(r.JSON)
	case r.Text != "":
		a.text = r.Text
	default:
		a.text = defaultContent(c)
	}
	if a.kind == kindText && c.Format == FormatTool {
		a.kind = kindTool
	}
	if a.kind != kindRefusal {
		n := Tokens(a.text)
		limit := n
		if r.Truncate {
			limit = n / 2
		}
		if c.MaxTokens > 0 && c.MaxTokens < limit {
			limit = c.MaxTokens
		}
		a.truncated = r.Truncate || limit < n
		a.text = cutTokens(a.text, limit)
	}
	a.promptTokens = c.PromptTokens()
	a.completionTokens = Tokens(a.text)
	a.cached = min(max(r.CachedTokens, 0), a.promptTokens)
	return a
}

// defaultContent is the answer of a call no rule gives content to.
func defaultContent(c *Call) string {
	text := fmt.Sprintf("Simulated answer from %s (fakemodel, request %s).", c.Model, c.hash())
	switch c.Format {
	case FormatJSONSchema, FormatTool:
		v, err := Instance(c.Schema)
		if err != nil {
			return "{}"
		}
		b, _ := json.Marshal(v) // Instance returns JSON values only
		return string(b)
	case FormatJSONObject:
		b, _ := json.Marshal(map[string]string{"answer": text})
		return string(b)
	}
	return text
}

// cutTokens keeps the first n tokens of s, at a character boundary.
func cutTokens(s string, n int) string {
	end := 4 * n
	if end >= len(s) {
		return s
	}
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end]
}
