package ddb_test

import (
	"context"
	"sync"
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
	"github.com/plumehq/plume/shared/errs"
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

// TestRevokeKeyKeeping: the key is revoked on both of its items in one request while the kept
// key is unrevoked; a kept key revoked meanwhile, or a key revoked since it was listed,
// cancels the transaction with errs.CodeConflict and changes nothing.
func TestRevokeKeyKeeping(t *testing.T) {
	client, counter, name := ddbtest.NewTable(t)
	store := ddb.NewAuthStore(ddb.NewTable(client, name))
	ctx := context.Background()
	project := uuid.NewString()
	require.NoError(t, store.CreateProject(ctx, auth.Project{ID: project, CreatedAt: time.Now()}))
	newKey := func(role auth.Role) auth.Key {
		_, k, err := auth.NewKey(auth.KeySpec{ProjectID: project, Role: role}, time.Now())
		require.NoError(t, err)
		require.NoError(t, store.CreateKey(ctx, k))
		return k
	}
	revokedAt := func(k auth.Key) (listed, lookup *time.Time) {
		got, err := store.KeyByHash(ctx, k.Hash)
		require.NoError(t, err)
		keys, err := store.Keys(ctx, project)
		require.NoError(t, err)
		for _, l := range keys {
			if l.ID == k.ID {
				return l.RevokedAt, got.RevokedAt
			}
		}
		t.Fatalf("key %s not listed", k.ID)
		return nil, nil
	}
	at := time.Now().UTC()

	t.Run("kept key unrevoked", func(t *testing.T) {
		k, keep := newKey(auth.RoleAdmin), newKey(auth.RoleAdmin)
		counter.Reset()
		got, err := store.RevokeKeyKeeping(ctx, k, keep.ID, at)
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"TransactWriteItems": 1}, counter.Counts())
		require.NotNil(t, got.RevokedAt)
		assert.True(t, at.Equal(*got.RevokedAt))
		listed, lookup := revokedAt(k)
		require.NotNil(t, listed)
		require.NotNil(t, lookup)
		assert.True(t, at.Equal(*listed) && at.Equal(*lookup), "both items: %v %v", listed, lookup)
		listed, lookup = revokedAt(keep)
		assert.Nil(t, listed)
		assert.Nil(t, lookup)
	})
	t.Run("no kept key", func(t *testing.T) {
		k := newKey(auth.RoleMember)
		_, err := store.RevokeKeyKeeping(ctx, k, "", at)
		require.NoError(t, err)
		listed, lookup := revokedAt(k)
		assert.NotNil(t, listed)
		assert.NotNil(t, lookup)
	})
	t.Run("kept key revoked meanwhile", func(t *testing.T) {
		k, keep := newKey(auth.RoleAdmin), newKey(auth.RoleAdmin)
		_, err := store.RevokeKey(ctx, project, keep.ID, at)
		require.NoError(t, err)
		_, err = store.RevokeKeyKeeping(ctx, k, keep.ID, at)
		assert.True(t, errs.Is(err, errs.CodeConflict), "%v", err)
		listed, lookup := revokedAt(k)
		assert.Nil(t, listed)
		assert.Nil(t, lookup)
	})
	t.Run("kept key unknown", func(t *testing.T) {
		k := newKey(auth.RoleAdmin)
		_, err := store.RevokeKeyKeeping(ctx, k, uuid.NewString(), at)
		assert.True(t, errs.Is(err, errs.CodeConflict), "%v", err)
		listed, _ := revokedAt(k)
		assert.Nil(t, listed)
	})
	t.Run("key revoked since listed", func(t *testing.T) {
		k, keep := newKey(auth.RoleAdmin), newKey(auth.RoleAdmin)
		first := at.Add(-time.Minute)
		_, err := store.RevokeKey(ctx, project, k.ID, first)
		require.NoError(t, err)
		_, err = store.RevokeKeyKeeping(ctx, k, keep.ID, at)
		assert.True(t, errs.Is(err, errs.CodeConflict), "%v", err)
		listed, lookup := revokedAt(k)
		require.NotNil(t, listed)
		assert.True(t, first.Equal(*listed), "the first revocation stands: %v", listed)
		assert.True(t, first.Equal(*lookup))
	})
}

// TestRevokeKeyKeepingConcurrently: two transactions at the same moment, each revoking one of
// two keys while keeping the other, never both succeed. Twenty rounds with fresh keys.
func TestRevokeKeyKeepingConcurrently(t *testing.T) {
	client, _, name := ddbtest.NewTable(t)
	store := ddb.NewAuthStore(ddb.NewTable(client, name))
	ctx := context.Background()
	project := uuid.NewString()
	require.NoError(t, store.CreateProject(ctx, auth.Project{ID: project, CreatedAt: time.Now()}))
	for round := range 20 {
		var keys [2]auth.Key
		for i := range keys {
			_, k, err := auth.NewKey(auth.KeySpec{ProjectID: project, Role: auth.RoleAdmin}, time.Now())
			require.NoError(t, err)
			require.NoError(t, store.CreateKey(ctx, k))
			keys[i] = k
		}
		var results [2]error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, results[i] = store.RevokeKeyKeeping(ctx, keys[i], keys[1-i].ID, time.Now())
			}()
		}
		close(start)
		wg.Wait()
		for _, err := range results {
			if err != nil {
				assert.True(t, errs.Is(err, errs.CodeConflict), "round %d: %v", round, err)
			}
		}
		assert.False(t, results[0] == nil && results[1] == nil, "round %d: both keys revoked", round)
		list, err := store.Keys(ctx, project)
		require.NoError(t, err)
		unrevoked := 0
		for _, k := range list {
			if (k.ID == keys[0].ID || k.ID == keys[1].ID) && k.RevokedAt == nil {
				unrevoked++
			}
		}
		assert.GreaterOrEqual(t, unrevoked, 1, "round %d", round)
	}
}
