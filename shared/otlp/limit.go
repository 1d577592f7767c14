package otlp

import (
	"errors"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// MaxSpansPerExport is the most spans one export may carry; Decode refuses a larger one with
// errs.CodeTooLarge (HTTP 413) before it decodes the spans past the limit.
//
// Why a count at all: the body cap (MaxExportBytes) lets through about 68,000 minimal spans in
// protobuf (21,000 in OTLP/JSON), and ingestion costs per span and per trace (about four DynamoDB
// requests per trace), so 20,000 spans took 32 s, past the functions' 29 s timeout. Why this
// count: it is POST /spans's (trace.MaxSpansPerBatch), because both go through the same
// ingestion: 1,000 spans of 1,000 distinct traces, the costliest shape, take about 4 s
// against DynamoDB Local, with room to spare under the timeout; 8,192 of them took 38 s. It
// is above what SDKs send by default (the BatchSpanProcessor's max export batch, 512), and
// below the Collector's batch processor default (send_batch_size 8192, and no
// send_batch_max_size, so a batch may be larger still), which must be configured down
// (send_batch_max_size: 1000) to export to Plume.
//
// Why 413 and nothing stored, rather than storing the first MaxSpansPerExport and reporting
// the rest as rejected in a partial success: the OTLP/HTTP spec lets a client retry only 429,
// 502, 503 and 504 (https://opentelemetry.io/docs/specs/otlp/#failures-1), and forbids
// retrying a partial success (https://opentelemetry.io/docs/specs/otlp/#partial-success-1),
// so either answer loses the spans that are not stored. A partial success would store an
// arbitrary part of each trace and read as a success; a 413, which the Collector's otlphttp
// exporter reports as a permanent error and does not retry, stores nothing, costs nothing, and
// puts the limit in the exporter's log, where the batch size is fixed.
const MaxSpansPerExport = trace.MaxSpansPerBatch

// MaxExportBytes is the most bytes an export body may hold, as sent and once gunzipped: POST
// /spans's limit (trace.MaxBatchBytes), so that one bound holds the work of a request on both
// paths. The OTLP handler reads at most this much of a body, gunzipping as it reads, and
// refuses a larger one with BodyTooLarge (HTTP 413) before decoding any of it: a small gzip
// body that inflates past it (a "bomb") costs no more than the largest export accepted.
//
// Why not more: the work of an export follows its bytes as well as its spans. Every byte is
// decoded, mapped, copied into the spans and written to S3 in the batch object, in a 512 MB
// function with a 29 s timeout, and some shapes cost far more per byte than others (one span
// of 400,000 small attributes, a tag object of 250,000 members in a string). A 32 MB cap on
// the gunzipped body (the one before) let a 298 KB gzip body inflate to 30 MB, six times what
// POST /spans reads, which took 18.8 s (issue 25). At this limit the costliest shapes take a
// third of a second of CPU to decode and map (BenchmarkDecodeMapAtLimit).
//
// Why it is enough: an SDK's BatchSpanProcessor exports at most 512 spans, and 512 spans of
// 4 KiB of attributes each (16 string attributes of 256 bytes, key included) weigh 2.12 MiB in
// protobuf (4,350 bytes a span) and 2.42 MiB in OTLP/JSON (4,960 bytes a span): under half the
// limit. 1,000 such spans (MaxSpansPerExport, the Collector's send_batch_max_size that Plume
// asks for) weigh 4.15 and 4.73 MiB, still under it.
//
// As sent, an export must also fit Lambda's 6 MB event, in which a protobuf or gzip body is
// base64-encoded: one of more than lambdahttp.MaxBinaryBody (4.49 MiB) bytes as sent is refused
// by API Gateway or the Function URL with their own 413 before the function runs. The
// Collector's otlphttp exporter gzips by default, which takes an export at this limit far
// under it; an SDK exporter without compression sends 512 spans, about 2 MiB. Spans as instrumented services send them
// (an HTTP server span, GenAI calls with their messages, database queries: benchTraces) weigh
// 0.5 KB each in protobuf and 0.9 KB in JSON: 1,000 of them take a tenth and a fifth of the
// limit. TestDefaultBatchFits holds these figures.
const MaxExportBytes = trace.MaxBatchBytes

// BodyTooLarge is the error for an export body of more than MaxExportBytes bytes, as sent or
// gunzipped: errs.CodeTooLarge, HTTP 413, which an exporter does not retry
// (https://opentelemetry.io/docs/specs/otlp/#failures-1).
func BodyTooLarge() error {
	return errs.Errorf(errs.CodeTooLarge,
		"the export is larger than %d bytes (gunzipped); Plume takes at most %d bytes per request, as POST /spans does: export smaller batches (BatchSpanProcessor max_export_batch_size, the Collector's send_batch_max_size)",
		MaxExportBytes, MaxExportBytes)
}

// errTooManySpans stops a decoder at the first span past MaxSpansPerExport.
var errTooManySpans = errors.New("too many spans")

// tooManySpans is the error Decode returns for an export of more than MaxSpansPerExport spans.
func tooManySpans() error {
	return errs.Errorf(errs.CodeTooLarge,
		"the export has more than %d spans; Plume takes at most %d spans per request: export smaller batches (BatchSpanProcessor max_export_batch_size, the Collector's send_batch_max_size)",
		MaxSpansPerExport, MaxSpansPerExport)
}
