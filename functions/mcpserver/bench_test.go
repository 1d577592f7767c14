package mcpserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/internal/cputime"
)

// BenchmarkNewServer is the tool server's share of MCPFunction's cold start: every tool and
// resource registered.
func BenchmarkNewServer(b *testing.B) {
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		newServer(http.NotFoundHandler(), Config{})
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkFirstRequest is what the first requests of a cold MCPFunction pay for the tool
// server: the server made, a session initialized, then tools/list, or the first call of a tool
// (its arguments validated; no key reaches it, so it stops there).
func BenchmarkFirstRequest(b *testing.B) {
	for _, bc := range []struct {
		name string
		req  func(context.Context, *mcp.ClientSession) error
	}{
		{"tools-list", func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.ListTools(ctx, nil)
			return err
		}},
		{"tools-call", func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-trace", Arguments: map[string]any{"trace_id": 1}})
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			cpu := cputime.Process()
			for b.Loop() {
				st, ct := mcp.NewInMemoryTransports()
				ss, err := newServer(http.NotFoundHandler(), Config{}).Connect(ctx, st, nil)
				if err != nil {
					b.Fatal(err)
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := bc.req(ctx, cs); err != nil {
					b.Fatal(err)
				}
				_ = cs.Close()
				_ = ss.Wait()
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
