// Command lambda is the MCP tool server's Lambda function (MCPFunction in template.yaml),
// behind the HTTP API's /mcp routes and its own Function URL.
package main

import (
	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(mcpserver.Function) }
