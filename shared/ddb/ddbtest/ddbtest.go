// Package ddbtest gives tests a real DynamoDB table: DynamoDB Local at the URL in
// PLUME_TEST_DYNAMODB_URL (make test starts it and sets the variable), with a fresh table per
// test built from the same schema as template.yaml. A test that needs it fails, never skips,
// when the variable is unset. Counter counts the requests each operation sends.
package ddbtest

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/plumehq/plume/infra"
)

// EnvURL names the variable holding DynamoDB Local's endpoint.
const EnvURL = "PLUME_TEST_DYNAMODB_URL"

// Endpoint returns DynamoDB Local's URL or fails t.
func Endpoint(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		t.Fatalf("%s is not set: run the tests with `make test`, which starts DynamoDB Local, or start it yourself (scripts/dynamodb-local.sh start) and export %s", EnvURL, EnvURL)
	}
	return url
}

// Client returns a DynamoDB client for DynamoDB Local that records its requests in counter
// (which may be nil).
func Client(t testing.TB, counter *Counter) *dynamodb.Client {
	t.Helper()
	url := Endpoint(t)
	return dynamodb.New(dynamodb.Options{
		Region:                          "us-east-1",
		BaseEndpoint:                    aws.String(url),
		Credentials:                     credentials.NewStaticCredentialsProvider("local", "local", ""),
		DisableValidateResponseChecksum: true,
		RetryMaxAttempts:                5,
		APIOptions:                      counter.apiOptions(),
	})
}

// NewTable creates a fresh, uniquely named Plume table and deletes it when t ends. It returns
// a counted client and the table's name.
func NewTable(t testing.TB) (*dynamodb.Client, *Counter, string) {
	t.Helper()
	counter := &Counter{}
	client := Client(t, counter)
	name := "plume-test-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := infra.CreateTable(ctx, client, name); err != nil {
		t.Fatalf("create table in DynamoDB Local at %s: %v", Endpoint(t), err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name})
	})
	counter.Reset()
	return client, counter, name
}

// Counter counts DynamoDB requests by operation, one per attempt sent (retries included), as
// AWS bills them.
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *Counter) apiOptions() []func(*middleware.Stack) error {
	if c == nil {
		return nil
	}
	return []func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("plumeCount",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				c.add(awsmiddleware.GetOperationName(ctx))
				return next.HandleDeserialize(ctx, in)
			}), middleware.After)
	}}
}

func (c *Counter) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[op]++
}

// Reset forgets every count.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = nil
}

// Total returns the number of requests since the last Reset.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

// Counts returns a copy of the per-operation counts.
func (c *Counter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// String renders the counts as "BatchGetItem=1 Query=2".
func (c *Counter) String() string {
	counts := c.Counts()
	ops := make([]string, 0, len(counts))
	for op := range counts {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%s=%d", op, counts[op])
	}
	return strings.Join(parts, " ")
}
