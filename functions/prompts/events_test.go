package prompts_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sample events (events/prompts) carry this key of this project.
const (
	sampleProjectID = webtest.SampleProjectID
	sampleKey       = webtest.SampleKey
)

// sampleEvents lists events/prompts in the order they are sent, with the status and version
// each must answer (version 0: not checked).
var sampleEvents = []struct {
	file    string
	status  int
	version int
}{
	{"healthz.json", 200, 0},
	{"unauthenticated.json", 401, 0},
	{"ensure.json", 200, 1},
	{"ensure-base64.json", 200, 1},
	{"get-prompt.json", 200, 1},
	{"latest.json", 200, 1},
	{"pin.json", 200, 1},
	{"get-production.json", 200, 1},
	{"list-prompts.json", 200, 0},
}

// TestSampleEventsThroughAdapter feeds every event of events/prompts through the same Lambda
// adapter the function uses.
func TestSampleEventsThroughAdapter(t *testing.T) {
	api := newTestAPI(t)
	api.newTenant(t, sampleKey, sampleProjectID)
	adapter := httpadapter.NewV2(api.prompts)
	for _, ev := range sampleEvents {
		t.Run(ev.file, func(t *testing.T) {
			var req events.APIGatewayV2HTTPRequest
			raw, err := os.ReadFile(filepath.Join("..", "..", "events", "prompts", ev.file))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, &req))
			res, err := adapter.ProxyWithContext(context.Background(), req)
			require.NoError(t, err)
			CheckSampleResponse(t, ev.status, ev.version, res)
			assert.Equal(t, req.RequestContext.RequestID, res.Headers["X-Request-Id"], "the API Gateway request id is the request id")
		})
	}
}

// CheckSampleResponse checks an API Gateway v2 response to a sample event. The end-to-end test
// of the real bootstrap uses it too.
func CheckSampleResponse(t *testing.T, status, version int, res events.APIGatewayV2HTTPResponse) {
	t.Helper()
	body := res.Body
	if res.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(body)
		require.NoError(t, err)
		body = string(b)
	}
	require.Equal(t, status, res.StatusCode, "body: %s", body)
	assert.Contains(t, res.Headers["Content-Type"], "application/json")
	if version == 0 {
		return
	}
	var got struct {
		Version int `json:"version"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, version, got.Version)
}
