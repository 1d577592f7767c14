package signals_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
)

// TestRecordsExpireWithSpans: an entity's record carries the table's TTL, the span retention
// after its last write, as the spans it joins; the test's items do not expire.
func TestRecordsExpireWithSpans(t *testing.T) {
	c := apitest.NewClock(time.Now().UTC().Truncate(time.Second))
	srv := apitest.New(t, apitest.Options{Clock: c.Now, Config: func(cfg *config.Config) { cfg.SpanRetentionDays = 30 }})
	a := srv.A
	id := uuid.NewString()
	srv.MustDo(t, "POST", "/ab-choices", a.Key, choiceBody("trace", id, "keep", "a", 3))
	c.Add(time.Hour)
	srv.MustDo(t, "POST", "/signals/", a.Key, map[string]any{"entity_type": "trace", "entity_id": id, "name": "x", "value": 1})

	client := ddbtest.Client(t, nil)
	res, err := client.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(srv.TableName),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "P#" + a.ProjectID + "#EN#trace#" + id}}})
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	ttl, ok := res.Items[0][infra.AttrTTL].(*types.AttributeValueMemberN)
	require.True(t, ok, "the record has a TTL")
	assert.Equal(t, strconv.FormatInt(c.Now().Add(30*24*time.Hour).Unix(), 10), ttl.Value, "30 days after the last write")

	res, err = client.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(srv.TableName),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "P#" + a.ProjectID + "#AB#keep"}}})
	require.NoError(t, err)
	require.NotEmpty(t, res.Items)
	for _, it := range res.Items {
		assert.NotContains(t, it, infra.AttrTTL)
	}
}
