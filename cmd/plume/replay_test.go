package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/evaluator"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/awstest"
	"github.com/plumehq/plume/shared/awsjson"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/deadletter"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// TestReplayEvaluations: the dead letters of the judge runner are evaluated again by the CLI,
// with EvaluatorFunction's code: a message is deleted once its event succeeded, stays when it
// fails again, and one that holds no event is reported and kept.
//
// The command reaches S3 and SQS through the AWS SDK's configuration from the process's
// environment, as the functions do, so this test sets it (and cannot run in parallel).
func TestReplayEvaluations(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	fake := fakemodeltest.Start(t, fakemodel.WithRules(fakemodel.Rule{Reply: fakemodel.Reply{Status: 500, RetryAfter: time.Millisecond}}))
	queueURL := awstest.NewQueue(t, "replay")
	queue := deadletter.New(awsjson.New(awstest.Config(t), awsjson.SQS), queueURL)
	t.Setenv("AWS_ENDPOINT_URL_S3", api.S3URL)
	t.Setenv("AWS_ENDPOINT_URL_SQS", awstest.Endpoint(t))
	t.Setenv("AWS_ACCESS_KEY_ID", blobtest.AccessKeyFor(t))
	t.Setenv("AWS_SECRET_ACCESS_KEY", blobtest.SecretKey)
	t.Setenv("AWS_REGION", "us-east-1")

	judgeID := api.MustDo(t, "POST", "/projects/"+api.A.ProjectID+"/judges", api.A.Key,
		map[string]any{"name": "helpful", "template": "Helpful?\n{{input}}\n{{output}}"}).Map(t)["id"].(string)
	var keys []string
	api.Blobs.OnCreated(func(key string) { keys = append(keys, key) })
	spanID := uuid.NewString()
	api.MustDo(t, "POST", "/spans", api.A.Key, []any{apitest.LLMSpan(spanID, uuid.NewString(), "", "support", "", "q", "a", time.Now().Add(-time.Minute))})
	require.Len(t, keys, 1)
	event, err := evaluator.ObjectEvent("plume-test", keys[0], time.Now())
	require.NoError(t, err)
	require.NoError(t, queue.Send(context.Background(), deadletter.Record{
		Version: deadletter.Version, Timestamp: time.Now(), RequestPayload: event,
		RequestContext:  deadletter.RequestContext{RequestID: uuid.NewString(), Condition: deadletter.ConditionRetriesExhausted, ApproximateInvokeCount: 3},
		ResponseContext: deadletter.ResponseContext{StatusCode: 200, FunctionError: deadletter.FunctionErrorUnhandled},
	}))

	h := &harness{t: t, client: ddbtest.Client(t, nil), table: api.TableName, env: map[string]string{
		"TABLE_NAME": api.TableName, "BUCKET_NAME": "plume-test", "AWS_ENDPOINT_URL_S3": api.S3URL,
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "OPENAI_API_KEY": "sk-test", "PLUME_JUDGE_MODEL": "openai/gpt-4o-mini",
	}}
	evaluated := func() bool {
		res := api.MustDo(t, "GET", fmt.Sprintf("/projects/%s/spans/%s/evaluations", api.A.ProjectID, spanID), api.A.Key, nil)
		return len(res.Map(t)["evaluations"].([]any)) == 1
	}

	// The provider is still down: the event fails again and stays, visible again after 1 s.
	r := h.run("admin", "replay-evaluations", "--queue-url", queueURL, "--visibility-timeout", "1s", "--output", "json")
	assert.Equal(t, exitRemote, r.code, "%s", r)
	var got struct{ Received, Replayed, Failed, Skipped int }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	assert.Equal(t, 1, got.Failed)
	assert.False(t, evaluated())

	// Back up: once the message is visible again, the replay completes it and deletes it.
	fake.SetRules()
	before := fake.Count()
	require.Eventually(t, func() bool {
		r = h.run("admin", "replay-evaluations", "--queue-url", queueURL)
		return r.code == exitOK && evaluated()
	}, time.Minute, 100*time.Millisecond, "%s", r)
	assert.Contains(t, r.stdout, "replayed 1, failed 0")
	assert.Equal(t, 1, fake.Count()-before, "one model call for the replayed span")
	assert.Equal(t, 1.0, api.MustDo(t, "GET", "/projects/"+api.A.ProjectID+"/judges/"+judgeID, api.A.Key, nil).Map(t)["evaluation_count"])

	r = h.run("admin", "replay-evaluations", "--queue-url", queueURL)
	assert.Equal(t, exitOK, r.code, "%s", r)
	assert.Contains(t, r.stdout, "Received 0", "the replayed message was deleted")
}

// TestReplayEvaluationsUsage: the queue and the bucket are required.
func TestReplayEvaluationsUsage(t *testing.T) {
	h := newHarness(t)
	r := h.run("admin", "replay-evaluations", "--bucket", "b")
	assert.Equal(t, exitUsage, r.code, "%s", r)
	assert.Contains(t, r.stderr, "--queue-url")
	r = h.run("admin", "replay-evaluations", "--queue-url", "http://127.0.0.1:1/q")
	assert.Equal(t, exitUsage, r.code, "%s", r)
	assert.Contains(t, r.stderr, "--bucket")
}
