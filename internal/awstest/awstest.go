// Package awstest gives tests the AWS services that DynamoDB Local does not emulate (SQS,
// Secrets Manager and EventBridge): moto's server at the URL in PLUME_TEST_AWS_URL, which `make test` starts
// and exports. A test that needs it fails, never skips, when the variable is unset, as
// shared/ddb/ddbtest does for DynamoDB Local: a skipped test hides a broken setup.
package awstest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"
)

// EnvURL names the variable holding moto's endpoint.
const EnvURL = "PLUME_TEST_AWS_URL"

// region is the region every client signs for; moto keeps separate state per region.
const region = "us-east-1"

// cleanupTimeout bounds each deletion at the end of a test.
const cleanupTimeout = 30 * time.Second

// Endpoint returns moto's URL or fails t.
func Endpoint(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		t.Fatalf("%s is not set: run the tests with `make test`, which starts moto, or start it yourself (python3 -m moto.server -p 5077) and export %s=http://127.0.0.1:5077", EnvURL, EnvURL)
	}
	return url
}

// Config is the AWS configuration of moto: its endpoint, the region and test credentials.
// shared/awsjson's clients are made from it (the SDK clients below are the tests' oracles).
func Config(t testing.TB) aws.Config {
	t.Helper()
	return aws.Config{
		Region:       region,
		BaseEndpoint: aws.String(Endpoint(t)),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	}
}

// SQS returns an SQS client for moto.
func SQS(t testing.TB) *sqs.Client {
	t.Helper()
	url := Endpoint(t)
	return sqs.New(sqs.Options{
		Region:       region,
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// SecretsManager returns a Secrets Manager client for moto.
func SecretsManager(t testing.TB) *secretsmanager.Client {
	t.Helper()
	url := Endpoint(t)
	return secretsmanager.New(secretsmanager.Options{
		Region:       region,
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// EventBridge returns an EventBridge client for moto.
func EventBridge(t testing.TB) *eventbridge.Client {
	t.Helper()
	url := Endpoint(t)
	return eventbridge.New(eventbridge.Options{
		Region:       region,
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// NewBus creates an EventBridge bus whose name is name plus a unique suffix, with a rule that
// sends every event matching pattern (an event pattern's JSON) to a new queue; deletes them
// when t ends, and returns the bus's name and the queue's URL.
func NewBus(t testing.TB, name, pattern string) (bus, queueURL string) {
	t.Helper()
	client := EventBridge(t)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	bus = uniqueName(name)
	if _, err := client.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: &bus}); err != nil {
		t.Fatalf("create event bus %q in moto at %s: %v", name, Endpoint(t), err)
	}
	queueURL = NewQueue(t, name)
	attrs, err := SQS(t).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &queueURL, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatalf("read the ARN of queue %s: %v", queueURL, err)
	}
	rule := bus + "-rule"
	if _, err := client.PutRule(ctx, &eventbridge.PutRuleInput{Name: &rule, EventBusName: &bus, EventPattern: &pattern}); err != nil {
		t.Fatalf("put rule on bus %s: %v", bus, err)
	}
	target := ebtypes.Target{Id: aws.String("queue"), Arn: aws.String(attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)])}
	if _, err := client.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: &rule, EventBusName: &bus, Targets: []ebtypes.Target{target}}); err != nil {
		t.Fatalf("put the queue as target of rule %s: %v", rule, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		_, _ = client.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: &rule, EventBusName: &bus, Ids: []string{"queue"}})
		_, _ = client.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: &rule, EventBusName: &bus})
		_, _ = client.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: &bus})
	})
	return bus, queueURL
}

// NewQueue creates a standard queue whose name is name plus a unique suffix, deletes it when t
// ends, and returns its URL.
func NewQueue(t testing.TB, name string) string {
	t.Helper()
	client := SQS(t)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(uniqueName(name))})
	if err != nil {
		t.Fatalf("create queue %q in moto at %s: %v", name, Endpoint(t), err)
	}
	url := aws.ToString(out.QueueUrl)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		_, _ = client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
	})
	return url
}

// NewSecret creates a secret whose name is name plus a unique suffix and whose SecretString
// is value, deletes it (without recovery window) when t ends, and returns its name.
func NewSecret(t testing.TB, name, value string) string {
	t.Helper()
	client := SecretsManager(t)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	id := uniqueName(name)
	if _, err := client.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: &id, SecretString: &value}); err != nil {
		t.Fatalf("create secret %q in moto at %s: %v", name, Endpoint(t), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		_, _ = client.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: &id, ForceDeleteWithoutRecovery: aws.Bool(true)})
	})
	return id
}

// uniqueName appends a random suffix to name, so that tests running at once against one
// server never share a queue or a secret. The result is valid as an SQS queue name (letters,
// digits, hyphens and underscores, at most 80 characters) when name is.
func uniqueName(name string) string {
	return name + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
}
