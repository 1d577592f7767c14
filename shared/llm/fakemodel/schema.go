package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Limits of the generated instance: below fullDepth every declared property is filled in and
// arrays get one item; deeper, only required properties and minItems, so recursive schemas
// end. Past maxDepth, or once maxValues values are made (a schema whose instances are all
// huge), the value is null.
const (
	fullDepth = 4
	maxDepth  = 32
	maxValues = 10_000
)

// Instance returns a JSON value valid against the JSON schema: the schema's const, else the
// first enum value, else by type: objects with their declared properties (only the required
// ones when deeply nested), arrays of one item (or minItems), strings "fake" (padded to
// minLength, cut to maxLength, or a sample of a known format), numbers at their minimum or 0,
// booleans true. It follows local $refs ("#/$defs/x"), takes the first non-null branch of
// anyOf and oneOf, and merges allOf. Patterns and the rarer keywords are not honoured. An
// empty schema gives an empty object. The result depends on the schema alone.
func Instance(schema json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("decode JSON schema: %w", err)
	}
	g := &generator{root: root, left: maxValues}
	return g.value(root, 0), nil
}

type generator struct {
	root any
	left int // values still allowed
}

func (g *generator) value(node any, depth int) any {
	if depth > maxDepth || g.left <= 0 {
		return nil
	}
	g.left--
	s, ok := node.(map[string]any)
	if !ok {
		return "fake" // the schema true (or anything else) accepts any value
	}
	if ref, ok := s["$ref"].(string); ok {
		if target := g.resolve(ref); target != nil {
			return g.value(target, depth+1)
		}
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return g.value(firstNonNull(g, alts), depth+1)
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		return g.value(g.merge(s, all), depth+1)
	}
	switch typeOf(s) {
	case "object":
		props, _ := s["properties"].(map[string]any)
		required := map[string]bool{}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					required[name] = true
				}
			}
		}
		out := map[string]any{}
		for name, sub := range props {
			if depth < fullDepth || required[name] {
				out[name] = g.value(sub, depth+1)
			}
		}
		return out
	case "array":
		n := intOf(s["minItems"])
		if n == 0 && depth < fullDepth {
			n = 1
		}
		if hi, ok := s["maxItems"]; ok {
			n = min(n, intOf(hi))
		}
		prefix, _ := s["prefixItems"].([]any)
		n = min(max(n, len(prefix)), g.left)
		out := make([]any, n)
		for i := range out {
			if i < len(prefix) {
				out[i] = g.value(prefix[i], depth+1)
			} else {
				out[i] = g.value(s["items"], depth+1)
			}
		}
		return out
	case "string":
		return stringValue(s)
	case "integer":
		return int64(numberValue(s, true))
	case "number":
		return numberValue(s, false)
	case "boolean":
		return true
	case "null":
		return nil
	}
	return "fake"
}

// typeOf returns the schema's type, the first non-null one of a type list, or one guessed
// from its keywords.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				if name, ok := x.(string); ok {
					return name
				}
			}
		}
		if len(t) > 0 {
			return "null"
		}
	}
	switch {
	case s["properties"] != nil || s["required"] != nil || s["additionalProperties"] != nil:
		return "object"
	case s["items"] != nil || s["prefixItems"] != nil:
		return "array"
	case s["minimum"] != nil || s["maximum"] != nil || s["exclusiveMinimum"] != nil:
		return "number"
	}
	return "string"
}

// firstNonNull picks the first branch that is not just {"type": "null"}.
func firstNonNull(g *generator, alts []any) any {
	for _, a := range alts {
		s, ok := a.(map[string]any)
		if ref, isRef := s["$ref"].(string); ok && isRef {
			if target, ok := g.resolve(ref).(map[string]any); ok {
				s = target
			}
		}
		if !ok || s["type"] != "null" {
			return a
		}
	}
	return alts[0]
}

