package stack_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/lambdaemu"
)

// TestDashboardGzipThroughLambda runs the real DashboardFunction bootstrap under the Runtime
// API emulator and GETs the sign-in page and the style sheet with and without
// Accept-Encoding: gzip, as API Gateway HTTP APIs send them. A gzipped answer leaves the
// function base64-encoded with isBase64Encoded true (the adapter base64-encodes a body that is
// not UTF-8, and a gzip stream never is), which API Gateway decodes into the bytes the browser
// gunzips; the plain answer is text.
func TestDashboardGzipThroughLambda(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	pkg := mainPackages(t)["DashboardFunction"]
	bootstrap(t, pkg) // built before the deadline starts: a build on a busy machine is slow
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	emu := start(t, ctx, pkg, functionEnv(t, api, "TABLE_NAME="+api.TableName))

	login := invokeDashboard(t, ctx, emu, "/ui/login", "")
	require.Equal(t, 200, login.StatusCode, "body: %s", login.Body)
	assert.False(t, login.IsBase64Encoded)
	assert.Empty(t, login.Headers["Content-Encoding"])
	css := regexp.MustCompile(`href="(/ui/assets/app\.[0-9a-f]+\.css)"`).FindStringSubmatch(login.Body)
	require.NotNil(t, css, "no style sheet in %s", login.Body)

	gzLogin := invokeDashboard(t, ctx, emu, "/ui/login", "gzip, deflate, br, zstd")
	require.Equal(t, 200, gzLogin.StatusCode)
	assert.Equal(t, "gzip", gzLogin.Headers["Content-Encoding"])
	assert.True(t, gzLogin.IsBase64Encoded)
	assert.Contains(t, string(gunzipBase64(t, gzLogin)), `name="api_key"`)

	plain := invokeDashboard(t, ctx, emu, css[1], "")
	require.Equal(t, 200, plain.StatusCode)
	assert.False(t, plain.IsBase64Encoded)
	assert.Empty(t, plain.Headers["Content-Encoding"])
	gz := invokeDashboard(t, ctx, emu, css[1], "gzip")
	require.Equal(t, 200, gz.StatusCode)
	assert.Equal(t, "gzip", gz.Headers["Content-Encoding"])
	assert.Equal(t, "Accept-Encoding", gz.Headers["Vary"])
	assert.True(t, gz.IsBase64Encoded)
	assert.Equal(t, plain.Body, string(gunzipBase64(t, gz)), "the gzipped style sheet is the style sheet")
}

// invokeDashboard invokes the dashboard with an API Gateway HTTP API event for GET path, with
// the accept-encoding header acceptEncoding when it is not "".
func invokeDashboard(t *testing.T, ctx context.Context, emu *lambdaemu.Emulator, path, acceptEncoding string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	headers := map[string]string{}
	if acceptEncoding != "" {
		headers["accept-encoding"] = acceptEncoding
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "ANY /ui/{proxy+}", RawPath: path, Headers: headers,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "gzip-test", Stage: "$default", RouteKey: "ANY /ui/{proxy+}",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: path, Protocol: "HTTP/1.1"},
		},
	}
	event, err := json.Marshal(ev)
	require.NoError(t, err)
	raw, err := emu.Invoke(ctx, event)
	require.NoError(t, err)
	var res events.APIGatewayV2HTTPResponse
	require.NoError(t, json.Unmarshal(raw, &res), "response: %s", raw)
	return res
}

// gunzipBase64 is res's body as API Gateway sends it (base64-decoded), gunzipped.
func gunzipBase64(t *testing.T, res events.APIGatewayV2HTTPResponse) []byte {
	t.Helper()
	body, err := base64.StdEncoding.DecodeString(res.Body)
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	out, err := io.ReadAll(zr)
	require.NoError(t, err)
	return out
}
