package lambdahttp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// Error types of a streamed answer that fails, sent in the Lambda-Runtime-Function-Error-Type
// trailer (or as the invocation's error type when nothing was sent yet).
const (
	// ErrorTypeAborted: the handler panicked with http.ErrAbortHandler, net/http's way of
	// cutting a response it cannot finish.
	ErrorTypeAborted = "ResponseAborted"
	// ErrorTypePanic: the handler panicked with anything else.
	ErrorTypePanic = "HandlerPanic"
)

// streamBufferSize is how much of the body a streamed answer holds before it sends it without
// waiting for a Flush, as net/http's server buffers.
const streamBufferSize = 4 << 10

// StartStreaming serves h for the life of the Lambda execution environment, as Start does, for
// a function whose Function URL is in RESPONSE_STREAM invoke mode. It does not return.
//
// An event of the Function URL is answered with Lambda's response streaming for HTTP
// integrations (https://docs.aws.amazon.com/lambda/latest/dg/config-rs-write-functions.html):
// the response body posted to the Runtime API, in chunks, with the content type
// application/vnd.awslambda.http-integration-response, is a JSON prelude
// {"statusCode", "headers", "cookies"}, eight NUL bytes, then the body as h writes it. The
// prelude leaves as soon as h commits its header (WriteHeader, its first Write or a Flush); the
// body is held up to 4 KiB and leaves at each Flush, which returns once the runtime has taken
// it, so a flushed chunk is on its way to the client before h writes the next. The Content-Type
// is not sniffed: h sets it.
//
// A handler that panics after its header (http.ErrAbortHandler included) ends the stream with
// the error trailers Lambda-Runtime-Function-Error-Type (ErrorTypeAborted, ErrorTypePanic) and
// Lambda-Runtime-Function-Error-Body: Lambda counts a function error and the client sees a cut
// response. One that panics before fails the invocation (the Function URL answers 502).
//
// Any other event, API Gateway's, is answered buffered, exactly as Start answers it: API
// Gateway HTTP APIs cannot stream, and a Lambda function cannot learn from the Runtime API how
// it was invoked, so the event decides (isFunctionURL).
func StartStreaming(h http.Handler) {
	// aws-lambda-go's runtime client posts a response that is an io.Reader with chunked transfer
	// encoding, each read of it flushed as one chunk, with the content type the response names
	// (ContentType) and, when a read fails, the error trailers. It does not send the
	// Lambda-Runtime-Function-Response-Mode: streaming header of the custom runtime
	// documentation: for an invocation in streaming mode Lambda streams the response without it
	// (the Runtime Interface Emulator's directinvoke package; aws-lambda-go's own lambdaurl
	// package relies on it).
	lambda.Start(newStreamer(h).invoke)
}

// streamer answers the events of a function served with StartStreaming.
type streamer struct {
	h        http.Handler
	buffered buffered
	requests core.RequestAccessorV2
}

func newStreamer(h http.Handler) *streamer {
	return &streamer{h: h, buffered: newBuffered(h)}
}

