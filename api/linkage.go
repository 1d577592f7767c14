package api

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the hidden linkage metadata (COMPAT.md, "Hidden linkage metadata"): how a
// prompt helper writes it in front of a prompt, how the SDKs' integrations strip it from a
// chat request, and the keys they record on the llm span. The Go client writes and strips it
// (client.Prompt, client.RoundTripper); the gateway strips it from the calls of plain clients;
// span ingestion reads the recorded object by the same keys.

// Linkage is the hidden metadata a prompt helper puts in front of a prompt, written
// <zeroeval>{json}</zeroeval> (COMPAT.md, "Hidden linkage metadata"). The integrations strip
// it from the first system message, substitute Variables in the messages and record it on the
// LLM span, which links the completion to the prompt version. Zero fields are unknown and not
// written.
type Linkage struct {
	// Task is "task": the task name the helper was called with.
	Task string
	// Variables is "variables": the values of the {{var}} tokens.
	Variables map[string]string
	// PromptSlug is "prompt_slug": the prompt the version belongs to.
	PromptSlug string
	// PromptVersion is "prompt_version": the version's number (0: unknown).
	PromptVersion int
	// PromptVersionID is "prompt_version_id", by which the API links the completion.
	PromptVersionID string
	// ContentHash is "content_hash": the version's, by which the API links the completion
	// when there is no PromptVersionID.
	ContentHash string
}

// LinkageStyle is how the metadata's JSON is written: as the zeroeval Python SDK writes it, or
// as the TypeScript SDK does. Readers parse either; the styles exist so that the bytes can be
// the same as one SDK's.
type LinkageStyle int

// Linkage styles.
const (
	// LinkagePython is Python's json.dumps with its defaults: ", " and ": " separators, every
	// character outside printable ASCII escaped (\u00e9, a surrogate pair for 😀, \u007f).
	// The default: the Python SDK is the one the TypeScript SDK ports, and ASCII survives any
	// log line, header or terminal the prompt passes through.
	LinkagePython LinkageStyle = iota
	// LinkageTypeScript is JSON.stringify: no spaces, only '"', '\\' and control characters
	// escaped, everything else as UTF-8.
	LinkageTypeScript
)

// The tag around the metadata in a prompt, and the span attribute the integrations record the
// metadata's object under.
const (
	LinkageOpenTag   = "<zeroeval>"
	LinkageCloseTag  = "</zeroeval>"
	LinkageAttribute = "zeroeval"
)

// The keys of the metadata's object, in the order the SDKs write them.
const (
	LinkageKeyTask            = "task"
	LinkageKeyVariables       = "variables"
	LinkageKeyPromptSlug      = "prompt_slug"
	LinkageKeyPromptVersion   = "prompt_version"
	LinkageKeyPromptVersionID = "prompt_version_id"
	LinkageKeyContentHash     = "content_hash"
)

// Decorate returns content prefixed with l's metadata, with no separator:
// <zeroeval>{"task": ...}</zeroeval>content.
func (l Linkage) Decorate(content string, style LinkageStyle) string {
	b := make([]byte, 0, 160+len(content))
	b = append(b, LinkageOpenTag...)
	b = l.AppendJSON(b, style)
	b = append(b, LinkageCloseTag...)
	return string(append(b, content...))
}

// AppendJSON appends l's JSON object in style to b. Keys come in the order the SDKs write
// them: task, variables, prompt_slug, prompt_version, prompt_version_id, content_hash.
// Variables are written in the order of their names: a Go map has no order, and the SDKs
// write theirs in insertion order, so the bytes are the SDKs' when the application's keys were
// sorted (what a reader of the JSON sees is the same either way).
func (l Linkage) AppendJSON(b []byte, style LinkageStyle) []byte {
	w := linkageWriter{b: append(b, '{'), style: style}
	if l.Task != "" {
		w.member(LinkageKeyTask).string(l.Task)
	}
	if len(l.Variables) > 0 {
		w.member(LinkageKeyVariables)
		inner := linkageWriter{b: append(w.b, '{'), style: style}
		for _, name := range slices.Sorted(maps.Keys(l.Variables)) {
			inner.member(name).string(l.Variables[name])
		}
		w.b = append(inner.b, '}')
	}
	if l.PromptSlug != "" {
		w.member(LinkageKeyPromptSlug).string(l.PromptSlug)
	}
	if l.PromptVersion > 0 {
		w.member(LinkageKeyPromptVersion)
		w.b = strconv.AppendInt(w.b, int64(l.PromptVersion), 10)
	}
	if l.PromptVersionID != "" {
		w.member(LinkageKeyPromptVersionID).string(l.PromptVersionID)
	}
	if l.ContentHash != "" {
		w.member(LinkageKeyContentHash).string(l.ContentHash)
	}
	return append(w.b, '}')
}

