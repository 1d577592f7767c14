package mcpserver

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// inProcess is an http.RoundTripper that serves each request with the API's handler in this
// process: how the tools call the REST API without a network hop.
type inProcess struct{ api http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	w := &response{header: http.Header{}, status: http.StatusOK}
	t.api.ServeHTTP(w, req)
	return &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.header,
		Body:          io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()),
		Request:       req,
	}, nil
}

// response is the answer a handler wrote.
type response struct {
	header      http.Header
	body        bytes.Buffer
	status      int
	wroteHeader bool
}

func (w *response) Header() http.Header { return w.header }

func (w *response) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
}

func (w *response) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