// invoke is the Lambda handler: for a Function URL event, a streamed answer (an io.Reader, which
// the runtime posts as it reads it); for any other event, the events.APIGatewayV2HTTPResponse
// Start would answer. The request carries the event's request context, as Start's does, so
// that the handler's logs and errors carry its request id.
func (s *streamer) invoke(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (any, error) {
	if !isFunctionURL(ev) {
		return s.buffered.invoke(ctx, ev)
	}
	req, err := s.requests.EventToRequestWithContext(ctx, ev)
	if err != nil {
		return nil, fmt.Errorf("lambdahttp: the event is not an HTTP request: %w", err)
	}
	return serveStreaming(s.h, req)
}

// isFunctionURL reports whether ev came through a Lambda Function URL rather than API Gateway.
// Both send payload format 2.0, but a Function URL's domain is
// <url-id>.lambda-url.<region>.on.aws
// (https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-payloads), and API
// Gateway's is execute-api's or a custom domain.
func isFunctionURL(ev events.APIGatewayV2HTTPRequest) bool {
	return strings.Contains(ev.RequestContext.DomainName, ".lambda-url.")
}

// serveStreaming runs h on req in a goroutine of its own and returns the answer once h has
// committed its header, or the error of a handler that panicked before. The answer's body is
// the pipe h writes to; it ends when h returns.
func serveStreaming(h http.Handler, req *http.Request) (*events.LambdaFunctionURLStreamingResponse, error) {
	pr, pw := io.Pipe()
	w := &streamWriter{
		header: http.Header{},
		buf:    bufio.NewWriterSize(pw, streamBufferSize),
		pipe:   pw,
		head:   make(chan head, 1),
		failed: make(chan error, 1),
	}
	go w.serve(h, req)
	select {
	case hd := <-w.head:
		return hd.response(pr), nil
	case err := <-w.failed:
		return nil, err
	}
}

// head is the status and header of a streamed answer, as committed.
type head struct {
	status int
	header http.Header
}

// response is the streamed answer of hd with body: the prelude's status, headers (the values of
// a repeated header joined by ", ") and cookies (the Set-Cookie values), then body.
// aws-lambda-go's type writes the prelude and the NUL separator and names the content type.
func (hd head) response(body io.ReadCloser) *events.LambdaFunctionURLStreamingResponse {
	res := &events.LambdaFunctionURLStreamingResponse{StatusCode: hd.status, Body: body}
	for k, v := range hd.header {
		switch k {
		case "Set-Cookie":
			res.Cookies = v
		case "Content-Length", "Transfer-Encoding", "Connection":
			// The framing of the client's response is the Function URL's.
		default:
			if res.Headers == nil {
				res.Headers = map[string]string{}
			}
			res.Headers[k] = strings.Join(v, ", ")
		}
	}
	return res
}

// streamWriter is the http.ResponseWriter of a streamed answer: its header is committed once
// (head), then the body goes through buf to the pipe the runtime reads. Only the handler's
// goroutine uses it, as net/http's contract says.
type streamWriter struct {
	header http.Header
	status int // the committed status; 0 before
	buf    *bufio.Writer
	pipe   *io.PipeWriter
	head   chan head  // receives the committed head, once
	failed chan error // receives the error of a handler that panicked before committing
}

// Header is the header the prelude will carry; changes after the commit are not sent.
func (w *streamWriter) Header() http.Header { return w.header }

// WriteHeader commits the status and the header; later calls and interim (1xx) codes, which a
// Function URL cannot send, are ignored.
func (w *streamWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code)) // as net/http's server
	}
	if w.status != 0 || code < 200 {
		return
	}
	w.status = code
	w.head <- head{status: code, header: w.header.Clone()}
}

// Write commits a 200 if nothing was committed, then adds p to the body; bytes beyond the
// buffer go to the runtime at once. It fails once the runtime stopped reading.
func (w *streamWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.buf.Write(p)
}

// FlushError commits a 200 if nothing was committed and sends the buffered body to the runtime,
// returning once the runtime has taken it (http.ResponseController.Flush calls it).
func (w *streamWriter) FlushError() error {
	w.WriteHeader(http.StatusOK)
	return w.buf.Flush()
}

// Flush is FlushError for http.Flusher.
func (w *streamWriter) Flush() { _ = w.FlushError() }

// serve runs h and ends the answer: the rest of the body, then the end of the stream, or its
// error if h panicked.
func (w *streamWriter) serve(h http.Handler, req *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			w.abort(req.Context(), v)
			return
		}
		w.WriteHeader(http.StatusOK)
		_ = w.pipe.CloseWithError(w.buf.Flush()) // nil: the end of the body
	}()
	h.ServeHTTP(w, req)
}

// abort ends the answer of a handler that panicked with v: the invocation's error if nothing
// was committed, else what was written, then the error, which the runtime sends in the
// trailers. Panics other than http.ErrAbortHandler are logged with their stack, once, here.
func (w *streamWriter) abort(ctx context.Context, v any) {
	err := messages.InvokeResponse_Error{Type: ErrorTypeAborted, Message: "the handler aborted the response"}
	if v != http.ErrAbortHandler {
		err = messages.InvokeResponse_Error{Type: ErrorTypePanic, Message: fmt.Sprint(v)}
		slog.ErrorContext(ctx, "lambdahttp: the handler panicked", "panic", err.Message, "stack", string(debug.Stack()))
	}
	if w.status == 0 {
		_ = w.pipe.CloseWithError(err)
		w.failed <- err
		return
	}
	_ = w.buf.Flush()
	_ = w.pipe.CloseWithError(err)
}
