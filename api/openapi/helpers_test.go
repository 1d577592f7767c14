package openapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api/openapi"
)

// docURL is where the tests' compilers keep the document.
const docURL = "https://plume.test/openapi.json"

// document is the generated document, decoded.
func document(t *testing.T) ([]byte, map[string]any) {
	t.Helper()
	b, err := openapi.Document()
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	return b, doc
}

// compiler is a JSON Schema 2020-12 compiler that asserts formats (date-time, uuid), with the
// document as a resource, so that a schema is compiled by its JSON pointer in the document.
func compiler(t *testing.T, doc []byte) *jsonschema.Compiler {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	require.NoError(t, c.AddResource(docURL, v))
	return c
}

// pointer escapes a JSON pointer token.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, tok := range tokens {
		b.WriteString("/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}

// operation is one operation of the document.
type operation struct {
	Method, Path, Route string
	Op                  map[string]any
}

// operations lists the document's operations.
func operations(doc map[string]any) []operation {
	var out []operation
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			o, ok := op.(map[string]any)
			if !ok {
				continue
			}
			route, _ := o["x-plume-route"].(string)
			out = append(out, operation{Method: strings.ToUpper(method), Path: path, Route: route, Op: o})
		}
	}
	slices.SortFunc(out, func(a, b operation) int { return strings.Compare(a.Method+" "+a.Path, b.Method+" "+b.Path) })
	return out
}

var paramRE = regexp.MustCompile(`\{[^}]+\}`)

// samplePath fills an OpenAPI path's parameters with a value every wildcard takes.
func samplePath(path string) string { return paramRE.ReplaceAllString(path, "x1") }

// matches reports whether a ServeMux pattern routes method and path to itself.
func matches(pattern, method, path string) bool {
	mux := http.NewServeMux()
	mux.HandleFunc(pattern, func(http.ResponseWriter, *http.Request) {})
	_, got := mux.Handler(httptest.NewRequest(method, path, nil))
	return got == pattern
}

// routeDiff compares the routes the routers register (ServeMux patterns) with the document:
// undocumented are routes no operation names, unregistered are operations ("METHOD /path")
// whose route is not registered or does not route their path.
func routeDiff(registered []string, doc map[string]any) (undocumented, unregistered []string) {
	documented := map[string]bool{}
	for _, op := range operations(doc) {
		if !slices.Contains(registered, op.Route) || !matches(op.Route, op.Method, samplePath(op.Path)) {
			unregistered = append(unregistered, op.Method+" "+op.Path)
			continue
		}
		documented[op.Route] = true
	}
	for _, r := range registered {
		if !documented[r] {
			undocumented = append(undocumented, r)
		}
	}
	return undocumented, unregistered
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return b
}

// responseLocation is the JSON pointer ("#/...") of an operation's response object of a
// status, following a $ref to the shared responses.
func responseLocation(doc map[string]any, op operation, status string) string {
	loc := "#" + pointer("paths", op.Path, strings.ToLower(op.Method), "responses", status)
	r, ok := resolve(doc, loc)
	if !ok {
		return loc
	}
	if ref, ok := r.(map[string]any)["$ref"].(string); ok {
		return ref
	}
	return loc
}
