package openapi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/web"
)

// TestEveryRouteDocumented: every route every function of the stack registers is an operation
// of the document, every operation is a registered route that routes its path, the open routes
// are those without security, and every function's API Gateway route keys reach exactly its
// documented operations.
func TestEveryRouteDocumented(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	_, doc := document(t)
	ops := operations(doc)

	var registered []string
	for _, fn := range stack.Functions {
		h, err := fn.Build(api.Env)
		require.NoError(t, err)
		router, ok := h.(*auth.Router)
		require.True(t, ok, "%s: not an *auth.Router", fn.Name)
		keys := gatewayPatterns(fn.Routes)
		for _, rt := range router.Routes() {
			registered = append(registered, rt.Pattern)
			for _, op := range ops {
				if op.Route != rt.Pattern {
					continue
				}
				open := isOpen(op)
				if by, _ := op.Op["x-plume-authenticated-by-handler"].(bool); by {
					open = true
				}
				assert.Equal(t, rt.Open, open, "%s %s: open to the router but not in the document, or the reverse", op.Method, op.Path)
				reached := false
				for _, k := range keys {
					reached = reached || matches(k, op.Method, samplePath(op.Path))
				}
				assert.True(t, reached, "%s: no route key of %s reaches %s %s", rt.Pattern, fn.Name, op.Method, op.Path)
			}
		}
	}
	undocumented, unregistered := routeDiff(registered, doc)
	assert.Empty(t, undocumented, "routes without documentation: add them to routeDocs")
	assert.Empty(t, unregistered, "documented operations no router serves")
	t.Logf("%d routes, %d operations", len(registered), len(ops))
}

// TestRouteDiff: the check above fails for a route added without documentation and for
// documentation of a route that does not exist, and for a documented path its route does not
// serve.
func TestRouteDiff(t *testing.T) {
	_, doc := document(t)
	var routes []string
	for _, op := range operations(doc) {
		routes = append(routes, op.Route)
	}
	undocumented, unregistered := routeDiff(routes, doc)
	require.Empty(t, undocumented)
	require.Empty(t, unregistered)

	undocumented, unregistered = routeDiff(append(routes, "GET /v1/prompts/{slug}/history"), doc)
	assert.Equal(t, []string{"GET /v1/prompts/{slug}/history"}, undocumented)
	assert.Empty(t, unregistered)

	paths := doc["paths"].(map[string]any)
	paths["/v1/ghosts"] = map[string]any{"get": map[string]any{"x-plume-route": "GET /v1/ghosts"}}
	paths["/v1/prompts/{slug}/shadow"] = map[string]any{"get": map[string]any{"x-plume-route": "GET /v1/prompts/{slug}"}}
	undocumented, unregistered = routeDiff(routes, doc)
	assert.Empty(t, undocumented)
	assert.ElementsMatch(t, []string{"GET /v1/ghosts", "GET /v1/prompts/{slug}/shadow"}, unregistered)
}

// gatewayPatterns are the ServeMux patterns of the requests API Gateway routes to its route
// keys (web.Patterns): ANY is every method, {proxy+} the rest of the path, and a path may end
// with one more slash.
func gatewayPatterns(keys []string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, web.Patterns(k)...)
	}
	return out
}

// isOpen reports whether an operation takes no API key (security: []).
func isOpen(op operation) bool {
	sec, ok := op.Op["security"].([]any)
	return ok && len(sec) == 0
}
