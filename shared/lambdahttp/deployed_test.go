package lambdahttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serve runs h behind AsDeployed on a test server and returns its URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(AsDeployed(h))
	t.Cleanup(srv.Close)
	return srv.URL
}

// answer is what a client received.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{res.StatusCode, res.Header, body}
}

func get(t *testing.T, url string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	return do(t, req)
}

// gatewayMessage is the message of one of API Gateway's own answers.
func gatewayMessage(t *testing.T, a answer) string {
	t.Helper()
	var body struct{ Message string }
	require.NoError(t, json.Unmarshal(a.body, &body), "body %q", a.body)
	return body.Message
}

// payloadOf is the response payload of h's answer to GET /, as Start would return it.
func payloadOf(t *testing.T, h http.Handler) int {
	t.Helper()
	res, err := newBuffered(h).invoke(context.Background(), events.APIGatewayV2HTTPRequest{
		RawPath: "/", RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/"}},
	})
	require.NoError(t, err)
	return ResponsePayload(res)
}

// textOf answers n bytes of 'a' as text/plain.
func textOf(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, strings.Repeat("a", n))
	})
}

// TestResponseLimit: an answer whose response payload is exactly MaxResponsePayload reaches the
// client; one byte more fails the invocation, and the client gets API Gateway's 500.
func TestResponseLimit(t *testing.T) {
	overhead := payloadOf(t, textOf(0))
	fits := MaxResponsePayload - overhead
	require.Equal(t, MaxResponsePayload, payloadOf(t, textOf(fits)))

	a := get(t, serve(t, textOf(fits)))
	assert.Equal(t, http.StatusOK, a.status)
	assert.Len(t, a.body, fits)

	a = get(t, serve(t, textOf(fits+1)))
	assert.Equal(t, http.StatusInternalServerError, a.status)
	assert.Equal(t, "Internal Server Error", gatewayMessage(t, a))
	assert.Equal(t, "application/json", a.header.Get("Content-Type"))
}

// TestSmallestEncoding: a body that would double as a JSON string (quotes) leaves base64-encoded
// (4/3) and reaches the client as written; ordinary JSON stays text.
func TestSmallestEncoding(t *testing.T) {
	quotes := strings.Repeat(`\"`, 2<<20) // 4 MiB: 8 MiB escaped, 5.3 MiB in base64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `"`+quotes+`"`)
	})
	res, err := newBuffered(h).invoke(context.Background(), events.APIGatewayV2HTTPRequest{RawPath: "/",
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/"}}})
	require.NoError(t, err)
	assert.True(t, res.IsBase64Encoded)
	assert.LessOrEqual(t, ResponsePayload(res), MaxResponsePayload)

	a := get(t, serve(t, h))
	require.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, `"`+quotes+`"`, string(a.body))

	plain := smallest(events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: `[{"id":"a","name":"b"}]`})
	assert.False(t, plain.IsBase64Encoded)
}

// TestRequestLimit: a request whose event is over MaxRequestPayload is answered API Gateway's
// 413 and the function never runs; a binary body counts base64-encoded, so a protobuf body
// that a JSON body of the same size would fit is refused.
func TestRequestLimit(t *testing.T) {
	ran := 0
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran++
		body, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		_, _ = fmt.Fprintf(w, "%d bytes", len(body))
	}))
	post := func(contentType string, body []byte) answer {
		req, err := http.NewRequest("POST", url+"/v1/traces", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentType)
		return do(t, req)
	}
	size := 4_900_000 // 4.9 MB: 6.5 MB in base64
	a := post("application/json", bytes.Repeat([]byte("a"), size))
	assert.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Equal(t, fmt.Sprintf("%d bytes", size), string(a.body), "the handler read the whole body")
	assert.Equal(t, 1, ran)

	a = post("application/x-protobuf", bytes.Repeat([]byte("a"), size))
	assert.Equal(t, http.StatusRequestEntityTooLarge, a.status)
	assert.Equal(t, "Request Entity Too Large", gatewayMessage(t, a))
	assert.Equal(t, 1, ran, "the function did not run")

	a = post("application/json", bytes.Repeat([]byte("a"), MaxRequestPayload))
	assert.Equal(t, http.StatusRequestEntityTooLarge, a.status, "the body alone fills the event")
	assert.Equal(t, 1, ran)

	t.Run("the event at the limit is served", func(t *testing.T) {
		req := httptest.NewRequest("POST", "/v1/traces", nil)
		req.Header.Set("Content-Type", "application/json")
		overhead := RequestPayload(Event(req, []byte("x"))) - 1
		assert.Equal(t, MaxRequestPayload, RequestPayload(Event(req, bytes.Repeat([]byte("a"), MaxRequestPayload-overhead))))
	})
}

