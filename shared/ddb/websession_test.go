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

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/errs"
)

// TestWebSessionStore: create, read (expiry checked, as TTL is lazy), delete; one request each,
// and the TTL attribute set to the expiry.
func TestWebSessionStore(t *testing.T) {
	client, counter, name := ddbtest.NewTable(t)
	store := ddb.NewWebSessionStore(ddb.NewTable(client, name))
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ws := auth.WebSession{
		ProjectID: uuid.NewString(), KeyID: uuid.NewString(), KeyHash: auth.HashKey("plm_secret"),
		User: auth.User{ID: uuid.NewString(), Email: "a@example.com", Name: "A"}, CSRF: "csrf-token",
		CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour),
	}
	hash := auth.HashKey("session-id")

	counter.Reset()
	require.NoError(t, store.CreateWebSession(ctx, hash, ws))
	assert.Equal(t, map[string]int{"PutItem": 1}, counter.Counts())
	assert.True(t, errs.Is(store.CreateWebSession(ctx, hash, ws), errs.CodeConflict), "a second session of one id")

	tests := []struct {
		name string
		now  time.Time
		want bool
	}{
		{"fresh", t0.Add(time.Minute), true},
		{"just before expiry", ws.ExpiresAt.Add(-time.Second), true},
		{"at expiry", ws.ExpiresAt, false},
		{"after expiry", ws.ExpiresAt.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter.Reset()
			got, err := store.WebSession(ctx, hash, tt.now)
			assert.Equal(t, map[string]int{"GetItem": 1}, counter.Counts())
			if !tt.want {
				assert.True(t, errs.Is(err, errs.CodeNotFound), "err: %v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, ws, got)
		})
	}

	raw, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: map[string]types.AttributeValue{
		infra.AttrPK: &types.AttributeValueMemberS{Value: "WEBSESSION#" + hash}, infra.AttrSK: &types.AttributeValueMemberS{Value: "WEBSESSION"},
	}})
	require.NoError(t, err)
	require.NotNil(t, raw.Item, "stored under the hash of the id")
	assert.Equal(t, &types.AttributeValueMemberN{Value: "1772409600"}, raw.Item[infra.AttrTTL], "TTL is the expiry")

	counter.Reset()
	require.NoError(t, store.DeleteWebSession(ctx, hash))
	assert.Equal(t, map[string]int{"DeleteItem": 1}, counter.Counts())
	_, err = store.WebSession(ctx, hash, t0)
	assert.True(t, errs.Is(err, errs.CodeNotFound))
	require.NoError(t, store.DeleteWebSession(ctx, hash), "deleting a gone session")
	_, err = store.WebSession(ctx, auth.HashKey("unknown"), t0)
	assert.True(t, errs.Is(err, errs.CodeNotFound))
}
