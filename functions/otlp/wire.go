package otlp

import (
	"encoding/binary"
	"encoding/json"
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
			partial = appendBytesField(partial, 2, message)
		}
		if rejected != 0 {
			partial = appendVarintField(partial, 1, uint64(rejected))
		}
		return appendBytesField(nil, 1, string(partial))
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
			b = appendVarintField(b, 1, uint64(int64(code)))
		}
		if message != "" {
			b = appendBytesField(b, 2, message)
		}
		return b
	}
	body, _ := json.Marshal(struct {
		Code    int32  `json:"code,omitempty"`
		Message string `json:"message,omitempty"`
	}{code, message}) // cannot fail
	return body
}

// Protobuf wire types (https://protobuf.dev/programming-guides/encoding/).
const (
	wireVarint = 0
	wireBytes  = 2
)

// appendVarintField appends field num (below 16: a one-byte tag) as a varint.
func appendVarintField(b []byte, num int, v uint64) []byte {
	return binary.AppendUvarint(append(b, byte(num<<3|wireVarint)), v)
}

// appendBytesField appends field num (below 16: a one-byte tag) as length-delimited bytes.
func appendBytesField(b []byte, num int, v string) []byte {
	b = binary.AppendUvarint(append(b, byte(num<<3|wireBytes)), uint64(len(v)))
	return append(b, v...)
}
