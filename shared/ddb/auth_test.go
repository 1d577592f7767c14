package ddb_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
)

// TestKeyRoleRoundTrip stores a key of each role and reads it back through both of its items
// (the lookup by hash and the project's listing), then strips the role off the items, as keys
// issued before roles were stored, and reads them back as admin keys.
func TestKeyRoleRoundTrip(t *testing.T) {
	client, _, name := ddbtest.NewTable(t)
	store := ddb.NewAuthStore(ddb.NewTable(client, name))
	ctx := context.Background()
	project := uuid.NewString()
	require.NoError(t, store.CreateProject(ctx, auth.Project{ID: project, Name: "roles", CreatedAt: time.Now()}))

	stored := map[string]auth.Key{} // by key id
	for _, role := range auth.Roles {
		t.Run(string(role), func(t *testing.T) {
			_, k, err := auth.NewKey(auth.KeySpec{ProjectID: project, Role: role}, time.Now())
			require.NoError(t, err)
			require.NoError(t, store.CreateKey(ctx, k))
			stored[k.ID] = k

			got, err := store.KeyByHash(ctx, k.Hash)
			require.NoError(t, err)
			assert.Equal(t, role, got.Role)
			for _, key := range [][2]string{{"APIKEY#" + k.Hash, "APIKEY"}, {"P#" + project, "KEY#" + k.ID}} {
				item := getItem(t, client, name, key[0], key[1])
				assert.Equal(t, &types.AttributeValueMemberS{Value: string(role)}, item["role"], "the role attribute of %s", key)
			}
		})
	}
	keys, err := store.Keys(ctx, project)
	require.NoError(t, err)
	require.Len(t, keys, len(auth.Roles))
	for _, k := range keys {
		assert.Equal(t, stored[k.ID].Role, k.Role, "listed key %s", k.ID)
	}

	t.Run("stored before roles", func(t *testing.T) {
		secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: project, Role: auth.RoleIngest}, time.Now())
		require.NoError(t, err)
		require.NoError(t, store.CreateKey(ctx, k))
		for _, item := range [][2]string{{"APIKEY#" + k.Hash, "APIKEY"}, {"P#" + project, "KEY#" + k.ID}} {
			_, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String(name), UpdateExpression: aws.String("REMOVE #role"),
				ExpressionAttributeNames: map[string]string{"#role": "role"},
				Key: map[string]types.AttributeValue{
					"PK": &types.AttributeValueMemberS{Value: item[0]}, "SK": &types.AttributeValueMemberS{Value: item[1]},
				},
			})
			require.NoError(t, err)
			require.NotContains(t, getItem(t, client, name, item[0], item[1]), "role")
		}

		got, err := store.KeyByHash(ctx, k.Hash)
		require.NoError(t, err)
		assert.Equal(t, auth.RoleAdmin, got.Role, "a key without a stored role is an admin key")
		keys, err := store.Keys(ctx, project)
		require.NoError(t, err)
		for _, listed := range keys {
			if listed.ID == k.ID {
				assert.Equal(t, auth.RoleAdmin, listed.Role, "listed")
			}
		}
		p, err := auth.NewAuthenticator(store, 0).Authenticate(ctx, "Bearer "+secret)
		require.NoError(t, err)
		assert.Equal(t, auth.RoleAdmin, p.Role, "the principal of a key without a stored role")
	})
}

func getItem(t *testing.T, client *dynamodb.Client, table, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}},
	})
	require.NoError(t, err)
	require.NotNil(t, out.Item, "no item %s / %s", pk, sk)
	return out.Item
}