// merge folds allOf's branches into one schema: their properties and required lists are
// joined and other keywords taken from the first branch that has them.
func (g *generator) merge(s map[string]any, all []any) map[string]any {
	out := map[string]any{}
	props := map[string]any{}
	var required []any
	parts := append([]any{s}, all...)
	for _, p := range parts {
		m, ok := p.(map[string]any)
		if ref, isRef := m["$ref"].(string); ok && isRef {
			m, _ = g.resolve(ref).(map[string]any)
		}
		for k, v := range m {
			switch k {
			case "allOf", "$ref":
			case "properties":
				if pm, ok := v.(map[string]any); ok {
					for name, sub := range pm {
						if _, seen := props[name]; !seen {
							props[name] = sub
						}
					}
				}
			case "required":
				if r, ok := v.([]any); ok {
					required = append(required, r...)
				}
			default:
				if _, seen := out[k]; !seen {
					out[k] = v
				}
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// resolve follows a local JSON pointer reference ("#", "#/$defs/name"); nil if it cannot.
func (g *generator) resolve(ref string) any {
	if ref == "#" {
		return g.root
	}
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	node := g.root
	for _, tok := range strings.Split(path, "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		if node, ok = m[tok]; !ok {
			return nil
		}
	}
	return node
}

// formatSamples are valid values of the common string formats.
var formatSamples = map[string]string{
	"date-time": "2000-01-01T00:00:00Z",
	"date":      "2000-01-01",
	"time":      "00:00:00Z",
	"duration":  "PT1S",
	"email":     "fake@example.com",
	"hostname":  "example.com",
	"ipv4":      "192.0.2.1",
	"ipv6":      "2001:db8::1",
	"uri":       "https://example.com/fake",
	"url":       "https://example.com/fake",
	"uuid":      "00000000-0000-4000-8000-000000000000",
}

func stringValue(s map[string]any) string {
	if f, ok := s["format"].(string); ok {
		if v, ok := formatSamples[f]; ok {
			return v
		}
	}
	v := "fake"
	// minLength past maxValues is not honoured, so one schema cannot make a huge answer.
	if lo := intOf(s["minLength"]); lo > len(v) {
		v += strings.Repeat("e", lo-len(v))
	}
	if hi, ok := s["maxLength"]; ok && intOf(hi) < len(v) {
		v = v[:intOf(hi)]
	}
	return v
}

// numberValue is the least number the bounds allow, 0 when that is allowed, or the maximum
// when every allowed number is negative.
func numberValue(s map[string]any, integer bool) float64 {
	v := 0.0
	lo, hasLo := numOf(s["minimum"])
	hi, hasHi := numOf(s["maximum"])
	exLo, hasExLo := numOf(s["exclusiveMinimum"])
	exHi, hasExHi := numOf(s["exclusiveMaximum"])
	if b, ok := s["exclusiveMinimum"].(bool); ok && b && hasLo { // draft 4
		exLo, hasExLo, hasLo = lo, true, false
	}
	if b, ok := s["exclusiveMaximum"].(bool); ok && b && hasHi {
		exHi, hasExHi, hasHi = hi, true, false
	}
	step := 1.0
	if m, ok := numOf(s["multipleOf"]); ok && m > 0 {
		step = m
	}
	switch {
	case hasLo:
		v = lo
	case hasExLo:
		v = exLo + step
		if !integer && hasHi && v > hi {
			v = (exLo + hi) / 2
		}
	case hasHi && hi < 0:
		v = hi
	case hasExHi && exHi <= 0:
		v = exHi - step
	}
	if integer {
		v = math.Ceil(v)
	}
	if m, ok := numOf(s["multipleOf"]); ok && m > 0 {
		v = math.Ceil(v/m) * m
	}
	return v
}

func numOf(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

// intOf reads a count such as minItems, clamped to [0, maxValues].
func intOf(v any) int {
	f, _ := numOf(v)
	return int(min(max(f, 0), maxValues))
}
