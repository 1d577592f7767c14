package tracing_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSampleEventsThroughAdapter feeds events/tracing through the Lambda adapter of each
// function's handler, as the functions receive them from API Gateway.
func TestSampleEventsThroughAdapter(t *testing.T) {
	api := newTestAPI(t)
	ctx := context.Background()
	webtest.SampleTenant(t, api.auth)
	api.clock.Set(time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))

	ingest, query := httpadapter.NewV2(api.ingest), httpadapter.NewV2(api.query)
	send := func(adapter *httpadapter.HandlerAdapterV2, file string) []map[string]any {
		raw, err := os.ReadFile(filepath.Join("..", "..", "events", "tracing", file))
		require.NoError(t, err)
		var ev events.APIGatewayV2HTTPRequest
		require.NoError(t, json.Unmarshal(raw, &ev))
		res, err := adapter.ProxyWithContext(ctx, ev)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, res.Body)
		assert.Equal(t, ev.RequestContext.RequestID, res.Headers["X-Request-Id"])
		var out []map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.Body), &out))
		return out
	}
	stored := send(ingest, "post-spans.json")
	require.Len(t, stored, 2)
	assert.Equal(t, "price_table", stored[0]["cost_source"])
	assert.Len(t, send(query, "get-spans-of-trace.json"), 2)
	traces := send(query, "get-traces.json")
	require.Len(t, traces, 1)
	assert.EqualValues(t, 2, traces[0]["span_count"])
	assert.Equal(t, "handle_request", traces[0]["name"])
	sessions := send(query, "get-sessions.json")
	require.Len(t, sessions, 1)
	assert.Equal(t, "Support chat", sessions[0]["name"])
	assert.EqualValues(t, 1, sessions[0]["trace_count"])
}
