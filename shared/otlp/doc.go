// Package otlp turns OpenTelemetry trace exports (OTLP/HTTP, protobuf or JSON) into Plume spans.
//
// Decode reads an export body into an Export, of at most MaxSpansPerExport spans (counted as it
// reads, so a larger export is refused early); the body itself is at most MaxExportBytes,
// POST /spans's limit, which the OTLP handler applies as it reads (gunzipped). Each encoding is
// read by a decoder of Plume's own, straight into the Export: the binary protobuf encoding
// from its wire form (protobuf.go), OTLP/JSON token by token (jsondecode.go, jsonread.go) by
// the OTLP rules (hex trace and span ids, int64 as strings or numbers, enums as numbers or
// names), which protojson gets wrong (COMPAT.md, "OTLP"). Both accept exactly the bodies that
// the OpenTelemetry Collector's pdata accepts and read them as it does (pdata is the tests'
// oracle, never linked into the function), build no pdata objects, and leave attributes in
// protobuf wire form until Map reads them. Map converts the decoded spans into trace.Span
// values that satisfy trace.Span.Check, the invariants of trace.DecodeBatch's spans, so OTLP
// spans go through the same ingestion pipeline (trace.Service.Ingest) as POST /spans.
// TraceID and SpanID convert OTLP ids to UUIDs exactly as the zeroeval SDKs do, so that SDK
// spans and OpenTelemetry spans of one trace nest.
//
// The mapping, attribute by attribute, is documented in MAPPING.md next to this file.
//
// OTLP/HTTP: https://opentelemetry.io/docs/specs/otlp/#otlphttp
package otlp
