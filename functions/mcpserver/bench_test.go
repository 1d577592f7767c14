package mcpserver

import (
	"net/http"
	"testing"
)

// BenchmarkNewServer is the tool server's share of MCPFunction's cold start: every tool's
// schemas inferred and resolved, every tool and resource registered.
func BenchmarkNewServer(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		newServer(http.NotFoundHandler(), Config{})
	}
}