// TestFunctionErrors: a handler that writes nothing and one still running at its deadline fail
// the invocation: API Gateway's 500, and the late answer is not sent.
func TestFunctionErrors(t *testing.T) {
	a := get(t, serve(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	assert.Equal(t, http.StatusInternalServerError, a.status, "Lambda's adapter has no status to send")
	assert.Equal(t, "Internal Server Error", gatewayMessage(t, a))

	late := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // returns only once the deadline has passed
		_, _ = io.WriteString(w, "too late")
	})
	srv := httptest.NewServer(asDeployed(late, time.Millisecond))
	t.Cleanup(srv.Close)
	a = get(t, srv.URL)
	assert.Equal(t, http.StatusInternalServerError, a.status)
	assert.Equal(t, "Internal Server Error", gatewayMessage(t, a))
}

// TestAnswerAsSent: an answer reaches the client as API Gateway passes it on: status, headers,
// cookies, and a gzipped body decoded from the adapter's base64 into the bytes written.
func TestAnswerAsSent(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(strings.Repeat("page ", 1000)))
	require.NoError(t, zw.Close())
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html")
		h.Set("Content-Encoding", "gzip")
		h.Add("Set-Cookie", "a=1; Path=/")
		h.Add("Set-Cookie", "b=2; Path=/")
		h.Add("X-Many", "one")
		h.Add("X-Many", "two")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(gz.Bytes())
	}))
	a := get(t, url)
	assert.Equal(t, http.StatusCreated, a.status)
	assert.Equal(t, gz.Bytes(), a.body)
	assert.Equal(t, "gzip", a.header.Get("Content-Encoding"))
	assert.Equal(t, []string{"a=1; Path=/", "b=2; Path=/"}, a.header.Values("Set-Cookie"))
	assert.Equal(t, []string{"one,two"}, a.header.Values("X-Many"), "API Gateway joins a repeated header")
}

// TestStreamCut: a streamed answer is cut once it has sent MaxStreamedResponse bytes.
func TestStreamCut(t *testing.T) {
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	srv := httptest.NewServer(StreamingAsDeployed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range MaxStreamedResponse/len(chunk) + 1 {
			_, _ = w.Write(chunk)
		}
	})))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	assert.Error(t, err, "the stream ends cut")
	assert.LessOrEqual(t, len(body), MaxStreamedResponse)
}

// TestPayload: Payload is the payload Start returns for the same answer.
func TestPayload(t *testing.T) {
	for _, body := range [][]byte{[]byte(`{"a":"b"}`), bytes.Repeat([]byte(`\"`), 1000), {0x1f, 0x8b, 0xff}} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Vary", "Accept-Encoding")
			w.Header().Add("Vary", "Origin")
			_, _ = w.Write(body)
		})
		header := http.Header{"Content-Type": {"application/json"}, "Set-Cookie": {"a=1"}, "Vary": {"Accept-Encoding", "Origin"}}
		assert.Equal(t, payloadOf(t, h), Payload(http.StatusOK, header, body), "%q", body)
	}
}
