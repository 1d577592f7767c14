package faultproxy_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/internal/faultproxy"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
)

// attempts is how many times the test clients send an operation: once, and one retry.
const attempts = 2

// fastRetryer retries as the SDK's standard retryer does, but at most n attempts and after a
// millisecond, whatever the error, and without a retry quota shared across operations.
func fastRetryer(n int) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = n
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
		o.RateLimiter = ratelimit.None
	})
}

// dynamoVia returns ddbtest's client of DynamoDB Local, sending through p instead.
func dynamoVia(t *testing.T, p *faultproxy.Proxy) *dynamodb.Client {
	t.Helper()
	return dynamodb.New(ddbtest.Client(t, nil).Options(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(p.URL())
		o.RetryMaxAttempts = 0 // the retryer's own
		o.Retryer = fastRetryer(attempts)
	})
}

func itemKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		infra.AttrPK: &types.AttributeValueMemberS{Value: pk},
		infra.AttrSK: &types.AttributeValueMemberS{Value: sk},
	}
}

// stored reports whether the item with key pk, sk is in table, read straight from DynamoDB
// Local.
func stored(t *testing.T, direct *dynamodb.Client, table, pk, sk string) bool {
	t.Helper()
	out, err := direct.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName: &table, Key: itemKey(pk, sk), ConsistentRead: aws.Bool(true),
	})
	require.NoError(t, err)
	return out.Item != nil
}

// TestDynamoDBForwardsEveryOperation sends each operation the stores use through the proxy
// and checks that DynamoDB Local served it and Op named it.
func TestDynamoDBForwardsEveryOperation(t *testing.T) {
	direct, _, table := ddbtest.NewTable(t)
	p := faultproxy.New(t, ddbtest.Endpoint(t))
	client := dynamoVia(t, p)
	ctx := t.Context()

	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: itemKey("p", "1")})
	require.NoError(t, err)
	got, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: itemKey("p", "1")})
	require.NoError(t, err)
	assert.NotNil(t, got.Item)
	_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &table, Key: itemKey("p", "1"),
		UpdateExpression:          aws.String("ADD n :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
	})
	require.NoError(t, err)
	_, err = client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &table, Item: itemKey("p", "2")}},
		{Put: &types.Put{TableName: &table, Item: itemKey("p", "3")}},
	}})
	require.NoError(t, err)
	batch, err := client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		table: {Keys: []map[string]types.AttributeValue{itemKey("p", "2"), itemKey("p", "3")}},
	}})
	require.NoError(t, err)
	assert.Len(t, batch.Responses[table], 2)
	query, err := client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &table,
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "p"}},
	})
	require.NoError(t, err)
	assert.Len(t, query.Items, 3)
	_, err = client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: itemKey("p", "1")})
	require.NoError(t, err)

	assert.Equal(t, []string{"PutItem", "GetItem", "UpdateItem", "TransactWriteItems", "BatchGetItem", "Query", "DeleteItem"}, p.Log())
	assert.False(t, stored(t, direct, table, "p", "1"))
	assert.True(t, stored(t, direct, table, "p", "2"))
}

