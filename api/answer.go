package api

// MaxAnswerBytes bounds the body of a list answer that pages by bytes as well as by count
// (GET /spans, /traces, /sessions): the answer holds the longest prefix of the page whose JSON
// encoding, as sent, is at most this many bytes, and says where the rest starts in
// NextOffsetHeader and a Link header of rel "next".
//
// Lambda refuses a response payload over 6 MB (6,291,456 bytes). Behind API Gateway that
// payload is the proxy response envelope, a JSON object whose "body" is the answer as a JSON
// string, so every byte of the answer that JSON escapes grows in it. The answer is JSON text,
// valid UTF-8 with its control characters already escaped, so at worst a byte doubles: '"'
// and '\' become two bytes, U+2028 and U+2029 (three bytes) become six; the Lambda runtime
// does not escape '<', '>' or '&' (aws-lambda-go's default, SetEscapeHTML(false)). An answer
// of 3,000,000 bytes is thus at most 6,000,000 in the envelope, which leaves 291,456 bytes
// for the status, the headers and the envelope's own keys; the headers are bounded by the
// request's (API Gateway takes 10 KB of request line and headers, and Link and
// X-Plume-Tag-Filters echo parts of it). A span of text that needs no escaping fits whole
// (its fields' limits add up to about 2.8 MB: input and output 1 MB each, attributes 256 KB,
// three tag sets of 64 tags, error message, stack and file 64 KB each); a page always holds
// its first item, so a span past the budget is answered alone.
const MaxAnswerBytes = 3_000_000

// Headers of the tracing lists (GET /spans, /traces, /sessions) that say what an answer is.
const (
	// ScannedHeader is how many items the query examined.
	ScannedHeader = "X-Plume-Scanned"
	// ScanTruncatedHeader is "true" when the query stopped at its scan bound (50,000 spans,
	// 10,000 traces or sessions, 30 days without created_after): the answer covers the newest
	// part of the window only, and no offset reaches the rest; a narrower window does.
	ScanTruncatedHeader = "X-Plume-Scan-Truncated"
	// TagFiltersHeader names the query parameters read as tag filters, query-escaped and
	// comma-separated, so that a misspelt parameter is seen as the filter it became.
	TagFiltersHeader = "X-Plume-Tag-Filters"
)

// NextOffsetHeader, on a list answer cut at MaxAnswerBytes, is the offset of the first item
// it left out: the request's offset plus the items answered. It is absent when the answer
// holds the whole page.
const NextOffsetHeader = "X-Plume-Next-Offset"

// NextCursorHeader, on a list answer, is the cursor that continues the list after its last
// item (ParamCursor, with the request's other parameters): present whenever more items may
// follow, whether the page was full, cut at MaxAnswerBytes, or ended early by the server's
// bound on the work of one request (ScanTruncatedHeader). A list has ended when it is absent.
const NextCursorHeader = "X-Plume-Next-Cursor"
