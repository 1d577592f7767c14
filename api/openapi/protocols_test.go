package openapi_test

import (
	"bytes"
	"mime"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/internal/webtest"
)

// TestProtocolAnswersMatchDocument: the routes that are not plain JSON (OTLP, the public
// feedback pages) answer with a status and a media type the document lists, and a JSON body
// that validates against its schema.
func TestProtocolAnswersMatchDocument(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	b, doc := document(t)
	c := compiler(t, b)
	versionID := api.EnsurePrompt(t, api.A, "support-bot", "Answer politely.")
	spanID := uuid.NewString()
	api.MustDo(t, "POST", "/spans", api.A.Key, []any{apitest.LLMSpan(spanID, uuid.NewString(), "", "support-bot", versionID, "Hi", "Hello", time.Now().Add(-time.Minute))})
	link := api.MustDo(t, "POST", "/feedback-links", api.A.Key, map[string]any{"prompt_slug": "support-bot", "link_type": "prompt_completion"}).Map(t)
	u, err := url.Parse(link["url"].(string))
	require.NoError(t, err)

	tests := []struct {
		name, method, path, target, key string
		body                            any
		status                          int
		accept                          string
		form                            url.Values
	}{
		{name: "otlp json export", method: "POST", path: "/v1/traces", target: "/v1/traces", key: api.A.Key, body: map[string]any{"resourceSpans": []any{}}, status: 200},
		{name: "otlp metrics", method: "POST", path: "/v1/metrics", target: "/v1/metrics", key: api.A.Key, body: map[string]any{"resourceMetrics": []any{}}, status: 200},
		{name: "otlp without a key", method: "POST", path: "/v1/traces", target: "/v1/traces", body: map[string]any{"resourceSpans": []any{}}, status: 401},
		{name: "feedback page", method: "GET", path: "/f/{token}", target: u.Path, status: 200},
		{name: "unknown feedback page", method: "GET", path: "/f/{token}", target: "/f/plf_unknown", status: 404},
		{name: "mcp stream", method: "GET", path: "/mcp", target: "/mcp", key: api.A.Key, accept: "text/event-stream", status: 405},
		{name: "feedback form", method: "POST", path: "/f/{token}", target: u.Path, form: url.Values{"completion_id": {spanID}, "thumbs": {"up"}, "reason": {"clear"}}, status: 303},
		{name: "models", method: "GET", path: "/v1/models", target: "/v1/models", key: api.A.Key, status: 200},
		{name: "chat without a key", method: "POST", path: "/v1/chat/completions", target: "/v1/chat/completions", body: map[string]any{"model": "openai/gpt-4o-mini", "messages": []any{}}, status: 401},
		{name: "mcp ping", method: "POST", path: "/mcp", target: "/mcp", key: api.A.Key, body: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ping"},
			accept: "application/json, text/event-stream", status: 200},
	}
	// The whole stack: the REST API with the MCP tool server and the gateway.
	whole, err := stack.Handler(api.Env)
	require.NoError(t, err)
	whole = api.Applying(whole) // the aggregates follow its writes, as API.Handler's
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := webtest.NewRequest(t, tt.method, tt.target, tt.key, tt.body)
			if tt.form != nil {
				req = httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			res := webtest.Serve(whole, req)
			require.Equal(t, tt.status, res.Status, "body: %s", res.Body)
			checkMedia(t, c, doc, tt.method, tt.path, res)
		})
	}
}

// checkMedia checks that an answer's status (or default) and media type are documented for its
// route, and validates a JSON body against the schema.
func checkMedia(t *testing.T, c *jsonschema.Compiler, doc map[string]any, method, path string, res apitest.Response) {
	t.Helper()
	op := operation{Method: method, Path: path}
	loc := responseLocation(doc, op, strconv.Itoa(res.Status))
	if _, ok := resolve(doc, loc); !ok {
		loc = responseLocation(doc, op, "default")
	}
	r, ok := resolve(doc, loc)
	require.True(t, ok, "%s %s: status %d is not documented, nor a default", method, path, res.Status)
	ct := res.Header.Get("Content-Type")
	if ct == "" && len(res.Body) == 0 {
		ct = "application/octet-stream"
	}
	media, _, err := mime.ParseMediaType(ct)
	require.NoError(t, err)
	content, _ := r.(map[string]any)["content"].(map[string]any)
	if content == nil {
		return // documented without a body (a redirect, a 405)
	}
	_, listed := content[media]
	require.True(t, listed, "%s %s %d: %s is not a documented media type", method, path, res.Status, media)
	if !strings.HasSuffix(media, "json") {
		return
	}
	sch, err := c.Compile(docURL + loc + pointer("content", media, "schema"))
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.Body))
	require.NoError(t, err)
	assert.NoError(t, sch.Validate(inst), "%s", res.Body)
}
