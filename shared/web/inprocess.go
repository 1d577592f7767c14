package web

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// InProcess is an http.RoundTripper that serves each request with Handler in this process, as
// if over the network: how the MCP tool server and the dashboard call the REST API's handlers
// with the Go client, without a network hop.
type InProcess struct{ Handler http.Handler }

// RoundTrip serves req with t.Handler and returns its answer.
func (t InProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close() // a RoundTripper closes the request's body, as a transport does
	}
	w := &recorded{header: http.Header{}, status: http.StatusOK}
	t.Handler.ServeHTTP(w, req)
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

// recorded is the answer a handler wrote.
type recorded struct {
	header      http.Header
	body        bytes.Buffer
	status      int
	wroteHeader bool
}

func (w *recorded) Header() http.Header { return w.header }

func (w *recorded) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
}

func (w *recorded) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
