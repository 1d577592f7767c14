package signals_test

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

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/lambdaemu/emutest"
)

// TestBootstrapEndToEnd builds the real SignalsFunction bootstrap (for this host), runs it
// under the Runtime API emulator against DynamoDB Local, and invokes it with the events of
// events/signals: the TypeScript SDK's /signals/ (its trailing slash as API Gateway passes it),
// the Python SDK's bulk and choice, then the report.
func TestBootstrapEndToEnd(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const span = "7d7a3b7e-53cf-4fd8-9f5e-3f3f0a0b0c0d"
	webtest.SampleTenant(t, srv.Auth)

	emu := emutest.Start(t, ctx, "./lambda", []string{
		"TABLE_NAME=" + srv.TableName, "BUCKET_NAME=plume-test",
		"AWS_ENDPOINT_URL_DYNAMODB=" + ddbtest.Endpoint(t), "AWS_ENDPOINT_URL_S3=" + srv.S3URL,
		"AWS_ACCESS_KEY_ID=" + blobtest.AccessKeyFor(t), "AWS_SECRET_ACCESS_KEY=" + blobtest.SecretKey,
		"AWS_REGION=us-east-1", "LOG_LEVEL=debug",
	})
	invoke := func(file string, out any) {
		t.Helper()
		payload, err := os.ReadFile(filepath.Join("..", "..", "events", "signals", file))
		require.NoError(t, err)
		raw, err := emu.Invoke(ctx, payload)
		require.NoError(t, err)
		var res events.APIGatewayV2HTTPResponse
		require.NoError(t, json.Unmarshal(raw, &res))
		require.Equal(t, http.StatusOK, res.StatusCode, res.Body)
		require.NoError(t, json.Unmarshal([]byte(res.Body), out))
	}
	var one, bulk api.SignalsAnswer
	invoke("post-signal-slash.json", &one)
	assert.Equal(t, 1, one.ProcessedCount)
	invoke("post-signals-bulk.json", &bulk)
	assert.Equal(t, 2, bulk.ProcessedCount)
	var choice api.ABChoiceAnswer
	invoke("ab-choice.json", &choice)
	assert.Equal(t, "running", choice.TestStatus)
	require.NotNil(t, choice.ABChoiceID)
	var rep api.ABReport
	invoke("ab-test-report.json", &rep)
	require.Len(t, rep.Results, 2)
	assert.Equal(t, int64(1), rep.Results[1].Choices)
	assert.Len(t, rep.Results[1].Signals, 2, "the span's signals, sent before its choice")
}
