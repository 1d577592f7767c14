// Package otlp is the OpenTelemetry ingestion HTTP area (spec §4.6): OTLP/HTTP trace exports in
// protobuf or JSON, optionally gzip-compressed, from any OpenTelemetry SDK or the Collector's
// otlp_http exporter. Exported spans go through the same ingestion pipeline as POST /spans.
// It is served by OTLPFunction, through a Lambda Function URL (for exporters) and the HTTP API.
//
// Errors follow the OTLP/HTTP specification rather than Plume's JSON error shape: the body is
// a google.rpc.Status in the request's encoding, 429 and 503 carry Retry-After
// (https://opentelemetry.io/docs/specs/otlp/#otlphttp-response).
package otlp

import (
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/trace"
)

// Routes are the API Gateway route keys of OTLPFunction.
var Routes = []string{
	"POST /v1/traces",
	"POST /v1/metrics",
	"POST /v1/logs",
}

// NewHandler returns the OTLP area over the tracing service.
func NewHandler(svc *trace.Service, authn *auth.Authenticator) http.Handler {
	s := &server{svc: svc, authn: authn}
	// The routes are open to the router: the handlers authenticate by themselves, to answer in
	// OTLP's error format (a google.rpc.Status) rather than Plume's JSON one.
	// Every role may export, ingest keys included: they are what exporters are given.
	r := auth.NewRouter(nil)
	r.HandleOpen("POST /v1/traces", http.HandlerFunc(s.traces))
	// Metrics and logs are accepted and discarded, so that a Collector pipeline exporting every
	// signal to Plume does not fail; Plume stores traces only.
	r.HandleOpen("POST /v1/metrics", http.HandlerFunc(s.discard))
	r.HandleOpen("POST /v1/logs", http.HandlerFunc(s.discard))
	return r
}
