// Package trace is Plume's tracing domain: spans, traces and sessions (spec §2.6-2.8, §4.3-4.5).
//
// Ingestion takes the span batches real SDKs send (COMPAT.md: float epochs and ISO strings,
// children before parents, re-sent batches, extra keys), validates each span on its own so one
// bad span never drops a batch, computes LLM cost, writes the batch once to S3 as NDJSON and one
// small index item per span to DynamoDB, and keeps trace and session aggregates exact.
//
// The wire rules of POST /spans (DecodeBatch) are in WIRE.md next to this file; Span.Check
// states what every span ingested satisfies, whichever way it came in (POST /spans or
// shared/otlp). The JSON text is read by shared/jsonscan, attachment URLs are fetched through
// shared/safefetch, and objects.go is the layout of the bucket's span objects.
package trace
