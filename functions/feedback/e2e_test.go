package feedback_test

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

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/lambdaemu"
	"github.com/plumehq/plume/shared/lambdaemu/emutest"
)

// TestBootstrapsEndToEnd builds the real JudgesFunction and FeedbackFunction bootstraps (for
// this host), runs them under the Runtime API emulator against DynamoDB Local and the embedded
// S3, and invokes them with the events of events/feedback.
func TestBootstrapsEndToEnd(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const span = "7d7a3b7e-53cf-4fd8-9f5e-3f3f0a0b0c0d"
	sample := webtest.SampleTenant(t, api.Auth)
	key := sample.Key
	vid := api.EnsurePrompt(t, sample, "support-bot", "You are a support bot.")
	api.MustDo(t, "POST", "/spans", key, []any{apitest.LLMSpan(span, "0f8fad5b-d9cb-469f-a165-70867728950e", "", "support-bot", vid, "Where is my refund?", "It is on its way.", time.Now().Add(-time.Minute))})

	env := []string{
		"TABLE_NAME=" + api.TableName, "BUCKET_NAME=plume-test",
		"AWS_ENDPOINT_URL_DYNAMODB=" + ddbtest.Endpoint(t), "AWS_ENDPOINT_URL_S3=" + api.S3URL,
		"AWS_ACCESS_KEY_ID=" + blobtest.AccessKeyFor(t), "AWS_SECRET_ACCESS_KEY=" + blobtest.SecretKey,
		"AWS_REGION=us-east-1", "LOG_LEVEL=debug",
	}
	start := func(pkg string) *lambdaemu.Emulator { return emutest.Start(t, ctx, pkg, env) }
	judges, feedback := start("../judges/lambda"), start("./lambda")
	invoke := func(emu *lambdaemu.Emulator, file string) map[string]any {
		payload, err := os.ReadFile(filepath.Join("..", "..", "events", "feedback", file))
		require.NoError(t, err)
		raw, err := emu.Invoke(ctx, payload)
		require.NoError(t, err)
		var res events.APIGatewayV2HTTPResponse
		require.NoError(t, json.Unmarshal(raw, &res))
		require.Equal(t, http.StatusOK, res.StatusCode, res.Body)
		var out map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.Body), &out))
		return out
	}
	j := invoke(judges, "create-judge.json")
	assert.Equal(t, 7.0, j["pass_threshold"])
	assert.Len(t, j["criteria"], 2)
	f := invoke(feedback, "post-feedback.json")
	assert.Equal(t, vid, f["prompt_version_id"])
	assert.Equal(t, "sample-user", f["created_by"].(map[string]any)["id"])
	u := invoke(feedback, "unified-span.json")
	assert.Equal(t, 1.0, u["summary"].(map[string]any)["human_feedback_count"])
	l := invoke(feedback, "create-link.json")
	assert.Regexp(t, `^https://abc123\.execute-api\.us-east-1\.amazonaws\.com/f/plf_`, l["url"])
}
