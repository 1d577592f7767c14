package openapi

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/plumehq/plume/api"
)

// inputOf is the schema of an element of an ingestion route (POST /spans, /traces,
// /sessions): the properties of T, the route's api input type, each as leniently as the
// server's decoder reads it (shared/trace/WIRE.md): times as ISO 8601 or Unix epochs, a span's
// kind in any case, input and output as any JSON value. The required properties may not be
// null; any other may, which the server reads as absent.
func inputOf[T any](required ...string) map[string]any {
	return lenientObject(reflect.TypeFor[T](), required)
}

// lenientObject is the schema of struct t read leniently. Without required (a nested object),
// the fields without omitempty or omitzero are required to be non-null when present.
func lenientObject(t reflect.Type, required []string) map[string]any {
	props := map[string]any{}
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		optional := opts != ""
		if required != nil {
			optional = !slices.Contains(required, name)
		}
		props[name] = lenient(name, f.Type, optional)
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = anyOf(required)
	}
	return out
}

// lenient is the schema of a field of an input: by name for the fields the decoder reads its
// own way, else by Go type.
func lenient(name string, t reflect.Type, optional bool) map[string]any {
	switch name {
	case "kind":
		return spanKind
	case "status":
		return status
	case "input_data", "output_data", "variant_value":
		return map[string]any{} // any JSON value: the server stores a non-string as its JSON text
	case "ab_choices":
		return nullable(map[string]any{"type": "array", "maxItems": api.MaxSpanABChoices,
			"items": lenientObject(t.Elem(), []string{"choice_name", "variant_key"})})
	}
	var sc map[string]any
	switch {
	case t == timeType:
		sc = timestamp
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		sc = lenientObject(t.Elem(), nil)
	case t.Kind() == reflect.Pointer:
		return lenient(name, t.Elem(), true)
	case t.Kind() == reflect.String:
		sc = str
	case t.Kind() == reflect.Float64:
		sc = num
	case t.Kind() == reflect.Int:
		sc = map[string]any{"type": "integer"}
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String:
		sc = strMap
	case t.Kind() == reflect.Map:
		sc = anyObject
	default:
		panic(fmt.Sprintf("openapi: no lenient schema of %s %s", name, t)) // a new field type of an input
	}
	if optional {
		return nullable(sc)
	}
	return sc
}
