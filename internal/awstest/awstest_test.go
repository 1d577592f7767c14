package awstest_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/awstest"
)

func TestNewQueue(t *testing.T) {
	client := awstest.SQS(t)
	var url string
	t.Run("create", func(t *testing.T) {
		url = awstest.NewQueue(t, "awstest")
		assert.Contains(t, url, "awstest-")
		_, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("{}")})
		require.NoError(t, err)
	})
	_, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: &url})
	assert.Error(t, err, "the queue is deleted when its test ends")
}

func TestNewSecret(t *testing.T) {
	client := awstest.SecretsManager(t)
	a := awstest.NewSecret(t, "awstest", `{"k":"v"}`)
	b := awstest.NewSecret(t, "awstest", `{"k":"w"}`)
	assert.NotEqual(t, a, b)
	assert.True(t, strings.HasPrefix(a, "awstest-"))
	out, err := client.GetSecretValue(t.Context(), &secretsmanager.GetSecretValueInput{SecretId: &a})
	require.NoError(t, err)
	assert.Equal(t, `{"k":"v"}`, aws.ToString(out.SecretString))
}
