package ddb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
)

// API is the part of the DynamoDB client the stores use. Scan is deliberately absent.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	// DeleteItem is used by the settings area (price overrides), the dashboard's sign-out (its
	// session), monitors and webhooks, and project deletion.
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// NewClient returns a DynamoDB client for cfg. The endpoint comes only from the SDK's own
// configuration (AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL). When one is set, response CRC32
// validation is off: DynamoDB Local's checksums do not always match what the SDK computes.
func NewClient(cfg aws.Config, customEndpoint bool) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.DisableValidateResponseChecksum = customEndpoint
	})
}

// Table is the Plume table: a client and the table's name.
type Table struct {
	api  API
	name string
}

// NewTable returns the table named name reached through api.
func NewTable(api API, name string) *Table { return &Table{api: api, name: name} }

// key builds the primary key of an item.
func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		infra.AttrPK: &types.AttributeValueMemberS{Value: pk},
		infra.AttrSK: &types.AttributeValueMemberS{Value: sk},
	}
}

func keyString(av map[string]types.AttributeValue) string {
	pk, _ := av[infra.AttrPK].(*types.AttributeValueMemberS)
	sk, _ := av[infra.AttrSK].(*types.AttributeValueMemberS)
	if pk == nil || sk == nil {
		return ""
	}
	return pk.Value + "\x00" + sk.Value
}

// get reads one item with a strongly consistent read into out. It reports whether it exists.
func (t *Table) get(ctx context.Context, pk, sk string, out any) (bool, error) {
	res, err := t.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &t.name, Key: key(pk, sk), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return false, storageErr("get "+sk, err)
	}
	if res.Item == nil {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return false, fmt.Errorf("decode %s: %w", sk, err)
	}
	return true, nil
}

// batchGet reads items by key with strongly consistent reads, 100 keys a BatchGetItem and
// batchGetParallel of them at a time, retrying unprocessed keys; the first failure cancels the
// others. The result maps keyString of each found item to the item.
func (t *Table) batchGet(ctx context.Context, keys []map[string]types.AttributeValue) (map[string]map[string]types.AttributeValue, error) {
	return t.batchGetWith(ctx, keys, true)
}

// batchGetWith is batchGet, strongly consistent or not.
func (t *Table) batchGetWith(ctx context.Context, keys []map[string]types.AttributeValue, consistent bool) (map[string]map[string]types.AttributeValue, error) {
	chunks := slices.Collect(slices.Chunk(keys, 100))
	results := make([][]map[string]types.AttributeValue, len(chunks))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(batchGetParallel)
	for i, chunk := range chunks {
		g.Go(func() error {
			items, err := t.batchGetChunk(ctx, chunk, consistent)
			results[i] = items
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	found := make(map[string]map[string]types.AttributeValue, len(keys))
	for _, items := range results {
		for _, item := range items {
			found[keyString(item)] = item
		}
	}
	return found, nil
}

// batchGetEventual is batchGet read eventually consistent (half the read units), then strongly
// for the keys it did not find: for records an index (GSI2, the list index) found, which exist
// by then, whose values an eventually consistent read shows as of about a second ago, no older
// than the index that found them shows them; the second read makes sure that a record written
// just before is not left out.
func (t *Table) batchGetEventual(ctx context.Context, keys []map[string]types.AttributeValue) (map[string]map[string]types.AttributeValue, error) {
	found, err := t.batchGetWith(ctx, keys, false)
	if err != nil || len(found) == len(keys) {
		return found, err
	}
	var missing []map[string]types.AttributeValue
	for _, k := range keys {
		if _, ok := found[keyString(k)]; !ok {
			missing = append(missing, k)
		}
	}
	more, err := t.batchGet(ctx, missing)
	if err != nil {
		return nil, err
	}
	maps.Copy(found, more)
	return found, nil
}

// batchGetParallel is how many BatchGetItem requests of one batchGet are in flight at once: a
// trace of 10,000 spans reads its 100 batches of summaries in the time of 13, for the same
// number of requests and read units.
const batchGetParallel = 8

// batchGetChunk reads up to 100 keys, again for the keys DynamoDB left unprocessed.
func (t *Table) batchGetChunk(ctx context.Context, chunk []map[string]types.AttributeValue, consistent bool) ([]map[string]types.AttributeValue, error) {
	var found []map[string]types.AttributeValue
	req := map[string]types.KeysAndAttributes{t.name: {Keys: chunk, ConsistentRead: aws.Bool(consistent)}}
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return nil, err
			}
		}
		res, err := t.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, storageErr("batch get", err)
		}
		found = append(found, res.Responses[t.name]...)
		req = res.UnprocessedKeys
		if attempt > maxBatchRetries && len(req) > 0 {
			return nil, errs.Unavailable("storage is busy; retry the request")
		}
	}
	return found, nil
}

const maxBatchRetries = 8

