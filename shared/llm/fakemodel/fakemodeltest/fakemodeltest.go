// Package fakemodeltest starts a fakemodel server for a test.
package fakemodeltest

import (
	"net/http/httptest"
	"testing"

	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// Server is a running fake model server.
type Server struct {
	*fakemodel.Server
	// URL is the server's base URL, such as "http://127.0.0.1:38017": Anthropic clients take
	// it as their base URL, OpenAI clients take URL+"/v1".
	URL string
}

// OpenAIBaseURL is the base URL for OpenAI clients.
func (s *Server) OpenAIBaseURL() string { return s.URL + "/v1" }

// Start serves a fakemodel.Server configured by opts on a loopback port until the test ends.
func Start(tb testing.TB, opts ...fakemodel.Option) *Server {
	tb.Helper()
	srv := fakemodel.New(opts...)
	ts := httptest.NewServer(srv)
	tb.Cleanup(ts.Close)
	return &Server{Server: srv, URL: ts.URL}
}
