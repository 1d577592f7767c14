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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/lambdaemu"
	"github.com/plumehq/plume/shared/lambdaemu/emutest"
)

// TestBootstrapsEndToEnd builds the real TracingIngestFunction and TracingQueryFunction
// bootstraps (for this host), runs them under the Runtime API emulator against DynamoDB Local
// and the embedded S3 (SigV4 checked), and invokes them with the events of events/tracing.
func TestBootstrapsEndToEnd(t *testing.T) {
	api := newTestAPI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	webtest.SampleTenant(t, api.auth)

	env := []string{
		"TABLE_NAME=" + api.table, "BUCKET_NAME=plume-test",
		"AWS_ENDPOINT_URL_DYNAMODB=" + ddbtest.Endpoint(t), "AWS_ENDPOINT_URL_S3=" + api.s3URL,
		"AWS_ACCESS_KEY_ID=" + blobtest.AccessKeyFor(t), "AWS_SECRET_ACCESS_KEY=" + blobtest.SecretKey,
		"AWS_REGION=us-east-1", "LOG_LEVEL=debug",
	}
	start := func(pkg string) *lambdaemu.Emulator { return emutest.Start(t, ctx, pkg, env) }
	ingest, query := start("./ingest"), start("./query")
	invoke := func(emu *lambdaemu.Emulator, file string) []map[string]any {
		payload, err := os.ReadFile(filepath.Join("..", "..", "events", "tracing", file))
		require.NoError(t, err)
		raw, err := emu.Invoke(ctx, payload)
		require.NoError(t, err)
		var res events.APIGatewayV2HTTPResponse
		require.NoError(t, json.Unmarshal(raw, &res))
		require.Equal(t, http.StatusOK, res.StatusCode, res.Body)
		var out []map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.Body), &out))
		return out
	}
	assert.Len(t, invoke(ingest, "post-spans.json"), 2)
	api.whole.ApplyStream(t) // RollupFunction's work, a second later in a deployment
	spans := invoke(query, "get-spans-of-trace.json")
	require.Len(t, spans, 2, "the query function reads back what the ingest function wrote")
	for _, sp := range spans {
		assert.NotEmpty(t, sp["started_at"])
	}
	traces := invoke(query, "get-traces.json")
	require.Len(t, traces, 1)
	assert.EqualValues(t, 2, traces[0]["span_count"])
	assert.Len(t, invoke(query, "get-sessions.json"), 1)
}