// MarshalJSON writes l as JSON.stringify does (LinkageTypeScript).
func (l Linkage) MarshalJSON() ([]byte, error) { return l.AppendJSON(nil, LinkageTypeScript), nil }

// UnmarshalJSON reads a metadata object leniently, as the API does: a field of the wrong type
// is left zero, prompt_version may be a numeric string, and a variable whose value is not a
// string keeps its JSON text ("" for null). Only a value that is not a JSON object is an error.
func (l *Linkage) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return errors.New("linkage metadata is not a JSON object")
	}
	*l = Linkage{
		Task: linkageString(fields[LinkageKeyTask]), PromptSlug: linkageString(fields[LinkageKeyPromptSlug]),
		PromptVersionID: linkageString(fields[LinkageKeyPromptVersionID]), ContentHash: linkageString(fields[LinkageKeyContentHash]),
	}
	if n, err := strconv.Atoi(linkageScalar(fields[LinkageKeyPromptVersion])); err == nil && n > 0 {
		l.PromptVersion = n
	}
	var vars map[string]json.RawMessage
	if json.Unmarshal(fields[LinkageKeyVariables], &vars) == nil && len(vars) > 0 {
		l.Variables = make(map[string]string, len(vars))
		for name, raw := range vars {
			l.Variables[name] = linkageScalar(raw)
		}
	}
	return nil
}

// StripLinkage finds the first <zeroeval>{json}</zeroeval> in content, as the SDKs'
// integrations do, and returns its metadata with content less the tag, stripped of surrounding
// white space as the Python SDK strips it. The object is read as JSON, so "</zeroeval>" inside
// one of its strings does not end it. ok is false, and content returned unchanged, when there
// is no tag or its content is not a JSON object.
func StripLinkage(content string) (l Linkage, rest string, ok bool) {
	start := strings.Index(content, LinkageOpenTag)
	if start < 0 {
		return Linkage{}, content, false
	}
	body := content[start+len(LinkageOpenTag):]
	dec := json.NewDecoder(strings.NewReader(body))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil || raw[0] != '{' {
		return Linkage{}, content, false
	}
	after, found := strings.CutPrefix(strings.TrimLeftFunc(body[dec.InputOffset():], PromptSpace), LinkageCloseTag)
	if !found || l.UnmarshalJSON(raw) != nil {
		return Linkage{}, content, false
	}
	return l, strings.TrimFunc(content[:start]+after, PromptSpace), true
}

// linkageWriter writes the members of one JSON object in a LinkageStyle.
type linkageWriter struct {
	b     []byte
	style LinkageStyle
	n     int
}

// member writes the separator and the key of the next member.
func (w *linkageWriter) member(key string) *linkageWriter {
	if w.n > 0 {
		w.b = append(w.b, ',')
		if w.style == LinkagePython {
			w.b = append(w.b, ' ')
		}
	}
	w.n++
	w.string(key)
	w.b = append(w.b, ':')
	if w.style == LinkagePython {
		w.b = append(w.b, ' ')
	}
	return w
}

