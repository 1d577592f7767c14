package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
)

// direction is which way a body travels; a type's schema depends on it.
//
// An answer is exactly what encoding/json makes of the api type: every field without omitempty
// or omitzero is required, and no other property appears (additionalProperties: false), so
// that a field the server adds or drops is a change of the document. A request is read
// leniently: unknown fields are ignored (SDKs send extras) and which fields are required is
// the route's to say (routeDoc.Required), not the type's, since one type serves a create and a
// PATCH.
type direction int

const (
	answer direction = iota
	request
)

// schemas builds JSON Schema 2020-12 from the api types by reflection, one component per named
// struct type and direction.
type schemas struct {
	components map[string]any
	names      map[key]string
	owners     map[string]key // component name -> the type it is, to catch two types with one name
	err        error
}

type key struct {
	t reflect.Type
	d direction
}

func newSchemas() *schemas {
	return &schemas{components: map[string]any{}, names: map[key]string{}, owners: map[string]key{}}
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	wholeType     = reflect.TypeFor[api.WholeNumber]()
	itemType      = reflect.TypeFor[api.FeedbackItem]()
	orderedType   = reflect.TypeFor[api.OrderedValues]()
	errorCodeType = reflect.TypeFor[api.ErrorCode]()
	apiPkg        = reflect.TypeFor[api.ErrorBody]().PkgPath()
)

// of returns the schema of t travelling in direction d: a $ref for a named struct, inline
// otherwise.
func (s *schemas) of(t reflect.Type, d direction) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == rawType:
		return map[string]any{} // any JSON value
	case t == orderedType:
		// api.OrderedValues: an object of strings, read in order.
		return map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	case t == wholeType:
		// api.WholeNumber.UnmarshalJSON: an integer, an integral float or a string holding one.
		return map[string]any{"type": []any{"integer", "number", "string"}, "description": "a whole number; 3, 3.0 and \"3\" are accepted"}
	case t == errorCodeType:
		enum := make([]any, len(api.ErrorCodes))
		for i, c := range api.ErrorCodes {
			enum[i] = string(c)
		}
		return map[string]any{"type": "string", "enum": enum}
	case t == itemType:
		// api.FeedbackItem.MarshalJSON: the item that is set, told apart by kind.
		return s.ref(t, d, func() map[string]any {
			return map[string]any{
				"oneOf": []any{
					s.of(reflect.TypeFor[api.HumanFeedbackItem](), d),
					s.of(reflect.TypeFor[api.JudgeEvaluationItem](), d),
				},
			}
		})
	case t.PkgPath() == apiPkg && strings.HasPrefix(t.Name(), "Nullable["):
		// api.Nullable[T]: absent, null or a T.
		f, _ := t.FieldByName("Value")
		return s.of(f.Type, d)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(s.of(t.Elem(), d))
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": []any{"string", "null"}, "contentEncoding": "base64"}
		}
		// A nil slice is null to encoding/json, and null is a nil slice to it.
		return map[string]any{"type": []any{"array", "null"}, "items": s.of(t.Elem(), d)}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			s.fail(fmt.Errorf("map key of %s is not a string", t))
		}
		return map[string]any{"type": []any{"object", "null"}, "additionalProperties": s.of(t.Elem(), d)}
	case reflect.Struct:
		if t.Name() == "" {
			return s.object(t, d)
		}
		return s.ref(t, d, func() map[string]any { return s.object(t, d) })
	}
	s.fail(fmt.Errorf("no schema for %s (%s)", t, t.Kind()))
	return map[string]any{}
}

// ref returns a $ref to the component of t in direction d, building it with build the first
// time.
func (s *schemas) ref(t reflect.Type, d direction, build func() map[string]any) map[string]any {
	k := key{t, d}
	name, ok := s.names[k]
	if !ok {
		name = componentName(t, d)
		if other, taken := s.owners[name]; taken && other != k {
			s.fail(fmt.Errorf("component %s names both %s and %s", name, other.t, t))
		}
		s.names[k], s.owners[name] = name, k
		s.components[name] = map[string]any{} // a placeholder while recursive types are built
		s.components[name] = build()
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

// componentName is t's name, with "Input" added for a request body's part that is not itself
// a request type (api.Criterion inside api.JudgeRequest is CriterionInput): the same Go type
// is read leniently and answered strictly.
func componentName(t reflect.Type, d direction) string {
	name := t.Name()
	if d == request && !strings.HasSuffix(name, "Request") {
		name += "Input"
	}
	return name
}

// object is the schema of a struct's JSON object, with encoding/json's rules: json tags name
// the properties, "-" hides a field, embedded structs without a tag lend their fields.
func (s *schemas) object(t reflect.Type, d direction) map[string]any {
	props := map[string]any{}
	var required []any
	s.fields(t, d, props, &required)
	o := map[string]any{"type": "object", "properties": props}
	if d == answer {
		o["additionalProperties"] = false
		if len(required) > 0 {
			o["required"] = required
		}
	}
	return o
}

func (s *schemas) fields(t reflect.Type, d direction, props map[string]any, required *[]any) {
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			s.fields(f.Type, d, props, required)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = s.of(f.Type, d)
		optional := false
		for o := range strings.SplitSeq(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		if !optional {
			*required = append(*required, name)
		}
	}
}

func (s *schemas) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// nullable adds null to the values a schema takes, with a type array where it can (JSON
// Schema 2020-12 has no "nullable").
func nullable(sc map[string]any) map[string]any {
	if len(sc) == 0 {
		return sc // any value, null included
	}
	switch typ := sc["type"].(type) {
	case string:
		out := clone(sc)
		out["type"] = []any{typ, "null"}
		if enum, ok := sc["enum"].([]any); ok {
			out["enum"] = append(append([]any(nil), enum...), nil)
		}
		return out
	case []any:
		for _, v := range typ {
			if v == "null" {
				return sc
			}
		}
		out := clone(sc)
		out["type"] = append(append([]any(nil), typ...), "null")
		return out
	}
	return map[string]any{"anyOf": []any{sc, map[string]any{"type": "null"}}}
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
