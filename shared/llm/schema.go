package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// schemaNode is the part of a JSON Schema that answers are checked against. Keywords outside
// it are left to the provider's structured output.
type schemaNode struct {
	types      []string // "object", "array", "string", "number", "integer", "boolean", "null"
	properties map[string]*schemaNode
	required   []string
	closed     bool // "additionalProperties": false
	items      *schemaNode
	enum       []any // decoded with UseNumber
	minimum    *float64
	maximum    *float64
}

// rawSchema is a JSON Schema as decoded.
type rawSchema struct {
	Type                 json.RawMessage      `json:"type"`
	Properties           map[string]rawSchema `json:"properties"`
	Required             []string             `json:"required"`
	AdditionalProperties json.RawMessage      `json:"additionalProperties"`
	Items                *rawSchema           `json:"items"`
	Enum                 []json.RawMessage    `json:"enum"`
	Minimum              *float64             `json:"minimum"`
	Maximum              *float64             `json:"maximum"`
}

// schemaName is what a schema's name may be, at most 64 bytes (compileSchema checks the
// length: a bounded repeat would compile to 64 copies of the class at every start).
var schemaName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// compileSchema checks s and returns its name and validator.
func compileSchema(s *Schema) (string, *schemaNode, error) {
	name := s.Name
	if name == "" {
		name = "answer"
	}
	if len(name) > 64 || !schemaName.MatchString(name) {
		return "", nil, fmt.Errorf("%w: schema name %q: want letters, digits, _ or -, at most 64", ErrInvalidRequest, name)
	}
	var raw rawSchema
	if err := json.Unmarshal(s.JSON, &raw); err != nil {
		return "", nil, fmt.Errorf("%w: schema %q is not a JSON Schema object: %v", ErrInvalidRequest, name, err)
	}
	node, err := compileNode(raw, "")
	if err != nil {
		return "", nil, fmt.Errorf("%w: schema %q: %v", ErrInvalidRequest, name, err)
	}
	if !slices.Equal(node.types, []string{"object"}) {
		return "", nil, fmt.Errorf("%w: schema %q: the top level must be {\"type\": \"object\"}", ErrInvalidRequest, name)
	}
	return name, node, nil
}

func compileNode(r rawSchema, path string) (*schemaNode, error) {
	n := &schemaNode{required: r.Required, minimum: r.Minimum, maximum: r.Maximum}
	if len(r.Type) > 0 {
		var one string
		if err := json.Unmarshal(r.Type, &one); err == nil {
			n.types = []string{one}
		} else if err := json.Unmarshal(r.Type, &n.types); err != nil {
			return nil, fmt.Errorf("%s: type is neither a string nor a list of strings", where(path))
		}
		for _, t := range n.types {
			switch t {
			case "object", "array", "string", "number", "integer", "boolean", "null":
			default:
				return nil, fmt.Errorf("%s: unknown type %q", where(path), t)
			}
		}
	}
	if string(bytes.TrimSpace(r.AdditionalProperties)) == "false" {
		n.closed = true
	}
	if len(r.Properties) > 0 {
		n.properties = make(map[string]*schemaNode, len(r.Properties))
		for k, v := range r.Properties {
			child, err := compileNode(v, path+"."+k)
			if err != nil {
				return nil, err
			}
			n.properties[k] = child
		}
	}
	if r.Items != nil {
		child, err := compileNode(*r.Items, path+"[]")
		if err != nil {
			return nil, err
		}
		n.items = child
	}
	for _, e := range r.Enum {
		v, err := decodeJSON(e)
		if err != nil {
			return nil, fmt.Errorf("%s: enum: %v", where(path), err)
		}
		n.enum = append(n.enum, v)
	}
	return n, nil
}

// decodeJSON decodes one JSON value, numbers as json.Number, and rejects trailing data.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

// validate parses an answer and checks it against the schema. The error says what to fix, in
// words meant for the model as much as for a log.
func (n *schemaNode) validate(answer []byte) error {
	v, err := decodeJSON(bytes.TrimSpace(answer))
	if err != nil {
		return fmt.Errorf("the answer is not valid JSON: %v", err)
	}
	return n.check(v, "")
}

func (n *schemaNode) check(v any, path string) error {
	if len(n.types) > 0 && !slices.ContainsFunc(n.types, func(t string) bool { return hasType(v, t) }) {
		return fmt.Errorf("%s: want %s, got %s", where(path), strings.Join(n.types, " or "), typeOf(v))
	}
	if len(n.enum) > 0 && !slices.ContainsFunc(n.enum, func(e any) bool { return equalJSON(e, v) }) {
		return fmt.Errorf("%s: %s is not one of the allowed values %s", where(path), show(v), show(n.enum))
	}
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		if n.minimum != nil && f < *n.minimum {
			return fmt.Errorf("%s: %s is below the minimum %v", where(path), v, *n.minimum)
		}
		if n.maximum != nil && f > *n.maximum {
			return fmt.Errorf("%s: %s is above the maximum %v", where(path), v, *n.maximum)
		}
	case map[string]any:
		for _, k := range n.required {
			if _, ok := v[k]; !ok {
				return fmt.Errorf("%s: the required property %q is missing", where(path), k)
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child, ok := n.properties[k]
			if !ok {
				if n.closed {
					return fmt.Errorf("%s: the property %q is not allowed", where(path), k)
				}
				continue
			}
			if err := child.check(v[k], path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		if n.items != nil {
			for i, item := range v {
				if err := n.items.check(item, path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func hasType(v any, t string) bool {
	switch v := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	case json.Number:
		if t == "number" {
			return true
		}
		if t == "integer" {
			f, err := v.Float64()
			return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
		}
	}
	return false
}

func typeOf(v any) string {
	for _, t := range []string{"null", "boolean", "string", "array", "object", "integer", "number"} {
		if hasType(v, t) {
			return t
		}
	}
	return "unknown"
}

func equalJSON(a, b any) bool {
	if x, ok := a.(json.Number); ok {
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, errx := x.Float64()
		fy, erry := y.Float64()
		return errx == nil && erry == nil && fx == fy
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func where(path string) string {
	if path == "" {
		return "the answer"
	}
	return strings.TrimPrefix(path, ".")
}
