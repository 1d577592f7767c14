package mcpserver_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
)

// TestToolsOfEveryAreaDeployed: a read tool of each area works in MCPFunction as deployed (the
// areas it mounts), not only beside the whole API: a tool whose area is not mounted answers
// the in-process API's 404.
func TestToolsOfEveryAreaDeployed(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	h, err := mcpserver.Function.Build(a.Env)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &toolStack{api: a, url: srv.URL + "/mcp"}
	cs, err := s.connect(t, a.A.Key)
	require.NoError(t, err)
	for _, tool := range []string{"list-prompts", "list-traces", "list-judges", "list-ab-tests", "list-datasets", "list-monitors", "list-webhooks", "list-events"} {
		res := call(t, cs, tool, map[string]any{}, nil)
		assert.False(t, res.IsError, "%s: %s", tool, text(res))
	}
}
