// Package mcpserver is Plume's tool server (spec §4.9): the Model Context Protocol over
// Streamable HTTP at /mcp, for coding agents, built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). It is stateless and answers JSON, so that it runs
// behind API Gateway and a Lambda Function URL as MCPFunction, and in plume-local.
//
// Every tool is a call of the REST API, made in-process: a tool builds a client.Client (the Go
// SDK's) whose transport serves the request with the API's own handlers in this process, under
// the caller's key. A tool therefore validates, answers and scopes exactly as the REST route
// does (the same errors, the same tenancy), with no second implementation of any operation;
// the tool layer adds the typed inputs and outputs, the confirm gate of the write tools and the
// agent-facing messages.
//
// Authentication: "Authorization: Bearer <project API key>", checked by the API's
// Authenticator before the MCP layer sees the request (401 in the API's error shape
// otherwise); every tool is scoped to the key's project.
package mcpserver

// The tools' schemas (schemas_gen.go), from their Go types.
//go:generate go test -run TestSchemasGenerated -update .
