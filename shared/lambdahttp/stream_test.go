package lambdahttp

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// urlEvent is a Function URL event for POST /v1/chat/completions.
func urlEvent(domain string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: "/v1/chat/completions", Body: "{}",
		Headers: map[string]string{"content-type": "application/json"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: domain,
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/v1/chat/completions"},
		},
	}
}

// prelude reads a streamed answer's prelude and the eight NUL bytes after it (JSON has no raw
// NUL byte, so the first one ends the prelude).
func prelude(t *testing.T, r *bufio.Reader) map[string]any {
	t.Helper()
	raw, err := r.ReadBytes(0)
	require.NoError(t, err)
	var p map[string]any
	require.NoError(t, json.Unmarshal(raw[:len(raw)-1], &p), "prelude %q", raw)
	nuls := make([]byte, 7)
	_, err = io.ReadFull(r, nuls)
	require.NoError(t, err)
	require.Equal(t, make([]byte, 7), nuls, "eight NUL bytes end the prelude")
	return p
}

// TestStreaming: a Function URL event is answered with a prelude as soon as the handler commits
// its header, then each flushed chunk while the handler is still running; an API Gateway event
// is answered buffered; a panic after the header ends the stream with the error trailers' error.
func TestStreaming(t *testing.T) {
	t.Run("flushed chunks leave at once", func(t *testing.T) {
		next := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Add("Set-Cookie", "a=1")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, "data: one\n\n")
			w.(http.Flusher).Flush()
			<-next // only once the test has read the first chunk
			_, _ = io.WriteString(w, "data: two\n\n")
		})
		out, err := newStreamer(h).invoke(t.Context(), urlEvent("abc.lambda-url.us-east-1.on.aws"))
		require.NoError(t, err)
		res, ok := out.(*events.LambdaFunctionURLStreamingResponse)
		require.True(t, ok, "a streamed answer, got %T", out)
		assert.Equal(t, "application/vnd.awslambda.http-integration-response", res.ContentType())
		r := bufio.NewReader(res)
		p := prelude(t, r)
		assert.EqualValues(t, http.StatusCreated, p["statusCode"])
		assert.Equal(t, "text/event-stream", p["headers"].(map[string]any)["Content-Type"])
		assert.Equal(t, []any{"a=1"}, p["cookies"])
		first := make([]byte, len("data: one\n\n"))
		_, err = io.ReadFull(r, first)
		require.NoError(t, err)
		assert.Equal(t, "data: one\n\n", string(first))
		close(next)
		rest, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.Equal(t, "data: two\n\n", string(rest))
	})

	t.Run("API Gateway events are buffered", func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "whole")
		})
		out, err := newStreamer(h).invoke(t.Context(), urlEvent("abc.execute-api.us-east-1.amazonaws.com"))
		require.NoError(t, err)
		res, ok := out.(events.APIGatewayV2HTTPResponse)
		require.True(t, ok, "a buffered answer, got %T", out)
		assert.Equal(t, "whole", res.Body)
	})

	t.Run("a panic after the header cuts the stream", func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		})
		out, err := newStreamer(h).invoke(t.Context(), urlEvent("abc.lambda-url.us-east-1.on.aws"))
		require.NoError(t, err)
		r := bufio.NewReader(out.(*events.LambdaFunctionURLStreamingResponse))
		prelude(t, r)
		body, err := io.ReadAll(r)
		assert.Equal(t, "partial", string(body))
		var e messages.InvokeResponse_Error
		require.True(t, errors.As(err, &e), "the stream ends with the invocation error, got %v", err)
		assert.Equal(t, ErrorTypeAborted, e.Type)
	})

	t.Run("a panic before the header fails the invocation", func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })
		_, err := newStreamer(h).invoke(t.Context(), urlEvent("abc.lambda-url.us-east-1.on.aws"))
		var e messages.InvokeResponse_Error
		require.True(t, errors.As(err, &e), "got %v", err)
		assert.Equal(t, ErrorTypePanic, e.Type)
	})
}
