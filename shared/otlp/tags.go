package otlp

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/jsonscan"
	"github.com/plumehq/plume/shared/trace"
)

// listTagValue is the value of a tag given as a bare name (a list of tags, OpenInference
// tag.tags): Plume's tags are key-value.
const listTagValue = "true"

// tagSet builds a tag set within trace.DecodeBatch's limits. Entries that do not fit (a key of
// 0 or more than MaxTagKeyLen bytes, a value longer than MaxTagValueLen, more than MaxTagKeys
// keys) are dropped and counted, never failing the span.
type tagSet struct {
	tags    trace.Tags
	dropped int
}

// put sets the tag k to v, or drops and counts it when it does not fit.
func (t *tagSet) put(k, v string) {
	k, v = validUTF8(k), validUTF8(v)
	if _, exists := t.tags.Get(k); len(k) == 0 || len(k) > trace.MaxTagKeyLen || len(v) > trace.MaxTagValueLen ||
		!exists && len(t.tags) >= trace.MaxTagKeys {
		t.dropped++
		return
	}
	t.tags.Set(k, v)
}

// add adds the tags v holds: a map (its values as text: strings as they are, other values as
// JSON text, empty values skipped), a JSON object in a string (read the same way, as
// POST /spans reads tags), or a list of names (an array, or a JSON array in a string), each
// name becoming a tag of value "true". Any other non-empty string is one name.
func (t *tagSet) add(v value) {
	switch v.typ {
	case valueMap:
		for k, e := range v.list().all() {
			if e.typ != valueEmpty {
				t.put(k, valueText(e))
			}
		}
	case valueSlice:
		for _, e := range v.list().all() {
			if name := scalarText(e); name != "" {
				t.put(name, listTagValue)
			}
		}
	case valueStr:
		t.addString(strings.TrimSpace(v.str))
	}
}

// addString adds the tags of a string value (see add). The JSON is read in place
// (jsonscan), in time linear in s: a tag string may be most of a 5 MB export, of which 64
// tags are kept.
func (t *tagSet) addString(s string) {
	switch {
	case s == "":
	case s[0] == '{' && validJSON(s):
		t.addObject([]byte(s))
	case s[0] == '[' && validJSON(s):
		t.addNames([]byte(s))
	default: // not JSON, or not valid: one name
		t.put(s, listTagValue)
	}
}

// validJSON reports whether s is one JSON value, whitespace around it allowed: what
// encoding/json.Unmarshal accepts.
func validJSON(s string) bool {
	r := jsonscan.NewReader([]byte(s))
	return r.SkipValue() == nil && r.End() == nil
}

// addObject adds the tags of a valid JSON object as encoding/json would read it into a map (of
// duplicate keys the last wins; invalid UTF-8 in keys becomes U+FFFD), each member put in key
// order: members of null value are skipped, strings are the tag's value, other values their
// compact JSON text. A key that is already a tag is set wherever it comes in that order, so
// the order decides only which new keys fill the room left: the least ones (kept in fresh, at
// most room of them, without sorting all the keys).
func (t *tagSet) addObject(obj []byte) {
	type member struct {
		key   string
		value []byte
	}
	var members []member
	index := make(map[string]int)
	for it := jsonscan.Members(obj); it.Next(); {
		key := string(jsonscan.AppendValidUTF8(nil, it.Key))
		if i, ok := index[key]; ok {
			members[i].value = it.Value
			continue
		}
		index[key] = len(members)
		members = append(members, member{key, it.Value})
	}
	room := trace.MaxTagKeys - len(t.tags)
	var fresh trace.Tags // the least new keys that fit, in order
	for _, m := range members {
		if m.value[0] == 'n' {
			continue
		}
		k, v := m.key, jsonValueText(m.value)
		if _, exists := t.tags.Get(k); exists || !tagFits(k, v) {
			t.put(k, v) // set, or dropped and counted
			continue
		}
		i, _ := slices.BinarySearchFunc(fresh, k, func(tg trace.Tag, k string) int { return strings.Compare(tg.Key, k) })
		if i >= room {
			t.dropped++
			continue
		}
		if len(fresh) == room {
			fresh = fresh[:room-1]
			t.dropped++
		}
		fresh = slices.Insert(fresh, i, trace.Tag{Key: k, Value: v})
	}
	for _, tg := range fresh {
		t.tags.Set(tg.Key, tg.Value)
	}
}

// addNames adds a tag of value "true" for each non-empty string of a valid JSON array, in
// order; its other elements are skipped.
func (t *tagSet) addNames(list []byte) {
	r := jsonscan.NewReader(list)
	r.SkipSpace()
	if r.Enter() != nil {
		return
	}
	for first := true; ; first = false {
		more, err := r.Next(']', first)
		if err != nil || !more {
			return
		}
		start := r.Pos()
		if r.SkipValue() != nil {
			return
		}
		if raw := list[start:r.Pos()]; raw[0] == '"' {
			if name := jsonscan.Unescape(raw[1 : len(raw)-1]); name != "" {
				t.put(name, listTagValue)
			}
		}
	}
}

// tagFits reports whether a tag of key k and value v is within Plume's limits.
func tagFits(k, v string) bool {
	return len(k) > 0 && len(k) <= trace.MaxTagKeyLen && len(v) <= trace.MaxTagValueLen
}

