package dashboard

import (
	"net/http"
	"strconv"
)

// Pages are gzipped by the shared middleware (web.Chain: web.GzipMinBytes, web.GzipLevel) for
// a browser that accepts gzip: the first page of a 10,000-span trace is some 190 KB of HTML,
// about 12 KB gzipped. The bundles are compressed once per process, at BestCompression
// (gzipAsset), and served with their Content-Encoding, which the middleware leaves alone.

// writeBody writes status and body with its Content-Length; the caller has set the other
// headers. The middleware compresses it (and drops the length) when the request accepts gzip.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