// TestDynamoDBFaults checks what the AWS SDK reports for each fault on PutItem, and whether
// the item was written, with a client that makes two attempts.
func TestDynamoDBFaults(t *testing.T) {
	direct, _, table := ddbtest.NewTable(t)
	tests := []struct {
		name     string
		rule     faultproxy.Rule
		code     string // the smithy.APIError code the client reports
		as       any    // a pointer to the error type the client reports
		stored   bool   // the item is in the table afterwards
		requests int    // the PutItem requests the proxy received
	}{
		{
			name:     "throttled every time: the SDK gives up",
			rule:     faultproxy.Rule{Op: "PutItem", Following: faultproxy.Forever, Fault: faultproxy.Throttle},
			code:     "ProvisionedThroughputExceededException",
			as:       new(*types.ProvisionedThroughputExceededException),
			requests: attempts,
		},
		{
			name:     "throttled once: the SDK's retry heals it",
			rule:     faultproxy.Rule{Op: "PutItem", Fault: faultproxy.Throttle},
			stored:   true,
			requests: 2,
		},
		{
			name:     "server error every time",
			rule:     faultproxy.Rule{Op: "PutItem", Following: faultproxy.Forever, Fault: faultproxy.ServerError},
			code:     "InternalServerError",
			as:       new(*types.InternalServerError),
			requests: attempts,
		},
		{
			name:     "server error once",
			rule:     faultproxy.Rule{Op: "PutItem", Fault: faultproxy.ServerError},
			stored:   true,
			requests: 2,
		},
		{
			name:     "delayed",
			rule:     faultproxy.Rule{Op: "PutItem", Fault: faultproxy.Delay(10 * time.Millisecond)},
			stored:   true,
			requests: 1,
		},
		{
			name:     "dropped every time: nothing written",
			rule:     faultproxy.Rule{Op: "PutItem", Following: faultproxy.Forever, Fault: faultproxy.Drop},
			as:       new(*smithyhttp.RequestSendError),
			requests: attempts,
		},
		{
			name:     "dropped after forwarding every time: written, yet the client got an error",
			rule:     faultproxy.Rule{Op: "PutItem", Following: faultproxy.Forever, Fault: faultproxy.DropAfterForward},
			as:       new(*smithyhttp.RequestSendError),
			stored:   true,
			requests: attempts,
		},
		{
			name:     "a rule for another operation",
			rule:     faultproxy.Rule{Op: "GetItem", Following: faultproxy.Forever, Fault: faultproxy.Throttle},
			stored:   true,
			requests: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := faultproxy.New(t, ddbtest.Endpoint(t))
			client := dynamoVia(t, p)
			p.Fail(tt.rule)

			_, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &table, Item: itemKey(t.Name(), "x")})

			if tt.as == nil {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.ErrorAs(t, err, tt.as)
			}
			var api smithy.APIError
			if tt.code != "" && assert.ErrorAs(t, err, &api) {
				assert.Equal(t, tt.code, api.ErrorCode())
			} else if tt.code == "" {
				assert.False(t, errors.As(err, &api), "no service error: %v", err)
			}
			assert.Equal(t, tt.stored, stored(t, direct, table, t.Name(), "x"), "stored")
			assert.Equal(t, tt.requests, p.Count("PutItem"))
		})
	}
}

// TestDropAfterForwardRetryMeetsItsOwnWrite is the fault idempotency tests are for: a
// create-once PutItem is written, its answer is lost, and the SDK's retry fails its condition
// on the item the first attempt wrote.
func TestDropAfterForwardRetryMeetsItsOwnWrite(t *testing.T) {
	direct, _, table := ddbtest.NewTable(t)
	p := faultproxy.New(t, ddbtest.Endpoint(t))
	client := dynamoVia(t, p)
	p.Fail(faultproxy.Rule{Op: "PutItem", Fault: faultproxy.DropAfterForward})

	_, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{
		TableName: &table, Item: itemKey("once", "x"),
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})

	var conflict *types.ConditionalCheckFailedException
	assert.ErrorAs(t, err, &conflict)
	assert.Equal(t, []string{"PutItem", "PutItem"}, p.Log(), "the first attempt, then the SDK's retry")
	assert.True(t, stored(t, direct, table, "once", "x"))
}

// TestRetriesFailWhateverComesBetween: a rule with Retries fails a request's retry too when
// another request of the operation comes between its attempts (the first gives up, the other
// is not failed); one that fires on two requests (Following: 1) gives the second firing to the
// request between, and both succeed on their retries.
func TestRetriesFailWhateverComesBetween(t *testing.T) {
	_, _, table := ddbtest.NewTable(t)
	in := &dynamodb.GetItemInput{TableName: &table, Key: itemKey("P#retries", "A")}
	for _, tt := range []struct {
		name       string
		rule       faultproxy.Rule
		firstFails bool
	}{
		{"retries", faultproxy.Rule{Op: "GetItem", Fault: faultproxy.ServerError, Retries: true}, true},
		{"two requests", faultproxy.Rule{Op: "GetItem", Fault: faultproxy.ServerError, Following: 1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := faultproxy.New(t, ddbtest.Endpoint(t))
			client, other := dynamoVia(t, p), dynamoVia(t, p)
			p.Fail(tt.rule)
			attempt := 0
			var between error
			_, err := client.GetItem(t.Context(), in, func(o *dynamodb.Options) {
				o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
					return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("between", func(ctx context.Context, fin middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
						if attempt++; attempt == 2 { // another request of the operation before the retry
							_, between = other.GetItem(ctx, in)
						}
						return next.HandleFinalize(ctx, fin)
					}), middleware.After)
				})
			})
			assert.Equal(t, attempts, attempt)
			assert.Equal(t, tt.firstFails, err != nil, "the first request failed: %v", err)
			assert.NoError(t, between, "the request between")
		})
	}
}
