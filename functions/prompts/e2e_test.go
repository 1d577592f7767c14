package prompts_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/lambdaemu/emutest"
)

// TestBootstrapEndToEnd builds the real PromptsFunction bootstrap (for this host), runs it
// under the Runtime API emulator against DynamoDB Local, and invokes it with every sample
// event of events/prompts.
func TestBootstrapEndToEnd(t *testing.T) {
	api := newTestAPI(t) // creates the table
	api.newTenant(t, sampleKey, sampleProjectID)
	tableName := api.tableName

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	emu := emutest.Start(t, ctx, "./lambda", []string{
		"TABLE_NAME=" + tableName,
		"AWS_ENDPOINT_URL_DYNAMODB=" + ddbtest.Endpoint(t),
		"AWS_ACCESS_KEY_ID=" + blobtest.AccessKeyFor(t), "AWS_SECRET_ACCESS_KEY=" + blobtest.SecretKey, "AWS_REGION=us-east-1",
		"LOG_LEVEL=debug",
	})

	for _, ev := range sampleEvents {
		t.Run(ev.file, func(t *testing.T) {
			payload, err := os.ReadFile(filepath.Join("..", "..", "events", "prompts", ev.file))
			require.NoError(t, err)
			raw, err := emu.Invoke(ctx, payload)
			require.NoError(t, err)
			var res events.APIGatewayV2HTTPResponse
			require.NoError(t, json.Unmarshal(raw, &res), "response: %s", raw)
			CheckSampleResponse(t, ev.status, ev.version, res)
		})
	}
}
