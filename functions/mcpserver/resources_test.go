package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
)

func TestServerContext(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)

	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "config://server-context"})
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	c := res.Contents[0]
	assert.Equal(t, "application/json", c.MIMEType)
	assert.NotContains(t, c.Text, s.api.A.Key, "the key is never in the server context")
	_, secret, _ := strings.Cut(s.api.A.Key, "_")
	assert.NotContains(t, c.Text, secret)

	var sc mcpserver.ServerContext
	require.NoError(t, json.Unmarshal([]byte(c.Text), &sc))
	assert.Equal(t, s.api.A.ProjectID, sc.ProjectID, "the key's project")
	assert.Equal(t, "bearer project API key", sc.Auth.Mode)
	require.NotNil(t, sc.BaseURL)
	assert.Equal(t, "https://plume.example.com", *sc.BaseURL)
	assert.Equal(t, mcpserver.Version, sc.Server.Version)
	assert.Equal(t, mcp.SupportedProtocolVersions(), sc.ProtocolVersions)
	assert.Contains(t, sc.ProtocolVersions, "2025-06-18")
	assert.False(t, sc.Features.ModelsConfigured)

	other, err := s.connect(t, s.api.B.Key)
	require.NoError(t, err)
	res, err = other.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "config://server-context"})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(res.Contents[0].Text), &sc))
	assert.Equal(t, s.api.B.ProjectID, sc.ProjectID, "each key sees its own project")
}

func TestCapabilities(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)

	resources, err := cs.ListResources(t.Context(), nil)
	require.NoError(t, err)
	var uris []string
	for _, r := range resources.Resources {
		uris = append(uris, r.URI)
	}
	assert.ElementsMatch(t, []string{"config://server-context", "docs://capabilities"}, uris)

	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://capabilities"})
	require.NoError(t, err)
	require.Len(t, res.Contents, 2)
	assert.Equal(t, "application/json", res.Contents[0].MIMEType)
	assert.Equal(t, "text/markdown", res.Contents[1].MIMEType)
	var caps mcpserver.Capabilities
	require.NoError(t, json.Unmarshal([]byte(res.Contents[0].Text), &caps))

	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	docs := map[string]mcpserver.ToolDoc{}
	for _, d := range caps.Tools {
		docs[d.Name] = d
	}
	require.Len(t, caps.Tools, len(tools.Tools), "every tool, once")
	for _, tl := range tools.Tools {
		d, ok := docs[tl.Name]
		require.True(t, ok, "docs://capabilities lists %s", tl.Name)
		assert.Equal(t, tl.Description, d.Description)
		assert.Equal(t, tl.Annotations.ReadOnlyHint, d.ReadOnly, tl.Name)
		assert.Equal(t, !tl.Annotations.ReadOnlyHint && (tl.Annotations.DestructiveHint == nil || *tl.Annotations.DestructiveHint), d.Destructive, tl.Name)
		assert.True(t, strings.HasPrefix(d.Output, "an object: "), "%s: %s", tl.Name, d.Output)
		assert.Contains(t, res.Contents[1].Text, "### "+tl.Name+"\n")
	}
	for _, name := range readTools {
		assert.True(t, docs[name].ReadOnly, name)
		assert.False(t, docs[name].RequiresConfirm, name)
	}
	assert.Contains(t, docs["get-trace"].Output, "spans (array of object)")
	var resURIs []string
	for _, r := range caps.Resources {
		resURIs = append(resURIs, r.URI)
	}
	assert.ElementsMatch(t, uris, resURIs, "every resource")
}
