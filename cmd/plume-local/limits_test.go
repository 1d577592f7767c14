package main

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/lambdahttp"
)

// TestPlumeLocalAnswersAsADeployment: plume-local answers what API Gateway and Lambda answer
// where their limits decide. A function that answers 7 MB gets API Gateway's 500 (Lambda
// refuses the response payload) where a plain server would pass it on, one that answers just
// under the limit reaches the client whole, and a request whose event is over 6 MB gets API
// Gateway's 413 before any function runs, as does a protobuf body that only base64 makes too
// large.
func TestPlumeLocalAnswersAsADeployment(t *testing.T) {
	large := app.Function{Name: "LargeAnswerFunction", Routes: []string{"GET /test/large"},
		Build: func(*app.Env) (http.Handler, error) {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := 7 << 20
				if r.URL.Query().Get("size") == "fits" {
					n = 6<<20 - 1000 // the rest of the payload is the envelope: status, headers, keys
				}
				w.Header().Set("Content-Type", "text/plain")
				_, _ = io.WriteString(w, strings.Repeat("a", n))
			}), nil
		}}
	before := served
	served = append(slices.Clone(served), large)
	t.Cleanup(func() { served = before })
	base, _ := startLocal(t, nil)

	get := func(path string) (int, []byte) {
		res, err := http.Get(base + path)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, body
	}
	gateway := func(body []byte) string {
		var m struct{ Message string }
		require.NoError(t, json.Unmarshal(body, &m), "API Gateway's own answer: %.200s", body)
		return m.Message
	}

	status, body := get("/test/large")
	assert.Equal(t, http.StatusInternalServerError, status, "7 MB is past Lambda's response payload")
	assert.Equal(t, "Internal Server Error", gateway(body))

	status, body = get("/test/large?size=fits")
	assert.Equal(t, http.StatusOK, status)
	assert.Len(t, body, 6<<20-1000, "an answer under the payload limit reaches the client whole")

	post := func(contentType string, size int) (int, []byte) {
		req, err := http.NewRequest("POST", base+"/spans", strings.NewReader(strings.Repeat("a", size)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentType)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, body
	}
	status, body = post("application/json", lambdahttp.MaxRequestPayload+1)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.Equal(t, "Request Entity Too Large", gateway(body))
	status, body = post("application/x-protobuf", lambdahttp.MaxBinaryBody+100_000)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status, "base64 in the event: past 6 MB")
	assert.Equal(t, "Request Entity Too Large", gateway(body))
	status, body = post("application/json", 2<<20)
	assert.Equal(t, http.StatusUnauthorized, status, "a body the event carries reaches the function: %.200s", body)
}
