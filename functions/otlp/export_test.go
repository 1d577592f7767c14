package otlp

import (
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	otlpmap "github.com/plumehq/plume/shared/otlp"
	"github.com/plumehq/plume/shared/trace"
)

// TracesWithDecoder is the POST /v1/traces handler with its decoder replaced.
func TracesWithDecoder(svc *trace.Service, authn *auth.Authenticator, decode func([]byte, string) (*otlpmap.Export, error)) http.HandlerFunc {
	s := &server{svc: svc, authn: authn, decode: decode}
	return s.traces
}
