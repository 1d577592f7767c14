package openapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api/openapi"
)

// TestDocumentIsOpenAPI31: the document validates against the OpenAPI 3.1 schema
// (testdata/oas-3.1-schema.json, from OAI/OpenAPI-Specification), every $ref resolves, every
// schema compiles as JSON Schema 2020-12, every operation has an id (unique) and responses.
func TestDocumentIsOpenAPI31(t *testing.T) {
	b, doc := document(t)
	assert.Equal(t, openapi.Version, doc["openapi"])

	c := jsonschema.NewCompiler()
	oas, err := jsonschema.UnmarshalJSON(bytes.NewReader(readFile(t, "testdata/oas-3.1-schema.json")))
	require.NoError(t, err)
	const oasURL = "https://spec.openapis.org/oas/3.1/schema/WORK-IN-PROGRESS"
	require.NoError(t, c.AddResource(oasURL, oas))
	meta, err := c.Compile(oasURL)
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	assert.NoError(t, meta.Validate(inst))

	var refs []string
	collectRefs(doc, &refs)
	require.NotEmpty(t, refs)
	for _, ref := range refs {
		require.True(t, strings.HasPrefix(ref, "#/"), "a local reference: %s", ref)
		_, ok := resolve(doc, ref)
		assert.True(t, ok, "unresolved $ref %s", ref)
	}

	sc := compiler(t, b)
	for name := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		_, err := sc.Compile(docURL + "#" + pointer("components", "schemas", name))
		assert.NoError(t, err, "schema %s", name)
	}

	ids := map[string]string{}
	for _, op := range operations(doc) {
		id, _ := op.Op["operationId"].(string)
		assert.NotEmpty(t, id, "%s %s: operationId", op.Method, op.Path)
		if other, dup := ids[id]; dup {
			t.Errorf("operationId %s of %s %s and %s", id, op.Method, op.Path, other)
		}
		ids[id] = op.Method + " " + op.Path
		assert.NotEmpty(t, op.Op["summary"], "%s %s: summary", op.Method, op.Path)
		responses, _ := op.Op["responses"].(map[string]any)
		assert.NotEmpty(t, responses, "%s %s: responses", op.Method, op.Path)
		assert.NotEmpty(t, op.Route, "%s %s: x-plume-route", op.Method, op.Path)
		for status := range responses {
			loc := responseLocation(doc, op, status)
			r, _ := resolve(doc, loc)
			content, _ := r.(map[string]any)["content"].(map[string]any)
			for media, m := range content {
				if _, ok := m.(map[string]any)["schema"]; ok {
					_, err := sc.Compile(docURL + loc + pointer("content", media, "schema"))
					assert.NoError(t, err, "%s %s %s %s", op.Method, op.Path, status, media)
				}
			}
		}
	}
}

// collectRefs appends every $ref of v.
func collectRefs(v any, refs *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "$ref" {
				*refs = append(*refs, s)
				continue
			}
			collectRefs(e, refs)
		}
	case []any:
		for _, e := range v {
			collectRefs(e, refs)
		}
	}
}

// resolve follows a local JSON pointer reference.
func resolve(doc map[string]any, ref string) (any, bool) {
	var cur any = doc
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// TestHandler: GET /openapi.json serves the document, cacheable, with a working ETag.
func TestHandler(t *testing.T) {
	want, err := openapi.Document()
	require.NoError(t, err)
	h := openapi.Handler()

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Header().Get("Cache-Control"), "max-age=")
	assert.JSONEq(t, string(want), rec.Body.String())
	etag := rec.Header().Get("ETag")
	require.NotEmpty(t, etag)

	req := httptest.NewRequest(http.MethodGet, "/openapi.json", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusNotModified, rec.Code)
	assert.Empty(t, rec.Body.String())

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/elsewhere", nil))
	assert.Equal(t, http.StatusNotFound, rec.Code)
	var body map[string]map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	assert.Equal(t, "not_found", body["error"]["code"])
}
