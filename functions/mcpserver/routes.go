package mcpserver

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	plumeauth "github.com/plumehq/plume/shared/auth"
)

// Routes are MCPFunction's API Gateway route keys. The server is stateless: GET (a standalone
// event stream) and DELETE (ending a session) answer 405, as the transport's specification
// allows.
var Routes = []string{"POST /mcp", "GET /mcp", "DELETE /mcp"}

// Config is what the tool server tells about its deployment (config://server-context).
type Config struct {
	// BaseURL is the REST API's base URL as clients reach it ("" when not configured).
	BaseURL string
	// ModelsConfigured tells whether a model provider is configured: judges run and
	// optimizations can start.
	ModelsConfigured bool
	// OptimizationsEnabled tells whether optimization runs can be queued.
	OptimizationsEnabled bool
}

// NewHandler returns the tool server: authn checks every request's key before the MCP layer;
// api serves the REST calls the tools make in-process. Its routes are those of an
// *auth.Router, as every area's, so that the tests that walk every route of the stack walk
// these too; no route names a project: each tool is scoped to the key's.
func NewHandler(api http.Handler, authn *plumeauth.Authenticator, cfg Config) http.Handler {
	// The server is made on the first MCP request, not at start: inferring and resolving every
	// tool's schemas takes 40-60 ms, which a cold start would otherwise spend before any
	// request, the health check and a refused key included (docs/performance.md).
	server := sync.OnceValue(func() *mcp.Server { return newServer(api, cfg) })
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server() },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	// The SDK's bearer middleware carries the verified key to the tools (CallToolRequest's
	// TokenInfo); the API's Authenticator, run first, answers 401 in the API's error shape.
	verified := auth.RequireBearerToken(func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := plumeauth.FromContext(ctx)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.User.ID, Expiration: time.Now().Add(time.Hour),
			Extra: map[string]any{extraKey: token, extraProject: p.ProjectID}}, nil
	}, nil)
	rt := plumeauth.NewRouter(authn)
	for _, pattern := range Routes {
		rt.Handle(pattern, verified(mcpHandler))
	}
	return rt
}