// jsonValueText returns a valid JSON value as a tag or link reads it: a string as its value
// (invalid UTF-8 as U+FFFD, as encoding/json decodes it), anything else as its compact JSON
// text.
func jsonValueText(raw []byte) string {
	if raw[0] == '"' {
		return jsonscan.Unescape(raw[1 : len(raw)-1])
	}
	return string(jsonscan.AppendCompact(nil, raw))
}

// linkKeys are the members of a zeroeval object that the prompt link reads.
var linkKeys = [...]string{"task", "prompt_slug", "prompt_version", "prompt_version_id", "content_hash"}

// jsonLinkMembers returns the members of the JSON object in s that the prompt link reads (of
// duplicate keys the last), as attribute values: strings, numbers as doubles, booleans; an
// array or an object only as its type; null members left out. False when s is not a JSON
// object, or when compactJSONObject would not write it as an object (so that the link read
// from it is the one POST /spans reads back from the attributes). The object is read in place
// (jsonscan), in time linear in s, whatever its size.
func jsonLinkMembers(s string) (map[string]value, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || jsonDepth(s) > maxValueDepth || !validJSON(s) {
		return nil, false
	}
	members := make(map[string]value, len(linkKeys))
	for it := jsonscan.Members([]byte(s)); it.Next(); {
		if !slices.Contains(linkKeys[:], string(it.Key)) {
			continue
		}
		key := string(it.Key)
		switch raw := it.Value; raw[0] {
		case 'n':
			delete(members, key)
		case '"':
			members[key] = value{typ: valueStr, str: jsonValueText(raw)}
		case 't', 'f':
			members[key] = value{typ: valueBool, num: uint64(btoi(raw[0] == 't'))}
		case '[':
			members[key] = value{typ: valueSlice}
		case '{':
			members[key] = value{typ: valueMap}
		default:
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil { // out of a double's range: not a number the link reads
				delete(members, key)
				continue
			}
			members[key] = value{typ: valueDouble, num: math.Float64bits(f)}
		}
	}
	return members, true
}

// btoi returns 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compactJSONObject returns the compact form of the JSON object s, invalid UTF-8 replaced by
// U+FFFD (as encoding/json decodes it); false when s is not a JSON object or is nested more
// than maxValueDepth deep (then it is kept as a string).
func compactJSONObject(s string) ([]byte, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || jsonDepth(s) > maxValueDepth || !validJSON(s) {
		return nil, false
	}
	return jsonscan.AppendCompact(make([]byte, 0, len(s)), []byte(s)), true
}

// jsonDepth returns the deepest nesting of arrays and objects in the JSON text s.
func jsonDepth(s string) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// link reads the prompt linkage (COMPAT.md, "Hidden linkage metadata") as trace.DecodeBatch
// reads attributes.zeroeval: from the zeroeval attribute when it is an object (a map, or a JSON
// object in a string), else from the flattened zeroeval.<key> attributes; task fills the task
// when neither has one. Only string values count for the text fields; prompt_version is an
// integer (or a string holding one) from 1 to 2^31-1; a prompt_version_id that is a UUID is
// normalised; content_hash is lowercased. flat reports that the link came from flattened
// attributes (then Map writes it as attributes.zeroeval).
func (a *attrs) link() (l trace.PromptLink, flat bool) {
	if !a.has(fZeroeval) && !a.has(fZeroevalTask) && !a.has(fZeroevalPromptSlug) && !a.has(fZeroevalPromptVersion) &&
		!a.has(fZeroevalPromptVersionID) && !a.has(fZeroevalContentHash) && !a.has(fTask) {
		return trace.PromptLink{}, false
	}
	var (
		obj     list             // a map value
		jsonObj map[string]value // the members of a JSON object in a string value
		hasObj  bool
	)
	if v, ok := a.get(fZeroeval); ok {
		switch v.typ {
		case valueMap:
			obj, hasObj = v.list(), true
		case valueStr:
			jsonObj, hasObj = jsonLinkMembers(v.str)
		}
	}
	lookup := func(key string, flatField field) (value, bool) {
		switch {
		case jsonObj != nil:
			v, ok := jsonObj[key]
			return v, ok
		case hasObj:
			v, ok := obj.get(key)
			return v, ok && v.typ != valueEmpty
		}
		return a.get(flatField)
	}
	str := func(v value, ok bool) string {
		if !ok || v.typ != valueStr {
			return ""
		}
		return validUTF8(v.str)
	}
	l.Task = str(lookup("task", fZeroevalTask))
	l.PromptSlug = str(lookup("prompt_slug", fZeroevalPromptSlug))
	if v, ok := lookup("prompt_version", fZeroevalPromptVersion); ok {
		if f, ok := valueFloat(v); ok && f == math.Trunc(f) && f > 0 && f <= math.MaxInt32 {
			l.PromptVersion = int(f)
		}
	}
	l.PromptVersionID = str(lookup("prompt_version_id", fZeroevalPromptVersionID))
	if id, err := uuid.Parse(l.PromptVersionID); err == nil {
		l.PromptVersionID = id.String()
	}
	l.ContentHash = strings.ToLower(str(lookup("content_hash", fZeroevalContentHash)))
	flat = !hasObj && l != (trace.PromptLink{})
	if l.Task == "" {
		l.Task = str(a.get(fTask))
	}
	return l, flat
}
