package stack_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/webtest"
)

// The sample events of every function carry this key of this project (events/*/README.md).
const sampleProjectID = webtest.SampleProjectID

// mcpAnswer is a JSON-RPC answer of the tool server.
type mcpAnswer struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// mcpEvents are events/mcp in the order they are sent, with the status each answers and the
// check of its body.
var mcpEvents = []struct {
	file   string
	status int
	check  func(t *testing.T, body []byte)
}{
	{"initialize.json", 200, func(t *testing.T, body []byte) {
		var init struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"serverInfo"`
			Capabilities struct {
				Tools json.RawMessage `json:"tools"`
			} `json:"capabilities"`
		}
		decodeResult(t, body, 1, &init)
		assert.Equal(t, "2025-06-18", init.ProtocolVersion, "the version the client asked for")
		assert.Equal(t, "plume", init.ServerInfo.Name)
		assert.Equal(t, mcpserver.Version, init.ServerInfo.Version)
		assert.NotEmpty(t, init.Capabilities.Tools)
	}},
	{"tools-list.json", 200, checkToolsList(2)},
	{"call-list-prompts.json", 200, func(t *testing.T, body []byte) {
		var res struct {
			IsError           bool                        `json:"isError"`
			StructuredContent mcpserver.ListPromptsOutput `json:"structuredContent"`
		}
		decodeResult(t, body, 3, &res)
		require.False(t, res.IsError, "body: %s", body)
		require.Len(t, res.StructuredContent.Prompts, 1)
		assert.Equal(t, "support-bot", res.StructuredContent.Prompts[0].Slug)
		assert.Equal(t, sampleProjectID, res.StructuredContent.Prompts[0].ProjectID)
	}},
	{"unauthenticated.json", 401, func(t *testing.T, body []byte) {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &e), "body: %s", body)
		assert.Equal(t, "unauthenticated", e.Error.Code, "the API's error shape, before the MCP layer")
	}},
	{"function-url-tools-list.json", 200, checkToolsList(5)},
}

// checkToolsList checks a tools/list answer: list-prompts among the tools, read-only, with its
// schemas.
func checkToolsList(id int) func(t *testing.T, body []byte) {
	return func(t *testing.T, body []byte) {
		var list struct {
			Tools []struct {
				Name         string          `json:"name"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
				Annotations  struct {
					ReadOnlyHint bool `json:"readOnlyHint"`
				} `json:"annotations"`
			} `json:"tools"`
		}
		decodeResult(t, body, id, &list)
		for _, tl := range list.Tools {
			if tl.Name == "list-prompts" {
				assert.True(t, tl.Annotations.ReadOnlyHint)
				assert.NotEmpty(t, tl.InputSchema)
				assert.NotEmpty(t, tl.OutputSchema)
				return
			}
		}
		t.Errorf("tools/list has no list-prompts: %s", body)
	}
}

// decodeResult decodes the result of a JSON-RPC answer with id into v.
func decodeResult(t *testing.T, body []byte, id int, v any) {
	t.Helper()
	var a mcpAnswer
	require.NoError(t, json.Unmarshal(body, &a), "body: %s", body)
	require.Nil(t, a.Error, "body: %s", body)
	assert.Equal(t, id, a.ID)
	require.NoError(t, json.Unmarshal(a.Result, v), "result: %s", a.Result)
}

// checkMCPResponse checks the API Gateway answer to one of mcpEvents.
func checkMCPResponse(t *testing.T, status int, check func(*testing.T, []byte), res events.APIGatewayV2HTTPResponse) {
	t.Helper()
	body := []byte(res.Body)
	if res.IsBase64Encoded {
		var err error
		body, err = base64.StdEncoding.DecodeString(res.Body)
		require.NoError(t, err)
	}
	require.Equal(t, status, res.StatusCode, "body: %s", body)
	assert.Contains(t, res.Headers["Content-Type"], "application/json", "JSON answers, not an event stream")
	check(t, body)
}

// newMCPStack is the API with the sample events' project, key and prompt.
func newMCPStack(t *testing.T) *apitest.API {
	t.Helper()
	api := apitest.New(t, apitest.Options{})
	api.EnsurePrompt(t, webtest.SampleTenant(t, api.Auth), "support-bot", "You help with {{product}}.")
	return api
}

func readMCPEvent(t *testing.T, file string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "events", "mcp", file))
	require.NoError(t, err)
	return raw
}

// TestMCPSampleEventsThroughAdapter feeds every event of events/mcp through the Lambda adapter
// MCPFunction's main uses, to the handler its main builds.
func TestMCPSampleEventsThroughAdapter(t *testing.T) {
	api := newMCPStack(t)
	h, err := mcpserver.Function.Build(api.Env)
	require.NoError(t, err)
	adapter := httpadapter.NewV2(h)
	for _, ev := range mcpEvents {
		t.Run(ev.file, func(t *testing.T) {
			var req events.APIGatewayV2HTTPRequest
			require.NoError(t, json.Unmarshal(readMCPEvent(t, ev.file), &req))
			res, err := adapter.ProxyWithContext(context.Background(), req)
			require.NoError(t, err)
			checkMCPResponse(t, ev.status, ev.check, res)
		})
	}
}

// TestMCPBootstrap: the MCP tool server's real bootstrap, built as its Makefile target builds it,
// under the Runtime API emulator against DynamoDB Local and the embedded S3, answers initialize,
// tools/list and a tools/call, through API Gateway's route and through the Function URL, and
// refuses a request without a key.
func TestMCPBootstrap(t *testing.T) {
	api := newMCPStack(t)
	pkg := mainPackages(t)["MCPFunction"]
	require.NotEmpty(t, pkg, "the Makefile has no build-MCPFunction target")
	bootstrap(t, pkg) // built before the deadline starts: a build on a busy machine is slow
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	emu := start(t, ctx, pkg, functionEnv(t, api, "TABLE_NAME="+api.TableName))
	for _, ev := range mcpEvents {
		t.Run(ev.file, func(t *testing.T) {
			raw, err := emu.Invoke(ctx, readMCPEvent(t, ev.file))
			require.NoError(t, err, "MCPFunction did not start or failed the invocation")
			var res events.APIGatewayV2HTTPResponse
			require.NoError(t, json.Unmarshal(raw, &res), "response: %s", raw)
			checkMCPResponse(t, ev.status, ev.check, res)
		})
	}
}
