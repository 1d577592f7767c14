package otlp

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/google/uuid"

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

// addString adds the tags of a string value (see add).
func (t *tagSet) addString(s string) {
	switch {
	case s == "":
	case s[0] == '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &obj) != nil {
			t.put(s, listTagValue)
			return
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			raw := obj[k]
			switch raw[0] {
			case 'n':
				continue
			case '"':
				var str string
				_ = json.Unmarshal(raw, &str)
				t.put(k, str)
			default:
				var buf bytes.Buffer
				_ = json.Compact(&buf, raw)
				t.put(k, buf.String())
			}
		}
	case s[0] == '[':
		var names []json.RawMessage
		if json.Unmarshal([]byte(s), &names) != nil {
			t.put(s, listTagValue)
			return
		}
		for _, raw := range names {
			var name string
			if json.Unmarshal(raw, &name) == nil && name != "" {
				t.put(name, listTagValue)
			}
		}
	default:
		t.put(s, listTagValue)
	}
}

// jsonObjectMap returns the JSON object in s; false when s is not one, or when
// compactJSONObject would not write it as an object (so that the link read from it is the one
// POST /spans reads back from the attributes).
func jsonObjectMap(s string) (map[string]any, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || jsonDepth(s) > maxValueDepth {
		return nil, false
	}
	var obj map[string]any
	if json.Unmarshal([]byte(s), &obj) != nil {
		return nil, false
	}
	return obj, true
}

// jsonScalar returns a JSON value decoded by encoding/json as an attribute value of the same
// type (numbers are doubles), as pcommon.Value.FromRaw makes it; of an array or an object only
// the type is kept.
func jsonScalar(raw any) value {
	switch r := raw.(type) {
	case string:
		return value{typ: valueStr, str: r}
	case float64:
		return value{typ: valueDouble, num: math.Float64bits(r)}
	case bool:
		if r {
			return value{typ: valueBool, num: 1}
		}
		return value{typ: valueBool}
	case []any:
		return value{typ: valueSlice}
	case map[string]any:
		return value{typ: valueMap}
	}
	return value{}
}

// compactJSONObject returns the compact form of the JSON object s, invalid UTF-8 replaced by
// U+FFFD (as encoding/json decodes it); false when s is not a JSON object or is nested more
// than maxValueDepth deep (then it is kept as a string).
func compactJSONObject(s string) ([]byte, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || jsonDepth(s) > maxValueDepth {
		return nil, false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(validUTF8(s))) != nil {
		return nil, false
	}
	return buf.Bytes(), true
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
		obj     list           // a map value
		jsonObj map[string]any // a JSON object in a string value
		hasObj  bool
	)
	if v, ok := a.get(fZeroeval); ok {
		switch v.typ {
		case valueMap:
			obj, hasObj = v.list(), true
		case valueStr:
			jsonObj, hasObj = jsonObjectMap(v.str)
		}
	}
	lookup := func(key string, flatField field) (value, bool) {
		switch {
		case jsonObj != nil:
			raw, ok := jsonObj[key]
			return jsonScalar(raw), ok && raw != nil
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
