package dashboard

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// The dashboard compresses what it answers itself: API Gateway HTTP APIs and Lambda Function
// URLs pass a response through as the function wrote it, and the first page of a 10,000-span
// trace is some 190 KB of HTML (about 12 KB gzipped). A gzipped body is not valid UTF-8 (it
// starts 1f 8b), so the Lambda adapter (aws-lambda-go-api-proxy's ProxyResponseWriterV2)
// answers it base64-encoded with isBase64Encoded true, which API Gateway decodes.

// gzipMinSize is the smallest body worth compressing: below it the gzip header and trailer
// (18 bytes) and the work cost more than they save, and a redirect or a short error is sent as
// it is.
const gzipMinSize = 1 << 10

// pageGzipLevel is the level pages are compressed at, per response. BenchmarkGzipTracePage
// compares the levels on the first page of a 10,000-span trace (188 KiB of HTML): BestSpeed
// takes about a quarter of DefaultCompression's time (0.22 ms against 0.90 ms on one x86 core)
// for a body 9% larger (11.6 KiB against 10.6 KiB). A function of the stack has 256 MB, about
// a seventh of a vCPU, where the difference is some 5 ms of billed time per large page for
// 1 KiB that a browser fetches in a fraction of that, so pages are compressed at BestSpeed.
// The bundles are compressed once per process, at BestCompression (gzipAsset).
const pageGzipLevel = gzip.BestSpeed

// acceptsGzip reports whether a request with header h accepts a gzip body: its
// Accept-Encoding lists gzip (or x-gzip), or else "*", with a weight above zero
// (RFC 9110, section 12.5.3: https://www.rfc-editor.org/rfc/rfc9110#name-accept-encoding).
// An explicit gzip entry decides over "*"; "gzip;q=0" refuses it; no header admits only
// identity, as far as this server is concerned.
func acceptsGzip(h http.Header) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, v := range h.Values("Accept-Encoding") {
		for entry := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(entry, ";")
			q := weight(params)
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				gzipQ = max(gzipQ, q)
			case "*":
				starQ = max(starQ, q)
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

// weight is the q parameter of an Accept-Encoding entry's parameters (";q=0.5"): 1 when there
// is none, 0 when it is not a weight (a client that sends a malformed weight gets identity,
// which every client accepts).
func weight(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || q < 0 || q > 1 {
			return 0
		}
		return q
	}
	return 1
}

// gzipWriters are reusable writers at pageGzipLevel: a gzip.Writer's compressor state is
// hundreds of kilobytes, too much to allocate per response.
var gzipWriters = sync.Pool{New: func() any {
	w, err := gzip.NewWriterLevel(nil, pageGzipLevel)
	if err != nil {
		panic(err) // a constant, valid level
	}
	return w
}}

// gzipBytes is body gzipped at pageGzipLevel.
func gzipBytes(body []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(body)/4 + 64)
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&out)
	_, _ = zw.Write(body) // a bytes.Buffer does not fail
	_ = zw.Close()
	return out.Bytes()
}

// writeBody writes status and body, gzipped when the request accepts it and body is at least
// gzipMinSize, with its Content-Length; the caller has set the other headers. Every answer
// whose body may be compressed says that it varies with Accept-Encoding.
func writeBody(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	if len(body) >= gzipMinSize && acceptsGzip(r.Header) {
		body = gzipBytes(body)
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
