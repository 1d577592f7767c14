// Package ddbtest gives tests a real DynamoDB table: DynamoDB Local at the URL in
// PLUME_TEST_DYNAMODB_URL (make test starts it and sets the variable), with a fresh table per
// test built from the same schema as template.yaml. A test that needs it fails, never skips,
// when the variable is unset. Counter counts the requests each operation sends.
package ddbtest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/blob/blobtest"
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
// (which may be nil). It retries what the SDK's standard retryer retries, up to 5 attempts,
// without the retry quota: on a loaded machine DynamoDB Local fails requests AWS would not
// ("too long waiting for a lock"), and a test's run of them would exhaust the quota and fail
// on the quota's error.
func Client(t testing.TB, counter *Counter) *dynamodb.Client {
	t.Helper()
	url := Endpoint(t)
	return dynamodb.New(dynamodb.Options{
		Region:                          "us-east-1",
		BaseEndpoint:                    aws.String(url),
		Credentials:                     credentials.NewStaticCredentialsProvider(blobtest.AccessKeyFor(t), blobtest.SecretKey, ""),
		DisableValidateResponseChecksum: true,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 5
			o.RateLimiter = ratelimit.None
		}),
		APIOptions: counter.apiOptions(),
	})
}

// NewTable creates a fresh, uniquely named Plume table, without the change stream that only
// the rollups' tests read (infra.CreateTableWithoutStream), and deletes it when t ends. It
// returns a counted client and the table's name.
func NewTable(t testing.TB) (*dynamodb.Client, *Counter, string) {
	t.Helper()
	return newTable(t, infra.CreateTableWithoutStream)
}

// NewStreamTable is NewTable with the change stream, as deployed.
func NewStreamTable(t testing.TB) (*dynamodb.Client, *Counter, string) {
	t.Helper()
	return newTable(t, infra.CreateTable)
}

func newTable(t testing.TB, create func(context.Context, infra.TableAPI, string) error) (*dynamodb.Client, *Counter, string) {
	t.Helper()
	counter := &Counter{}
	client := Client(t, counter)
	name := "plume-test-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := create(ctx, client, name); err != nil {
		t.Fatalf("create table in DynamoDB Local at %s: %v", Endpoint(t), err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name})
	})
	counter.Reset()
	return client, counter, name
}

// Counter counts DynamoDB requests by operation, one per request the code makes, and the read
// and write capacity units they consumed (it asks every request to return its ConsumedCapacity,
// index writes included). The SDK's retries of a request are counted apart (Retries): whether
// one happens depends on the machine (DynamoDB Local dropping a kept-alive connection under
// load), not on the code, so a test that counts requests must not count them.
type Counter struct {
	mu          sync.Mutex
	counts      map[string]int
	retries     int
	read, write float64
	byOp        map[string]float64
}

func (c *Counter) apiOptions() []func(*middleware.Stack) error {
	if c == nil {
		return nil
	}
	return []func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("plumeCount",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				askCapacity(in.Parameters)
				c.add(awsmiddleware.GetOperationName(ctx))
				out, md, err := next.HandleInitialize(ctx, in)
				if attempts, ok := retry.GetAttemptResults(md); ok && len(attempts.Results) > 1 {
					c.addRetries(len(attempts.Results) - 1)
				}
				if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && err == nil {
					c.addUnits(true, "TransactWriteItems", transactionUnits(tx))
				} else if err == nil {
					c.addCapacity(out.Result)
				}
				return out, md, err
			}), middleware.After)
	}}
}

// AskCapacity is a client's API option that makes every request return the capacity it
// consumes, indexes included: DynamoDB Local reports it only when asked, and the request meters
// (Counter, ddbtap) read it from the answers.
func AskCapacity(s *middleware.Stack) error {
	return s.Initialize.Add(middleware.InitializeMiddlewareFunc("plumeAskCapacity",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			askCapacity(in.Parameters)
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

// askCapacity makes a request return the capacity it consumes, indexes included.
func askCapacity(params any) {
	const rc = types.ReturnConsumedCapacityIndexes
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = rc
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = rc
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = rc
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = rc
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = rc
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = rc
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = rc
	case *dynamodb.ScanInput:
		in.ReturnConsumedCapacity = rc
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = rc
	}
}

func (c *Counter) addCapacity(result any) {
	var write bool
	var caps []types.ConsumedCapacity
	switch out := result.(type) {
	case *dynamodb.PutItemOutput:
		write, caps = true, opt(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		write, caps = true, opt(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		write, caps = true, opt(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		write, caps = true, out.ConsumedCapacity
	case *dynamodb.TransactWriteItemsOutput:
		write, caps = true, out.ConsumedCapacity
	case *dynamodb.GetItemOutput:
		caps = opt(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		caps = out.ConsumedCapacity
	case *dynamodb.QueryOutput:
		caps = opt(out.ConsumedCapacity)
	}
	var units float64
	for _, cc := range caps {
		units += aws.ToFloat64(cc.CapacityUnits)
	}
	c.addUnits(write, strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", result), "*dynamodb."), "Output"), units)
}

func (c *Counter) addUnits(write bool, op string, units float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if write {
		c.write += units
	} else {
		c.read += units
	}
	if c.byOp == nil {
		c.byOp = map[string]float64{}
	}
	c.byOp[op] += units
}

// UnitsByOperation returns the capacity units consumed since the last Reset, by operation.
func (c *Counter) UnitsByOperation() map[string]float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.byOp)
}

func opt(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

// Units returns the read and write capacity units consumed since the last Reset.
func (c *Counter) Units() (read, write float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.read, c.write
}

func (c *Counter) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[op]++
}

func (c *Counter) addRetries(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.retries += n
}

// Retries returns how many times the SDK sent a request again since the last Reset.
func (c *Counter) Retries() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.retries
}

// Reset forgets every count.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts, c.retries, c.read, c.write, c.byOp = nil, 0, 0, 0, nil
}

// Total returns the number of requests since the last Reset, retries not counted.
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

// String renders the counts as "BatchGetItem=1 Query=2", and the retries when there were any
// ("BatchGetItem=1 Query=2 (retries 1)").
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
	if n := c.Retries(); n > 0 {
		parts = append(parts, fmt.Sprintf("(retries %d)", n))
	}
	return strings.Join(parts, " ")
}
