package lambdaemu

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/plumehq/plume/shared/lambdahttp"
)

// maxStreamPayload is Lambda's limit for a streamed response, in bytes (20 MiB).
const maxStreamPayload = lambdahttp.MaxStreamedResponse

// Stream is the response of an invocation made with InvokeStream, read as the runtime posts it.
type Stream struct {
	// ContentType is the Content-Type the runtime posted the response with, for example
	// application/vnd.awslambda.http-integration-response for a Function URL's HTTP answer.
	ContentType string

	body *io.PipeReader
}

// Read reads the response body as it arrives. Once the body is over it returns io.EOF, or the
// *FunctionError the runtime sent in the response's trailers when the function failed midway,
// or why the invocation was abandoned (the process exited, the deadline passed).
func (s *Stream) Read(p []byte) (int, error) { return s.body.Read(p) }

// Close stops reading: the runtime's post of the rest of the response fails.
func (s *Stream) Close() error {
	return s.body.CloseWithError(errors.New("lambdaemu: the caller closed the stream"))
}

// streamHandoff carries a streamed response from the Runtime API's response handler to the
// InvokeStream waiting for it.
type streamHandoff chan *Stream

// InvokeStream invokes the function as Invoke does, for a function that streams its response
// (Lambda's response streaming, as a Function URL in RESPONSE_STREAM mode invokes it). It
// returns as soon as the runtime begins to post the response; the Stream yields each chunk as
// the runtime sends it, so a test sees when each arrives. A function that fails before it
// posts a response fails InvokeStream with its *FunctionError.
//
// The execution environment is the caller's until the response is over (or ctx ends, or the
// deadline passes): other invocations queue behind it.
func (e *Emulator) InvokeStream(ctx context.Context, payload []byte) (*Stream, error) {
	if err := e.acquire(ctx, payload); err != nil {
		return nil, err
	}
	inv := e.newInvocation(payload)
	inv.stream = make(streamHandoff, 1)
	ctx, cancel := context.WithDeadline(ctx, inv.deadline)
	done := func() { cancel(); e.release() }
	if err := e.handOver(ctx, inv); err != nil {
		done()
		return nil, err
	}
	select {
	case s := <-inv.stream:
		go func() {
			defer done()
			select {
			case <-inv.result: // the post is over
			case <-e.exited:
				_ = s.body.CloseWithError(e.exitErr)
			case <-ctx.Done():
				_ = s.body.CloseWithError(e.abandoned(ctx, inv, "reading the response"))
			}
		}()
		return s, nil
	case r := <-inv.result:
		done()
		return nil, r.err // only /error completes a streamed invocation without a Stream
	case <-e.exited:
		done()
		return nil, e.exitErr
	case <-ctx.Done():
		done()
		return nil, e.abandoned(ctx, inv, "waiting for the function")
	}
}

// streamResponse passes the runtime's post of inv's response on to its Stream, each read of the
// request body as it arrives, then completes the invocation: with the *FunctionError of the
// error trailers, if the runtime sent them.
func (e *Emulator) streamResponse(w http.ResponseWriter, r *http.Request, inv *invocation) {
	pr, pw := io.Pipe()
	inv.stream <- &Stream{ContentType: r.Header.Get("Content-Type"), body: pr}
	_, err := io.Copy(pw, http.MaxBytesReader(w, r.Body, maxStreamPayload))
	var res result
	switch {
	case errors.As(err, new(*http.MaxBytesError)):
		res.err = &FunctionError{
			Type:    "Function.ResponseSizeTooLarge",
			Message: fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", maxStreamPayload),
		}
	case err != nil:
		res.err = fmt.Errorf("lambdaemu: the streamed response was cut: %w", err)
	default:
		if typ := r.Trailer.Get(headerErrorType); typ != "" {
			detail, decodeErr := base64.StdEncoding.DecodeString(r.Trailer.Get(trailerErrorBody))
			if decodeErr != nil {
				detail = []byte(r.Trailer.Get(trailerErrorBody))
			}
			res.err = parseFunctionError(detail, typ)
		}
	}
	_ = pw.CloseWithError(res.err) // nil: io.EOF
	e.accept(w, r, res)
}

// httpIntegrationType is the content type of a streamed HTTP answer: a JSON prelude, eight NUL
// bytes, then the body (https://docs.aws.amazon.com/lambda/latest/dg/config-rs-write-functions.html).
const httpIntegrationType = "application/vnd.awslambda.http-integration-response"

// HTTPResponse reads the stream as a Function URL in RESPONSE_STREAM mode does: the prelude's
// status, headers and cookies, then a body that yields the rest of the stream as it arrives.
// It fails for a stream of another content type or a prelude that is not one.
func (s *Stream) HTTPResponse() (*http.Response, error) {
	if s.ContentType != httpIntegrationType {
		return nil, fmt.Errorf("lambdaemu: the function streamed %q, not an HTTP answer (%s)", s.ContentType, httpIntegrationType)
	}
	r := bufio.NewReader(s)
	raw, err := r.ReadBytes(0) // JSON has no raw NUL byte: the first one ends the prelude
	if err != nil {
		return nil, fmt.Errorf("lambdaemu: read the prelude: %w", err)
	}
	var prelude struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
		Cookies    []string          `json:"cookies"`
	}
	if err := json.Unmarshal(raw[:len(raw)-1], &prelude); err != nil {
		return nil, fmt.Errorf("lambdaemu: the prelude %q: %w", raw, err)
	}
	sep := make([]byte, 7)
	if _, err := io.ReadFull(r, sep); err != nil || !bytes.Equal(sep, make([]byte, 7)) {
		return nil, fmt.Errorf("lambdaemu: eight NUL bytes must end the prelude (%v)", err)
	}
	res := &http.Response{
		StatusCode: cmp.Or(prelude.StatusCode, http.StatusOK), Header: http.Header{},
		Body: struct {
			io.Reader
			io.Closer
		}{r, s},
	}
	for k, v := range prelude.Headers {
		res.Header.Set(k, v)
	}
	for _, c := range prelude.Cookies {
		res.Header.Add("Set-Cookie", c)
	}
	return res, nil
}
