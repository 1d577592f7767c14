package lambdahttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// AsDeployed serves h as a deployment serves it behind an API Gateway HTTP API, for
// plume-local and the tests of the whole API, so that they see what production would answer
// where Lambda's limits decide it:
//
//   - the request is refused before h runs when its event (Event) would be over
//     MaxRequestPayload: 413 {"message":"Request Entity Too Large"}, API Gateway's answer
//     when Lambda refuses the event;
//   - h writes to the Lambda adapter's own response writer (aws-lambda-go-api-proxy's, as
//     Start does), so it cannot stream and its answer is what Start would return, in its
//     smallest encoding;
//   - an answer whose response payload is over MaxResponsePayload and a handler that wrote
//     nothing fail the invocation, and the client gets API Gateway's answer to a function
//     error: 500 {"message":"Internal Server Error"}. The reason is logged, as Lambda logs it.
//
// Otherwise the answer is written as API Gateway writes it: the status, the headers (a
// repeated header joined by ","), each cookie, and the body decoded when it was base64.
//
// Timeout is not enforced: how long a request takes here says how fast this machine is (a
// laptop, a loaded test runner against DynamoDB Local), not how long it takes in Lambda, and a
// deadline would fail tests by the machine's load. The work a request does is bounded and
// counted instead (requests per route, the limits of each input), and the tests that need a
// deadline's behaviour give one (asDeployed).
func AsDeployed(h http.Handler) http.Handler { return asDeployed(h, 0) }

// asDeployed is AsDeployed with a deadline when timeout is not 0: a handler still running at
// it fails the invocation, as Lambda ends a function at its timeout.
func asDeployed(h http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !admit(w, r) {
			return
		}
		ctx := r.Context()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		rw := core.NewProxyResponseWriterV2()
		start := time.Now()
		h.ServeHTTP(rw, r.WithContext(ctx))
		res, err := rw.GetProxyResponse()
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded) && r.Context().Err() == nil:
			functionError(w, r, fmt.Sprintf("Task timed out after %.2f seconds", time.Since(start).Seconds()))
			return
		case err != nil:
			functionError(w, r, "the handler wrote no answer: "+err.Error())
			return
		}
		res = smallest(res)
		if n := ResponsePayload(res); n > MaxResponsePayload {
			functionError(w, r, fmt.Sprintf("Function.ResponseSizeTooLarge: response payload of %d bytes exceeded maximum allowed payload size (%d bytes)", n, MaxResponsePayload))
			return
		}
		writeResponse(w, res)
	})
}

// StreamingAsDeployed serves h as a Function URL in RESPONSE_STREAM invoke mode serves it, for
// plume-local: the request is refused as AsDeployed refuses it (a Function URL's event has the
// same limit), h writes to the connection, flushes included, and an answer is cut (the
// connection aborted, as Lambda ends a stream) once it has sent MaxStreamedResponse bytes.
// As with AsDeployed, Timeout is not enforced.
func StreamingAsDeployed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !admit(w, r) {
			return
		}
		h.ServeHTTP(&cappedWriter{ResponseWriter: w, left: MaxStreamedResponse}, r)
	})
}

