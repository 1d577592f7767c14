package infra

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute and index names of the single table. Key builders live in shared/ddb; these are the
// physical names only.
const (
	AttrPK     = "PK"
	AttrSK     = "SK"
	AttrGSI1PK = "GSI1PK"
	AttrGSI1SK = "GSI1SK"
	AttrGSI2PK = "GSI2PK"
	AttrGSI2SK = "GSI2SK"
	AttrGSI3PK = "GSI3PK"
	AttrGSI3SK = "GSI3SK"
	// AttrTTL holds an item's expiry as Unix epoch seconds; DynamoDB deletes expired items.
	AttrTTL = "ttl"

	// IndexGSI1 projects all attributes: small, rarely written items (projects, prompt heads).
	IndexGSI1 = "GSI1"
	// IndexGSI2 projects keys only: the time-bucketed, write-sharded indexes.
	IndexGSI2 = "GSI2"
	// IndexGSI3 projects all attributes: feedback and judge evaluations by trace, so that a
	// trace's feedback is read in one Query whatever its number of spans.
	IndexGSI3 = "GSI3"
)

// TableDefinition returns the CreateTable request for the Plume table named name. It is the
// schema template.yaml must declare (see TestTemplateMatchesSchema).
func TableDefinition(name string) *dynamodb.CreateTableInput {
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	keys := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		}
	}
	gsi := func(index, pk, sk string, projection types.ProjectionType) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{
			IndexName:  aws.String(index),
			KeySchema:  keys(pk, sk),
			Projection: &types.Projection{ProjectionType: projection},
		}
	}
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			str(AttrPK), str(AttrSK), str(AttrGSI1PK), str(AttrGSI1SK), str(AttrGSI2PK), str(AttrGSI2SK),
			str(AttrGSI3PK), str(AttrGSI3SK),
		},
		KeySchema: keys(AttrPK, AttrSK),
		// The change stream feeds RollupFunction, which keeps the metrics' rollups.
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			gsi(IndexGSI1, AttrGSI1PK, AttrGSI1SK, types.ProjectionTypeAll),
			// GSI2 holds the time indexes of spans, traces and sessions. It projects keys only, so
			// the frequent aggregate updates of trace and session items never write to it (an
			// update that changes no projected attribute costs the index nothing); readers fetch
			// the items themselves with BatchGetItem.
			gsi(IndexGSI2, AttrGSI2PK, AttrGSI2SK, types.ProjectionTypeKeysOnly),
			gsi(IndexGSI3, AttrGSI3PK, AttrGSI3SK, types.ProjectionTypeAll),
		},
	}
}

// TableAPI is the part of the DynamoDB client that CreateTable needs.
type TableAPI interface {
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	UpdateTable(context.Context, *dynamodb.UpdateTableInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
}

// CreateTable creates the table named name if it does not exist, waits until it is active,
// enables TTL on AttrTTL and the change stream (a table of an earlier release has none). It is
// safe to call on an existing table.
func CreateTable(ctx context.Context, api TableAPI, name string) error {
	if err := createTable(ctx, api, TableDefinition(name)); err != nil {
		return err
	}
	return enableStream(ctx, api, name)
}

// CreateTableWithoutStream is CreateTable without the change stream, for tests that do not
// read it: DynamoDB Local serves every request on a table with a stream about ten times slower.
func CreateTableWithoutStream(ctx context.Context, api TableAPI, name string) error {
	def := TableDefinition(name)
	def.StreamSpecification = nil
	return createTable(ctx, api, def)
}

// createTable creates the table def unless it exists, waits until it is active and enables TTL.
func createTable(ctx context.Context, api TableAPI, def *dynamodb.CreateTableInput) error {
	name := aws.ToString(def.TableName)
	_, err := api.CreateTable(ctx, def)
	var inUse *types.ResourceInUseException
	switch {
	case errors.As(err, &inUse):
		// Already there: fall through to the wait, which is a no-op for active tables.
	case err != nil:
		return fmt.Errorf("create table %s: %w", name, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(api, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, time.Minute); err != nil {
		return fmt.Errorf("wait for table %s: %w", name, err)
	}
	_, err = api.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(AttrTTL), Enabled: aws.Bool(true),
		},
	})
	// A second enable on a table that already has TTL is a ValidationException; that is fine.
	var invalid interface{ ErrorCode() string }
	if err != nil && !(errors.As(err, &invalid) && invalid.ErrorCode() == "ValidationException") {
		return fmt.Errorf("enable ttl on %s: %w", name, err)
	}
	return nil
}

// enableStream turns on the table's change stream unless it is on.
func enableStream(ctx context.Context, api TableAPI, name string) error {
	out, err := api.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		return fmt.Errorf("describe table %s: %w", name, err)
	}
	if spec := out.Table.StreamSpecification; spec != nil && aws.ToBool(spec.StreamEnabled) {
		return nil
	}
	_, err = api.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name), StreamSpecification: TableDefinition(name).StreamSpecification})
	if err != nil {
		return fmt.Errorf("enable the stream of %s: %w", name, err)
	}
	return nil
}
