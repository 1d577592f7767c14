package otlp

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// maxPathDepth bounds how many dotted segments of a flattened attribute become nesting levels;
// the rest of a longer path is kept as one key.
const maxPathDepth = 16

// pathEntry is a flattened attribute being unflattened: rest is the part of its path below the
// current level.
type pathEntry struct {
	rest string
	v    value
}

// pathGroup is the entries of one level that share a first segment.
type pathGroup struct {
	seg   string
	index int // seg as an array index, when every segment of the level is one
	size  int // how many entries share seg
	next  int // where the group's next entry goes in the grouped entries
}

// indexedJSON returns the JSON text of the flattened attributes of fam, unflattened: numeric
// path segments make arrays (in index order, gaps closed), the others objects. For the
// OpenInference families the "message" level under each index is removed, so that
// llm.input_messages.0.message.role reads as [{"role": ...}]. "" when fam has no attribute.
func (a *attrs) indexedJSON(fam family) string {
	if a.families&(1<<fam) == 0 {
		return ""
	}
	var entries []pathEntry
	for _, e := range a.indexed {
		if e.fam != fam {
			continue
		}
		path := e.path
		if fam == famInputMessages || fam == famOutputMessages {
			if idx, rest, ok := strings.Cut(path, "."); ok {
				if r, ok := strings.CutPrefix(rest, "message."); ok {
					path = idx + "." + r
				}
			}
		}
		entries = append(entries, pathEntry{rest: path, v: e.v})
	}
	return string(appendTree(nil, entries, 1))
}

// appendTree appends entries (all with a non-empty rest) as one JSON value: an array when every
// first segment is an index, else an object. depth is the nesting level.
func appendTree(b []byte, entries []pathEntry, depth int) []byte {
	if depth > maxPathDepth {
		// Keep the remaining paths as keys of one object.
		b = append(b, '{')
		var seen keySet
		first := true
		for _, e := range entries {
			if !seen.add(e.rest) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, e.rest)
			b = append(b, ':')
			b = appendValue(b, e.v, depth+1)
		}
		return append(b, '}')
	}
	// Group the entries by first segment, the groups in order of first appearance and the
	// entries of a group in their order (a counting sort: linear, where a comparison sort of
	// the entries cost O(n log n) segment cuts), then an array's groups in index order.
	array := true
	groupOf := make(map[string]int)
	var groups []pathGroup
	ranks := make([]int, len(entries))
	for i := range entries {
		seg := firstSegment(entries[i].rest)
		r, ok := groupOf[seg]
		if !ok {
			r = len(groups)
			groupOf[seg] = r
			n, isIndex := index(seg)
			array = array && isIndex
			groups = append(groups, pathGroup{seg: seg, index: n})
		}
		ranks[i] = r
		groups[r].size++
	}
	order := make([]int, len(groups))
	for r := range order {
		order[r] = r
	}
	if array {
		slices.SortFunc(order, func(x, y int) int { return cmp.Or(cmp.Compare(groups[x].index, groups[y].index), cmp.Compare(x, y)) })
	}
	at := 0
	for _, r := range order {
		groups[r].next = at
		at += groups[r].size
	}
	grouped := make([]pathEntry, len(entries))
	for i, r := range ranks {
		grouped[groups[r].next] = entries[i]
		groups[r].next++
	}

	open, closing := byte('{'), byte('}')
	if array {
		open, closing = '[', ']'
	}
	b = append(b, open)
	for i, r := range order {
		g := groups[r]
		if i > 0 {
			b = append(b, ',')
		}
		if !array {
			b = appendString(b, g.seg)
			b = append(b, ':')
		}
		b = appendGroup(b, grouped[g.next-g.size:g.next], depth)
	}
	return append(b, closing)
}

// appendGroup appends the value of the entries that share a first segment: the value of a leaf
// (the first one) when there is one, else the tree of what lies below.
func appendGroup(b []byte, group []pathEntry, depth int) []byte {
	for _, e := range group {
		if !strings.Contains(e.rest, ".") {
			return appendValue(b, e.v, depth)
		}
	}
	for i := range group {
		_, group[i].rest, _ = strings.Cut(group[i].rest, ".")
	}
	return appendTree(b, group, depth+1)
}

// firstSegment returns the part of path before its first dot.
func firstSegment(path string) string {
	seg, _, _ := strings.Cut(path, ".")
	return seg
}

// index parses an array index: 1 to 9 decimal digits.
func index(seg string) (int, bool) {
	if len(seg) == 0 || len(seg) > 9 {
		return 0, false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return 0, false
		}
	}
	n, _ := strconv.Atoi(seg)
	return n, true
}

// withSystemInstructions returns the input messages with the system instructions in front, as
// a message {"role": "system", "parts": instructions} (GenAI semantic conventions). messages
// and instructions are JSON texts or plain strings; "" when absent. When messages is not a
// JSON array, the instructions are left out (they stay in the attributes).
func withSystemInstructions(messages, instructions string) string {
	if instructions == "" {
		return messages
	}
	var sys []byte
	sys = append(sys, `{"role":"system","parts":`...)
	if isJSONContainer(instructions) {
		sys = append(sys, instructions...)
	} else {
		sys = appendString(sys, instructions)
	}
	sys = append(sys, '}')
	if messages == "" {
		return "[" + string(sys) + "]"
	}
	trimmed := strings.TrimSpace(messages)
	if !strings.HasPrefix(trimmed, "[") || !isJSONContainer(trimmed) {
		return messages
	}
	rest := strings.TrimSpace(trimmed[1:])
	if rest == "]" {
		return "[" + string(sys) + "]"
	}
	return "[" + string(sys) + "," + rest
}

// isJSONContainer reports whether s is a JSON array or object.
func isJSONContainer(s string) bool {
	s = strings.TrimSpace(s)
	return len(s) >= 2 && (s[0] == '[' || s[0] == '{') && json.Valid([]byte(s))
}

// messagesText returns a messages attribute as text: a string as it is, a structured value as
// its JSON text.
func messagesText(v value, ok bool) string {
	if !ok {
		return ""
	}
	return valueText(v)
}

// input returns the span's input data and whether there is any (MAPPING.md, "Input and
// output"); events holds what the span's GenAI events carry.
func (a *attrs) input(ev *eventData) string {
	msgs := messagesText(a.get(fInputMessages))
	sys := messagesText(a.get(fSystemInstructions))
	if msgs == "" && ev.inputMessages != "" {
		msgs, sys = ev.inputMessages, cmp.Or(sys, ev.systemInstructions)
	}
	if msgs != "" || sys != "" {
		return withSystemInstructions(msgs, sys)
	}
	if s := a.indexedJSON(famPrompt); s != "" {
		return s
	}
	if s := a.indexedJSON(famInputMessages); s != "" {
		return s
	}
	if s := messagesText(a.get(fPrompt)); s != "" {
		return s
	}
	if s := messagesText(a.get(fInputValue)); s != "" {
		return s
	}
	return ev.prompt
}

// output returns the span's output data, like input.
func (a *attrs) output(ev *eventData) string {
	if s := messagesText(a.get(fOutputMessages)); s != "" {
		return s
	}
	if ev.outputMessages != "" {
		return ev.outputMessages
	}
	if s := a.indexedJSON(famCompletion); s != "" {
		return s
	}
	if s := a.indexedJSON(famOutputMessages); s != "" {
		return s
	}
	if s := messagesText(a.get(fCompletion)); s != "" {
		return s
	}
	if s := messagesText(a.get(fOutputValue)); s != "" {
		return s
	}
	return ev.completion
}