// string writes s as a JSON string: Python escapes everything outside printable ASCII
// (ensure_ascii), JSON.stringify only what JSON requires. Invalid UTF-8 is written as U+FFFD.
func (w *linkageWriter) string(s string) {
	const hexDigits = "0123456789abcdef"
	u := func(r rune) {
		w.b = append(w.b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
	}
	w.b = append(w.b, '"')
	for _, r := range s {
		switch r {
		case '"':
			w.b = append(w.b, '\\', '"')
		case '\\':
			w.b = append(w.b, '\\', '\\')
		case '\n':
			w.b = append(w.b, '\\', 'n')
		case '\r':
			w.b = append(w.b, '\\', 'r')
		case '\t':
			w.b = append(w.b, '\\', 't')
		case '\b':
			w.b = append(w.b, '\\', 'b')
		case '\f':
			w.b = append(w.b, '\\', 'f')
		default:
			switch {
			case r < 0x20 || (w.style == LinkagePython && r > 0x7e && r <= 0xffff):
				u(r)
			case w.style == LinkagePython && r > 0xffff:
				hi, lo := utf16.EncodeRune(r)
				u(hi)
				u(lo)
			default:
				w.b = utf8.AppendRune(w.b, r)
			}
		}
	}
	w.b = append(w.b, '"')
}

// linkageString is the value of a JSON string, "" for anything else.
func linkageString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// linkageScalar is a string's value, "" for null or nothing, and the JSON text of anything else.
func linkageScalar(raw json.RawMessage) string {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return ""
	case raw[0] == '"':
		return linkageString(raw)
	}
	return string(raw)
}

// ApplyLinkage does to the messages of a chat completion request what the zeroeval SDKs'
// integrations do with a prompt's linkage metadata (COMPAT.md, "Hidden linkage metadata"): it
// strips the metadata from the first system or developer message and substitutes its
// {{variables}} in every message, in place, and returns it with the prompt template (the
// message's text before substitution). found is false, and msgs untouched, without metadata.
func ApplyLinkage(msgs []map[string]json.RawMessage) (link Linkage, template string, found bool) {
	link, template, found = stripSystemLinkage(msgs)
	if found && len(link.Variables) > 0 {
		substituteAll(msgs, link.Variables)
	}
	return link, template, found
}

// stripSystemLinkage strips the linkage metadata from the first system message of msgs (in
// place) and returns it with the prompt template left there.
func stripSystemLinkage(msgs []map[string]json.RawMessage) (Linkage, string, bool) {
	for _, m := range msgs {
		role := linkageString(m["role"])
		if role != "system" && role != "developer" {
			continue
		}
		var found bool
		var link Linkage
		var template string
		m["content"] = mapText(m["content"], true, func(text string) string {
			if link, template, found = StripLinkage(text); found {
				return template
			}
			return text
		})
		return link, template, found
	}
	return Linkage{}, "", false
}

// substituteAll replaces {{name}} by the value of variable name in every message, as the
// zeroeval SDKs do, in one pass: a value that holds {{another}} is not substituted again.
func substituteAll(msgs []map[string]json.RawMessage, variables map[string]string) {
	pairs := make([]string, 0, 2*len(variables))
	for name, v := range variables {
		pairs = append(pairs, "{{"+name+"}}", v)
	}
	r := strings.NewReplacer(pairs...)
	for _, m := range msgs {
		if c, ok := m["content"]; ok {
			m["content"] = mapText(c, false, r.Replace)
		}
	}
}

// mapText applies f to the text of a message's content: a string, or the text parts of an
// array of parts (only the first one when first is set). Content of another shape is
// returned as it is.
func mapText(content json.RawMessage, first bool, f func(string) string) json.RawMessage {
	var s string
	if json.Unmarshal(content, &s) == nil {
		if out, err := json.Marshal(f(s)); err == nil {
			return out
		}
		return content
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(content, &parts) != nil {
		return content
	}
	for _, p := range parts {
		if linkageString(p["type"]) != "text" {
			continue
		}
		if json.Unmarshal(p["text"], &s) != nil {
			continue
		}
		if out, err := json.Marshal(f(s)); err == nil {
			p["text"] = out
		}
		if first {
			break
		}
	}
	out, err := json.Marshal(parts)
	if err != nil {
		return content
	}
	return out
}

// PromptLink is the part of l that links an llm span to a prompt version: l without its
// variables.
func (l Linkage) PromptLink() PromptLink {
	return PromptLink{Task: l.Task, PromptSlug: l.PromptSlug, PromptVersion: l.PromptVersion,
		PromptVersionID: l.PromptVersionID, ContentHash: l.ContentHash}
}

// PromptSpace is Python's str.isspace, which the SDKs strip around the metadata and from
// prompt text: Unicode White_Space and the ASCII separators U+001C to U+001F.
func PromptSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }
