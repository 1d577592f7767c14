package awsjson_test

import (
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/awstest"
	"github.com/plumehq/plume/shared/awsjson"
)

// countingHTTP counts the requests it sends, by X-Amz-Target.
type countingHTTP struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *countingHTTP) Do(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[r.Header.Get("X-Amz-Target")]++
	c.mu.Unlock()
	return http.DefaultClient.Do(r)
}

// motoConfig is moto's configuration with its requests counted.
func motoConfig(t *testing.T) (aws.Config, *countingHTTP) {
	cfg := awstest.Config(t)
	counter := &countingHTTP{}
	cfg.HTTPClient = counter
	return cfg, counter
}

// TestSQSRoundTrip: a message sent, received and deleted through SQS's JSON protocol, one
// request each; the SDK's client (the oracle) sees the queue empty after.
func TestSQSRoundTrip(t *testing.T) {
	cfg, counter := motoConfig(t)
	client := awsjson.New(cfg, awsjson.SQS)
	url := awstest.NewQueue(t, "awsjson")

	var sent struct{ MessageId string }
	require.NoError(t, client.Call(t.Context(), "SendMessage", map[string]any{"QueueUrl": url, "MessageBody": `{"héllo": "wörld"}`}, &sent))
	assert.NotEmpty(t, sent.MessageId)
	var got struct {
		Messages []struct{ MessageId, ReceiptHandle, Body string }
	}
	require.NoError(t, client.Call(t.Context(), "ReceiveMessage", map[string]any{"QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 1}, &got))
	require.Len(t, got.Messages, 1)
	assert.Equal(t, sent.MessageId, got.Messages[0].MessageId)
	assert.Equal(t, `{"héllo": "wörld"}`, got.Messages[0].Body)
	require.NoError(t, client.Call(t.Context(), "DeleteMessage", map[string]any{"QueueUrl": url, "ReceiptHandle": got.Messages[0].ReceiptHandle}, nil))

	left, err := awstest.SQS(t).GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	require.NoError(t, err)
	assert.Equal(t, "0", left.Attributes["ApproximateNumberOfMessages"])
	assert.Equal(t, "0", left.Attributes["ApproximateNumberOfMessagesNotVisible"])
	assert.Equal(t, map[string]int{"AmazonSQS.SendMessage": 1, "AmazonSQS.ReceiveMessage": 1, "AmazonSQS.DeleteMessage": 1}, counter.counts)
}

// TestSecretRoundTrip: GetSecretValue reads what the SDK's client wrote, in one request.
func TestSecretRoundTrip(t *testing.T) {
	cfg, counter := motoConfig(t)
	id := awstest.NewSecret(t, "awsjson", `{"OPENAI_API_KEY": "sk-1"}`)
	var out struct{ Name, SecretString string }
	require.NoError(t, awsjson.New(cfg, awsjson.SecretsManager).Call(t.Context(), "GetSecretValue", map[string]string{"SecretId": id}, &out))
	assert.Equal(t, id, out.Name)
	assert.Equal(t, `{"OPENAI_API_KEY": "sk-1"}`, out.SecretString)
	assert.Equal(t, map[string]int{"secretsmanager.GetSecretValue": 1}, counter.counts)
}

// TestPutEventsRoundTrip: an event put on a bus reaches the queue its rule targets.
func TestPutEventsRoundTrip(t *testing.T) {
	cfg, counter := motoConfig(t)
	bus, queueURL := awstest.NewBus(t, "awsjson", `{"source": ["plume-awsjson"]}`)
	var out struct {
		FailedEntryCount int
		Entries          []struct{ EventId, ErrorCode string }
	}
	in := map[string]any{"Entries": []map[string]any{{"EventBusName": bus, "Source": "plume-awsjson", "DetailType": "t", "Detail": `{"n": 1}`, "Time": 1796220191}}}
	require.NoError(t, awsjson.New(cfg, awsjson.EventBridge).Call(t.Context(), "PutEvents", in, &out))
	assert.Equal(t, 0, out.FailedEntryCount)
	require.Len(t, out.Entries, 1)
	assert.NotEmpty(t, out.Entries[0].EventId)

	got, err := awstest.SQS(t).ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: &queueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 2})
	require.NoError(t, err)
	require.Len(t, got.Messages, 1)
	assert.Contains(t, aws.ToString(got.Messages[0].Body), `"detail-type": "t"`)
	assert.Equal(t, map[string]int{"AWSEvents.PutEvents": 1}, counter.counts)
}

// TestErrorShape: a missing queue and a missing secret are typed errors that match
// ErrNotFound, sent once (a 4xx is not retried).
func TestErrorShape(t *testing.T) {
	tests := []struct {
		name   string
		svc    awsjson.Service
		op     string
		in     any
		code   string
		target string
	}{
		{"missing queue", awsjson.SQS, "SendMessage", map[string]string{"QueueUrl": awstest.Endpoint(t) + "/123456789012/no-such-queue", "MessageBody": "x"}, "QueueDoesNotExist", "AmazonSQS.SendMessage"},
		{"missing secret", awsjson.SecretsManager, "GetSecretValue", map[string]string{"SecretId": "no-such-secret-awsjson"}, "ResourceNotFoundException", "secretsmanager.GetSecretValue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, counter := motoConfig(t)
			err := awsjson.New(cfg, tt.svc).Call(t.Context(), tt.op, tt.in, nil)
			require.Error(t, err)
			var e *awsjson.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.code, e.Code)
			assert.True(t, e.StatusCode >= 400 && e.StatusCode < 500, "status %d", e.StatusCode) // AWS answers 400; moto 404 for a secret
			assert.NotEmpty(t, e.Message)
			assert.ErrorIs(t, err, awsjson.ErrNotFound)
			assert.NotErrorIs(t, err, awsjson.ErrThrottling)
			var apiErr smithy.APIError
			require.True(t, errors.As(err, &apiErr))
			assert.Equal(t, tt.code, apiErr.ErrorCode())
			assert.Equal(t, map[string]int{tt.target: 1}, counter.counts, "a 4xx is not retried")
		})
	}
}
