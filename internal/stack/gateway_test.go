package stack_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// gatedWriter holds a streamed answer back before its gated-th event until open is closed:
// a provider still sending, whose first events a client must have received by then.
type gatedWriter struct {
	http.ResponseWriter
	events int
	gated  int
	open   <-chan struct{}
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("data:")) {
		if w.events++; w.events == w.gated {
			<-w.open
		}
	}
	return w.ResponseWriter.Write(p)
}

func (w *gatedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestGatewayStreamsUnderTheEmulator runs the gateway's real bootstrap under the Runtime API
// emulator with response streaming, as a Function URL in RESPONSE_STREAM mode invokes it: the
// client receives the first chunks of a streamed answer while the provider is still sending
// (the provider sends its third event only once the client holds a content chunk, so an answer
// held back anywhere until it is whole would never arrive), and an API Gateway event of the
// same function is answered buffered.
func TestGatewayStreamsUnderTheEmulator(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	const providerKey = "sk-gateway-stream"
	fake := fakemodel.New(fakemodel.WithAPIKey(providerKey), fakemodel.WithRules(fakemodel.Rule{
		Reply: fakemodel.Reply{Text: "one two three four five"},
	}))
	open := make(chan struct{})
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fake.ServeHTTP(&gatedWriter{ResponseWriter: w, gated: 3, open: open}, r)
	}))
	defer provider.Close()
	var opened bool
	defer func() {
		if !opened {
			close(open) // a failed test must not leave the provider's handler waiting
		}
	}()

	emu := start(t, t.Context(), mainPackages(t)["GatewayFunction"], functionEnv(t, api,
		"TABLE_NAME="+api.TableName, "OPENAI_BASE_URL="+provider.URL+"/v1", "OPENAI_API_KEY="+providerKey))

	stream, err := emu.InvokeStream(t.Context(), gatewayEvent(t, api.A.Key, "abc123.lambda-url.us-east-1.on.aws", true))
	require.NoError(t, err)
	defer stream.Close()
	res, err := stream.HTTPResponse()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))

	var content strings.Builder
	lines := bufio.NewScanner(res.Body)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &chunk), "chunk %s", data)
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" && !opened {
			opened = true
			close(open) // a content chunk is here: the provider may go on
		}
		if len(chunk.Choices) > 0 {
			content.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	require.NoError(t, lines.Err())
	assert.True(t, opened, "a content chunk arrived")
	assert.Equal(t, "one two three four five", content.String())

	// The same function behind API Gateway answers buffered.
	raw, err := emu.Invoke(t.Context(), gatewayEvent(t, api.A.Key, "api123.execute-api.us-east-1.amazonaws.com", false))
	require.NoError(t, err)
	var buffered events.APIGatewayV2HTTPResponse
	require.NoError(t, json.Unmarshal(raw, &buffered))
	require.Equal(t, http.StatusOK, buffered.StatusCode, "body: %s", buffered.Body)
	assert.Contains(t, buffered.Body, `"one two three four five"`)
}

// gatewayEvent is a payload 2.0 event of POST /v1/chat/completions with key, through domain.
func gatewayEvent(t *testing.T, key, domain string, stream bool) []byte {
	t.Helper()
	body, err := json.Marshal(map[string]any{"model": "openai/gpt-4o-mini", "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": "count to five"}}})
	require.NoError(t, err)
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "POST /v1/chat/completions", RawPath: "/v1/chat/completions", Body: string(body),
		Headers: map[string]string{"authorization": "Bearer " + key, "content-type": "application/json"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "gateway-stream-test", DomainName: domain, Stage: "$default", RouteKey: "POST /v1/chat/completions",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/v1/chat/completions", Protocol: "HTTP/1.1"},
		},
	}
	raw, err := json.Marshal(ev)
	require.NoError(t, err)
	return raw
}