// queryOpts shape a query: a secondary index (reads on the table itself are strongly
// consistent; index reads cannot be), newest-first order and a page limit.
type queryOpts struct {
	index   string
	reverse bool
	limit   int32
	// eventual reads the table eventually consistent (half the read units); an index always is.
	eventual bool
}

// queryInput builds the Query for a key condition.
func (t *Table) queryInput(cond expression.KeyConditionBuilder, o queryOpts) (*dynamodb.QueryInput, error) {
	expr, err := expression.NewBuilder().WithKeyCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("build key condition: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName: &t.name, KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ScanIndexForward: aws.Bool(!o.reverse),
	}
	if o.index != "" {
		in.IndexName = aws.String(o.index)
	} else {
		in.ConsistentRead = aws.Bool(!o.eventual)
	}
	if o.limit > 0 {
		in.Limit = aws.Int32(o.limit)
	}
	return in, nil
}

// query runs a query with every page, decoding each item with decode.
func (t *Table) query(ctx context.Context, cond expression.KeyConditionBuilder, o queryOpts, decode func(map[string]types.AttributeValue) error) error {
	in, err := t.queryInput(cond, o)
	if err != nil {
		return err
	}
	return t.queryAll(ctx, in, decode)
}

// partition is the key condition for every item of partition pk.
func partition(pk string) expression.KeyConditionBuilder {
	return expression.Key(infra.AttrPK).Equal(expression.Value(pk))
}

// queryAll runs in and all its pages, decoding every item with decode.
func (t *Table) queryAll(ctx context.Context, in *dynamodb.QueryInput, decode func(map[string]types.AttributeValue) error) error {
	return queryPages(ctx, t.api, in, decode)
}

// queryPages runs in on api with all its pages, decoding every item with decode.
func queryPages(ctx context.Context, api dynamodb.QueryAPIClient, in *dynamodb.QueryInput, decode func(map[string]types.AttributeValue) error) error {
	p := dynamodb.NewQueryPaginator(api, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return storageErr("query", err)
		}
		for _, item := range page.Items {
			if err := decode(item); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeInto returns a decode function for queryAll that appends items of type T to out.
func decodeInto[T any](out *[]T) func(map[string]types.AttributeValue) error {
	return func(item map[string]types.AttributeValue) error {
		var v T
		if err := attributevalue.UnmarshalMap(item, &v); err != nil {
			return fmt.Errorf("decode item: %w", err)
		}
		*out = append(*out, v)
		return nil
	}
}

// marshal encodes an item struct.
func marshal(v any) (map[string]types.AttributeValue, error) {
	av, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, fmt.Errorf("encode item: %w", err)
	}
	return av, nil
}

// storageErr wraps a DynamoDB failure. Throttling that outlasted the SDK's own retries becomes
// an errs.Unavailable (503 with Retry-After); anything else stays internal.
func storageErr(op string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ProvisionedThroughputExceededException", "RequestLimitExceeded", "ThrottlingException":
			return fmt.Errorf("%s: %w: %w", op, errs.Unavailable("storage is throttling requests; retry shortly"), err)
		}
	}
	// A transaction cancelled because one of its items was throttled, or because another
	// request with its token is still running.
	if slices.ContainsFunc(cancellationCodes(err), func(c string) bool {
		return c == "ThrottlingError" || c == "ProvisionedThroughputExceeded" || c == "TransactionConflict"
	}) || errors.As(err, new(*types.TransactionInProgressException)) {
		return fmt.Errorf("%s: %w: %w", op, errs.Unavailable("storage is busy; retry shortly"), err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// cancellationCodes returns the per-item reason codes of a cancelled transaction, or nil when
// err is not a cancellation.
func cancellationCodes(err error) []string {
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) {
		return nil
	}
	codes := make([]string, len(tc.CancellationReasons))
	for i, r := range tc.CancellationReasons {
		codes[i] = aws.ToString(r.Code)
	}
	return codes
}

// failedCondition returns the item of a cancelled transaction's i-th write when that write's
// condition failed (nil when the endpoint did not return it, as DynamoDB Local may not), and
// whether it failed.
func failedCondition(err error, i int) (map[string]types.AttributeValue, bool) {
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) || i >= len(tc.CancellationReasons) {
		return nil, false
	}
	r := tc.CancellationReasons[i]
	if aws.ToString(r.Code) != "ConditionalCheckFailed" {
		return nil, false
	}
	return r.Item, true
}

// isContention reports whether a write failed only because another writer got there first or
// at the same time, so that reading again and retrying can succeed.
func isContention(err error) bool {
	var conflict *types.TransactionConflictException
	if errors.As(err, &conflict) {
		return true
	}
	codes := cancellationCodes(err)
	if codes == nil {
		return false
	}
	return slices.ContainsFunc(codes, func(c string) bool {
		return c == "ConditionalCheckFailed" || c == "TransactionConflict"
	})
}
