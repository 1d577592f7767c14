package otlp

import (
	"encoding/json"

	"google.golang.org/protobuf/encoding/protowire"
)

// The two messages the handler answers with, encoded by hand: the Collector's ptraceotlp and
// the protobuf runtime that google.rpc.Status needs link gRPC and reflection-driven encoders
// into OTLPFunction's bootstrap (23.9 MB with them, 12.1 MB without, and their package inits
// at every cold start) for two messages of two fields each. wire_test.go holds both encodings
// equal to what those libraries write and read.

// exportResponse is an ExportTraceServiceResponse in enc, byte for byte what ptraceotlp's
// ExportResponse marshals: the partial_success field is always present (empty when nothing was
// rejected), rejected_spans and error_message only when set.
// https://github.com/open-telemetry/opentelemetry-proto/blob/main/opentelemetry/proto/collector/trace/v1/trace_service.proto
func exportResponse(enc string, rejected int64, message string) []byte {
	if enc == contentProtobuf {
		// pdata writes the fields last to first; a reader takes either order.
		var partial []byte
		if message != "" {
			partial = protowire.AppendTag(partial, 2, protowire.BytesType)
			partial = protowire.AppendString(partial, message)
		}
		if rejected != 0 {
			partial = protowire.AppendTag(partial, 1, protowire.VarintType)
			partial = protowire.AppendVarint(partial, uint64(rejected))
		}
		b := protowire.AppendTag(nil, 1, protowire.BytesType)
		return protowire.AppendBytes(b, partial)
	}
	type partialSuccess struct {
		// An int64 is a JSON string in OTLP/JSON, as pdata writes it.
		RejectedSpans int64  `json:"rejectedSpans,omitempty,string"`
		ErrorMessage  string `json:"errorMessage,omitempty"`
	}
	body, _ := json.Marshal(struct {
		PartialSuccess partialSuccess `json:"partialSuccess"`
	}{partialSuccess{RejectedSpans: rejected, ErrorMessage: message}}) // cannot fail
	return body
}

// statusBody is a google.rpc.Status with code and message in enc, as the protobuf runtime
// encodes it (zero fields left out; no details).
// https://github.com/googleapis/googleapis/blob/master/google/rpc/status.proto
func statusBody(enc string, code int32, message string) []byte {
	if enc == contentProtobuf {
		b := []byte{}
		if code != 0 {
			b = protowire.AppendTag(b, 1, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(int64(code)))
		}
		if message != "" {
			b = protowire.AppendTag(b, 2, protowire.BytesType)
			b = protowire.AppendString(b, message)
		}
		return b
	}
	body, _ := json.Marshal(struct {
		Code    int32  `json:"code,omitempty"`
		Message string `json:"message,omitempty"`
	}{code, message}) // cannot fail
	return body
}
