package web

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Every answer of at least GzipMinBytes is gzipped for a client that accepts gzip
// (Accept-Encoding), by Chain's compress middleware. API Gateway HTTP APIs and Lambda Function
// URLs pass an answer through as the function wrote it, so the function compresses. A gzipped
// body is not valid UTF-8 (it starts 1f 8b), so the Lambda adapter answers it base64-encoded
// with isBase64Encoded true, which API Gateway decodes: in Lambda's response payload (6 MB) it
// weighs 4/3 of its compressed size, whatever its content, where a JSON body weighs its size
// as a JSON string (up to twice its size, six times for control characters).
//
// Go's http.Transport asks for gzip and decodes it transparently when the caller sets no
// Accept-Encoding of its own, as do Python's requests and httpx, browsers and fetch, so the
// SDKs, the Go client, OpenTelemetry exporters and MCP clients read compressed answers
// without a change. A client that sends no Accept-Encoding (curl without --compressed) is
// answered identity.

// GzipMinBytes is the smallest body worth compressing: below it the gzip header and trailer
// (18 bytes) and the work cost more than they save, and a short answer or error is sent as it
// is.
const GzipMinBytes = 1 << 10

// GzipLevel is the level answers are compressed at. The dashboard's BenchmarkGzipTracePage
// compares the levels on the first page of a 10,000-span trace (188 KiB of HTML): BestSpeed
// takes about a quarter of DefaultCompression's time (0.22 ms against 0.90 ms on one x86 core)
// for a body 9% larger (11.6 KiB against 10.6 KiB). A function of the stack has 256 MB, about
// a seventh of a vCPU, where the difference is some 5 ms of billed time per large answer for
// 1 KiB that a client fetches in a fraction of that, so answers are compressed at BestSpeed.
const GzipLevel = gzip.BestSpeed

// AcceptsGzip reports whether a request with header h accepts a gzip body: its
// Accept-Encoding lists gzip (or x-gzip), or else "*", with a weight above zero
// (RFC 9110, section 12.5.3: https://www.rfc-editor.org/rfc/rfc9110#name-accept-encoding).
// An explicit gzip entry decides over "*"; "gzip;q=0" refuses it; no header admits only
// identity, as far as this server is concerned.
func AcceptsGzip(h http.Header) bool {
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

// gzipWriters are reusable writers at GzipLevel: a gzip.Writer's compressor state is hundreds
// of kilobytes, too much to allocate per answer.
var gzipWriters = sync.Pool{New: func() any {
	w, err := gzip.NewWriterLevel(nil, GzipLevel)
	if err != nil {
		panic(err) // a constant, valid level
	}
	return w
}}

// compress gzips the answers of next for the requests that accept gzip (AcceptsGzip), when
// the body reaches GzipMinBytes. An answer that already has a Content-Encoding (the
// dashboard's precompressed bundles), an event stream, and one whose handler flushes before
// GzipMinBytes (a stream: its chunks must leave as they are written) are sent as written.
// Every answer says that it varies with Accept-Encoding.
func compress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addVary(w.Header())
		if !AcceptsGzip(r.Header) || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w}
		next.ServeHTTP(gw, r)
		gw.close()
	})
}

// addVary adds Accept-Encoding to h's Vary unless it is there.
func addVary(h http.Header) {
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "Accept-Encoding") {
				return
			}
		}
	}
	h.Add("Vary", "Accept-Encoding")
}

// gzipWriter holds the start of an answer until it knows whether to compress it: GzipMinBytes
// written (compress), or the end or a Flush before that (send as written).
type gzipWriter struct {
	http.ResponseWriter
	status  int    // the status the handler wrote; 0 before
	held    []byte // the body written before the decision
	decided bool
	zw      *gzip.Writer // non-nil once compressing
}

func (g *gzipWriter) WriteHeader(code int) {
	if code < 200 && code != 0 { // interim answers pass
		g.ResponseWriter.WriteHeader(code)
		return
	}
	if g.status == 0 {
		g.status = code
	}
	if g.decided {
		g.ResponseWriter.WriteHeader(code)
	}
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	if g.status == 0 {
		g.status = http.StatusOK
	}
	if !g.decided {
		g.held = append(g.held, p...)
		if len(g.held) < GzipMinBytes {
			return len(p), nil
		}
		if err := g.decide(true); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if g.zw != nil {
		return g.zw.Write(p)
	}
	return g.ResponseWriter.Write(p)
}

// decide commits the header, compressing when large says the body reached GzipMinBytes and
// nothing else forbids it, and writes what was held.
func (g *gzipWriter) decide(large bool) error {
	g.decided = true
	h := g.Header()
	if large && compressible(g.status, h) {
		h.Del("Content-Length")
		h.Set("Content-Encoding", "gzip")
		g.zw = gzipWriters.Get().(*gzip.Writer)
		g.zw.Reset(g.ResponseWriter)
	}
	if g.status != 0 {
		g.ResponseWriter.WriteHeader(g.status)
	}
	if len(g.held) == 0 {
		return nil
	}
	held := g.held
	g.held = nil
	if g.zw != nil {
		_, err := g.zw.Write(held)
		return err
	}
	_, err := g.ResponseWriter.Write(held)
	return err
}

// compressible reports whether an answer of status with header h may be gzipped.
func compressible(status int, h http.Header) bool {
	if status == http.StatusNoContent || status == http.StatusNotModified || h.Get("Content-Encoding") != "" {
		return false
	}
	ct := strings.ToLower(h.Get("Content-Type"))
	return !strings.HasPrefix(ct, "text/event-stream")
}

// FlushError sends what is held as written (a stream is not compressed) or, when compressing,
// flushes the compressor, then flushes the connection (http.ResponseController.Flush).
func (g *gzipWriter) FlushError() error {
	if !g.decided {
		if err := g.decide(false); err != nil {
			return err
		}
	}
	if g.zw != nil {
		if err := g.zw.Flush(); err != nil {
			return err
		}
	}
	return http.NewResponseController(g.ResponseWriter).Flush()
}

// Flush is FlushError for http.Flusher.
func (g *gzipWriter) Flush() { _ = g.FlushError() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// close ends the answer: what is held, sent as written, or the end of the gzip stream.
func (g *gzipWriter) close() {
	if !g.decided {
		_ = g.decide(false) // under GzipMinBytes: sent as written
		return
	}
	if g.zw != nil {
		_ = g.zw.Close() // The status is sent; a failed write means the client left.
		g.zw.Reset(nil)
		gzipWriters.Put(g.zw)
		g.zw = nil
	}
}
