// Package api is Plume's HTTP contract: the body of every request and every answer of every
// route, the error body, and the small value types they share. It is what the service
// promises on the wire, in one place: the handlers convert between domain types and these; the
// Go client, the CLI, the MCP server and the dashboard speak through them and import nothing
// of the server.
//
// The service specification (spec/000_ff33066663345105.txt in the design repository) and the
// wire facts of the zeroeval SDKs (COMPAT.md) decide every name here; the doc comment of each
// type cites the section. Field names, nullability and omitempty are part of the contract:
// SDKs read them. Unknown request fields are ignored by the server (SDKs send extras).
//
// The package uses only the standard library, so that any client can import it cheaply.
package api
