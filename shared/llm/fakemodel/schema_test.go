package fakemodel_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// validate checks value against the subset of JSON Schema that Instance claims to honour. It
// is the test's own check, written apart from the generator.
func validate(t testing.TB, schema, value json.RawMessage) error {
	t.Helper()
	var root, v any
	require.NoError(t, json.Unmarshal(schema, &root))
	require.NoError(t, json.Unmarshal(value, &v))
	return check(root, root, v, "$")
}

func check(root, node, v any, at string) error {
	s, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		target := root
		for _, tok := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(ref, "#"), "/"), "/") {
			if tok != "" {
				target = target.(map[string]any)[tok]
			}
		}
		if err := check(root, target, v, at); err != nil {
			return err
		}
	}
	if c, ok := s["const"]; ok && fmt.Sprint(c) != fmt.Sprint(v) {
		return fmt.Errorf("%s: %v is not the const %v", at, v, c)
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return fmt.Sprint(x) == fmt.Sprint(v) }) {
		return fmt.Errorf("%s: %v is not in enum %v", at, v, e)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && !slices.ContainsFunc(alts, func(a any) bool { return check(root, a, v, at) == nil }) {
			return fmt.Errorf("%s: matches no branch of %s", at, k)
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, a := range all {
			if err := check(root, a, v, at); err != nil {
				return err
			}
		}
	}
	if err := checkType(s["type"], v, at); err != nil {
		return err
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asList(s["required"]) {
			if _, ok := x[r.(string)]; !ok {
				return fmt.Errorf("%s: required property %q is missing", at, r)
			}
		}
		for k, pv := range x {
			sub, declared := props[k]
			if !declared && s["additionalProperties"] == false {
				return fmt.Errorf("%s: property %q is not allowed", at, k)
			}
			if err := check(root, sub, pv, at+"."+k); err != nil {
				return err
			}
		}
	case []any:
		if n, ok := s["minItems"].(float64); ok && float64(len(x)) < n {
			return fmt.Errorf("%s: %d items, fewer than %v", at, len(x), n)
		}
		if n, ok := s["maxItems"].(float64); ok && float64(len(x)) > n {
			return fmt.Errorf("%s: %d items, more than %v", at, len(x), n)
		}
		for i, item := range x {
			if err := check(root, s["items"], item, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case string:
		if n, ok := s["minLength"].(float64); ok && float64(len(x)) < n {
			return fmt.Errorf("%s: %q is shorter than %v", at, x, n)
		}
		if n, ok := s["maxLength"].(float64); ok && float64(len(x)) > n {
			return fmt.Errorf("%s: %q is longer than %v", at, x, n)
		}
	case float64:
		if n, ok := s["minimum"].(float64); ok && x < n {
			return fmt.Errorf("%s: %v < minimum %v", at, x, n)
		}
		if n, ok := s["maximum"].(float64); ok && x > n {
			return fmt.Errorf("%s: %v > maximum %v", at, x, n)
		}
		if n, ok := s["exclusiveMinimum"].(float64); ok && x <= n {
			return fmt.Errorf("%s: %v <= exclusiveMinimum %v", at, x, n)
		}
		if n, ok := s["exclusiveMaximum"].(float64); ok && x >= n {
			return fmt.Errorf("%s: %v >= exclusiveMaximum %v", at, x, n)
		}
		if n, ok := s["multipleOf"].(float64); ok && math.Mod(x, n) != 0 {
			return fmt.Errorf("%s: %v is not a multiple of %v", at, x, n)
		}
	}
	return nil
}

func checkType(t, v any, at string) error {
	types := asList(t)
	if t == nil {
		return nil
	}
	for _, typ := range types {
		switch x := v.(type) {
		case map[string]any:
			if typ == "object" {
				return nil
			}
		case []any:
			if typ == "array" {
				return nil
			}
		case string:
			if typ == "string" {
				return nil
			}
		case bool:
			if typ == "boolean" {
				return nil
			}
		case nil:
			if typ == "null" {
				return nil
			}
		case float64:
			if typ == "number" || (typ == "integer" && x == math.Trunc(x)) {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: %v is not of type %v", at, v, t)
}

func asList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case nil:
		return nil
	}
	return []any{v}
}

// verdictSchema is a judge's verdict, as a strict OpenAI schema.
const verdictSchema = `{
  "type": "object",
  "properties": {
    "pass": {"type": "boolean"},
    "score": {"type": "integer", "minimum": 0, "maximum": 10},
    "label": {"type": "string", "enum": ["good", "bad"]},
    "reason": {"type": "string"},
    "criteria": {"type": "array", "items": {"$ref": "#/$defs/criterion"}, "minItems": 1}
  },
  "required": ["pass", "score", "label", "reason", "criteria"],
  "additionalProperties": false,
  "$defs": {
    "criterion": {
      "type": "object",
      "properties": {"key": {"type": "string"}, "met": {"type": ["boolean", "null"]}},
      "required": ["key", "met"],
      "additionalProperties": false
    }
  }
}`

func TestInstance(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string // "" to check validity only
	}{
		{name: "verdict", schema: verdictSchema,
			want: `{"criteria":[{"key":"fake","met":true}],"label":"good","pass":true,"reason":"fake","score":0}`},
		{name: "empty schema", schema: ``, want: `{}`},
		{name: "bounded numbers", schema: `{"type":"object","properties":{"a":{"type":"number","minimum":2.5},"b":{"type":"integer","exclusiveMinimum":3},"c":{"type":"integer","maximum":-4},"d":{"type":"number","minimum":1,"multipleOf":0.5}},"required":["a","b","c","d"]}`,
			want: `{"a":2.5,"b":4,"c":-4,"d":1}`},
		{name: "strings", schema: `{"type":"object","properties":{"long":{"type":"string","minLength":7},"short":{"type":"string","maxLength":2},"when":{"type":"string","format":"date-time"},"k":{"const":"x"}}}`,
			want: `{"k":"x","long":"fakeeee","short":"fa","when":"2000-01-01T00:00:00Z"}`},
		{name: "nullable anyOf", schema: `{"anyOf":[{"type":"null"},{"type":"object","properties":{"x":{"type":"boolean"}},"required":["x"]}]}`,
			want: `{"x":true}`},
		{name: "allOf merges", schema: `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer","minimum":1}},"required":["b"]}]}`,
			want: `{"a":"fake","b":1}`},
		{name: "recursive tree ends", schema: `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name","children"]}}}`},
		{name: "min items", schema: `{"type":"array","items":{"type":"integer","enum":[7,8]},"minItems":3}`, want: `[7,7,7]`},
		{name: "top-level string", schema: `{"type":"string"}`, want: `"fake"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := fakemodel.Instance(json.RawMessage(tt.schema))
			require.NoError(t, err)
			got, err := json.Marshal(v)
			require.NoError(t, err)
			if tt.want != "" {
				assert.JSONEq(t, tt.want, string(got))
			}
			if tt.schema != "" {
				assert.NoError(t, validate(t, json.RawMessage(tt.schema), got))
			}
		})
	}
}

func TestInstanceRejectsBrokenSchema(t *testing.T) {
	_, err := fakemodel.Instance(json.RawMessage(`{"type":`))
	assert.Error(t, err)
}

// FuzzInstance feeds schemas as a judge definition could carry them: Instance must not panic
// or loop, and must give a value that encodes as JSON.
func FuzzInstance(f *testing.F) {
	for _, s := range []string{verdictSchema, `{}`, `{"$ref":"#"}`, `{"allOf":[{"$ref":"#/allOf"}]}`,
		`{"type":["null"]}`, `{"type":"array","minItems":3,"maxItems":1}`, `{"$ref":"#/a~1b/0"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		if len(schema) > 4096 {
			return
		}
		v, err := fakemodel.Instance(json.RawMessage(schema))
		if err != nil {
			return
		}
		_, err = json.Marshal(v)
		assert.NoError(t, err)
	})
}