// admit reads r's body and answers API Gateway's 413 when the event of r would be over
// MaxRequestPayload; otherwise r's body is the bytes read, and admit reports true.
func admit(w http.ResponseWriter, r *http.Request) bool {
	var body []byte
	if r.Body != nil {
		var err error
		// A body longer than the limit cannot fit in an event: reading one byte past it is enough.
		body, err = io.ReadAll(io.LimitReader(r.Body, MaxRequestPayload+1))
		if err != nil {
			gatewayAnswer(w, http.StatusBadRequest, "Bad Request")
			return false
		}
	}
	if n := RequestPayload(Event(r, body)); n > MaxRequestPayload {
		slog.WarnContext(r.Context(), "lambdahttp: request payload too large: Lambda refuses the event (RequestEntityTooLargeException)",
			"bytes", n, "limit", MaxRequestPayload, "method", r.Method, "path", r.URL.Path)
		gatewayAnswer(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return true
}

// functionError answers as API Gateway answers a failed invocation, after logging why.
func functionError(w http.ResponseWriter, r *http.Request, why string) {
	slog.ErrorContext(r.Context(), "lambdahttp: the invocation failed; API Gateway answers 500", "reason", why, "method", r.Method, "path", r.URL.Path)
	gatewayAnswer(w, http.StatusInternalServerError, "Internal Server Error")
}

// gatewayAnswer writes one of API Gateway's own answers: {"message": message}.
func gatewayAnswer(w http.ResponseWriter, status int, message string) {
	h := w.Header()
	for k := range h {
		delete(h, k)
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": message})
}

// writeResponse writes res as API Gateway sends a function's answer to the client.
func writeResponse(w http.ResponseWriter, res events.APIGatewayV2HTTPResponse) {
	body := []byte(res.Body)
	if res.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(res.Body); err != nil {
			gatewayAnswer(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
	}
	h := w.Header()
	for k, v := range res.Headers {
		h.Set(k, v)
	}
	for _, c := range res.Cookies {
		h.Add("Set-Cookie", c)
	}
	h.Del("Content-Length")
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(body)
}

// Event is the event an API Gateway HTTP API (payload format 2.0) sends a function for r with
// body, as far as its size goes: the request's path, query, headers (names lowercased,
// repeated ones joined by ","), cookies, the headers and request context API Gateway adds, and
// the body, as a JSON string when it is text and base64-encoded when it is not (a binary or
// compressed body: Content-Encoding, a content type that is not text, JSON, XML, JavaScript or
// a form, or bytes that are not UTF-8). Its size is within a few hundred bytes of API
// Gateway's; the body, which decides it, is exact.
func Event(r *http.Request, body []byte) events.APIGatewayV2HTTPRequest {
	const domain = "a1b2c3d4e5.execute-api.us-east-1.amazonaws.com"
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	now := time.Now().UTC()
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: routeKey(r), RawPath: r.URL.EscapedPath(), RawQueryString: r.URL.RawQuery,
		Headers: map[string]string{
			"host": domain, "x-forwarded-for": ip, "x-forwarded-port": "443", "x-forwarded-proto": "https",
			"x-amzn-trace-id": "Root=1-" + fmt.Sprintf("%08x", now.Unix()) + "-0123456789abcdef01234567",
		},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: routeKey(r), AccountID: "123456789012", Stage: "$default", RequestID: "AbCdEfGhIjKlMnO=",
			APIID: "a1b2c3d4e5", DomainName: domain, DomainPrefix: "a1b2c3d4e5",
			Time: now.Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: r.Method, Path: r.URL.Path, Protocol: "HTTP/1.1", SourceIP: ip, UserAgent: r.UserAgent(),
			},
		},
	}
	for k, v := range r.Header {
		if k == "Cookie" {
			for _, line := range v {
				for c := range strings.SplitSeq(line, ";") {
					ev.Cookies = append(ev.Cookies, strings.TrimSpace(c))
				}
			}
			continue
		}
		ev.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters = make(map[string]string, len(q))
		for k, v := range q {
			ev.QueryStringParameters[k] = strings.Join(v, ",")
		}
	}
	if len(body) > 0 {
		if isText(r.Header, body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	return ev
}

// routeKey is the route of r as its ServeMux matched it, in API Gateway's form.
func routeKey(r *http.Request) string {
	if r.Pattern == "" {
		return "$default"
	}
	return r.Pattern
}

// isText reports whether a body with header h is sent to the function as text rather than
// base64.
func isText(h http.Header, body []byte) bool {
	if ce := h.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return false
	}
	if !utf8.Valid(body) {
		return false
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/x-www-form-urlencoded":
		return true
	}
	return false
}

// cappedWriter cuts a streamed answer once it has sent its allowance.
type cappedWriter struct {
	http.ResponseWriter
	left int
}

// Write sends p, or what of it the allowance admits, then aborts the answer (the connection is
// cut, as Lambda ends a stream past MaxStreamedResponse).
func (c *cappedWriter) Write(p []byte) (int, error) {
	if len(p) <= c.left {
		c.left -= len(p)
		return c.ResponseWriter.Write(p)
	}
	n, _ := c.ResponseWriter.Write(p[:c.left])
	c.left = 0
	_ = http.NewResponseController(c.ResponseWriter).Flush()
	slog.Warn("lambdahttp: streamed response cut", "limit", MaxStreamedResponse, "written", n)
	panic(http.ErrAbortHandler)
}

// Unwrap lets http.ResponseController flush the connection.
func (c *cappedWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
