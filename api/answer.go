package api

// MaxAnswerBytes bounds the body of every answer (shared/web: Page, List, Fit, Written): a
// list answer holds the longest prefix of its items whose JSON encoding, as sent, is at most
// this many bytes (never fewer than one item), and says where the rest starts in
// NextOffsetHeader and a Link header of rel "next"; an answer to a write that echoes what it
// wrote (POST /spans, /traces, /sessions, judge evaluations) holds what fits and says how many
// items it left out in OmittedHeader.
//
// Lambda refuses a response payload over 6 MB (6,291,556 bytes). Behind API Gateway that
// payload is the proxy response envelope, a JSON object whose "body" is the answer as a JSON
// string, or base64-encoded (a gzipped answer is; shared/lambdahttp sends any answer that way
// when it is shorter). As a JSON string an answer grows by every byte JSON escapes ('"' and
// '\' double, a control character or U+2028 takes six bytes); base64 grows it by 4/3 whatever
// its content. An answer of 3,000,000 bytes is thus at most 4,000,000 in the envelope, or its
// gzipped form's 4/3, which leaves room for the status, the headers (bounded by the request's:
// API Gateway takes 10 KB of request line and headers, and Link and X-Plume-Tag-Filters echo
// parts of it) and the envelope's keys; an item answered alone past the budget fits up to
// some 4.7 MB. A span's fields add up to about 2.8 MB of text (input and output 1 MB each,
// attributes 256 KB, three tag sets of 64 tags, error message, stack and file 64 KB each),
// which JSON escaping can grow past that; such a span is answered with its largest texts cut
// (api.Span.Cut).
const MaxAnswerBytes = 3_000_000

// OmittedHeader, on an answer to a write that echoes what it wrote, is how many of the items
// written the answer left out to stay within MaxAnswerBytes: the last ones, in request order.
// They were written all the same; the lists read them. Absent when the answer holds them all.
const OmittedHeader = "X-Plume-Omitted"

// Headers of the tracing lists (GET /spans, /traces, /sessions) and of a judge's evaluations
// that say what an answer is.
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
