package client

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestKeys: issue, list and revoke keys against the whole API; the new key works until revoked,
// a member key manages no keys, and the last admin key stays.
func TestKeys(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	newClient := func(key string) *Client {
		c, err := New(WithBaseURL(srv.URL), WithAPIKey(key), WithProject(a.A.ProjectID), WithEnv(func(string) string { return "" }))
		require.NoError(t, err)
		return c
	}
	c, ctx := newClient(a.A.Key), context.Background()

	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	created, err := c.CreateKey(ctx, api.CreateAPIKeyRequest{Role: "member", Name: "CI", UserEmail: "ci@example.com", ExpiresAt: &expires})
	require.NoError(t, err)
	require.NotEmpty(t, created.Secret)
	assert.Equal(t, "member", created.Role)
	assert.Equal(t, "CI", created.Name)
	assert.True(t, expires.Equal(*created.ExpiresAt))

	keys, err := c.Keys(ctx)
	require.NoError(t, err)
	require.Len(t, keys, 2)
	assert.Equal(t, created.APIKey.ID, keys[1].ID)
	assert.Equal(t, created.Display, keys[1].Display)

	member := newClient(created.Secret)
	_, err = member.ModelPrices(ctx)
	require.NoError(t, err, "the new key works")
	_, err = member.Keys(ctx)
	assert.ErrorIs(t, err, ErrForbidden)
	_, err = member.CreateKey(ctx, api.CreateAPIKeyRequest{Role: "admin"})
	assert.ErrorIs(t, err, ErrForbidden)

	_, err = c.CreateKey(ctx, api.CreateAPIKeyRequest{Role: "owner"})
	assert.ErrorIs(t, err, ErrInvalid)

	revoked, err := c.RevokeKey(ctx, created.APIKey.ID)
	require.NoError(t, err)
	require.NotNil(t, revoked.RevokedAt)
	again, err := c.RevokeKey(ctx, created.APIKey.ID)
	require.NoError(t, err)
	assert.Equal(t, revoked, again, "revoking is idempotent")
	_, err = member.ModelPrices(ctx)
	assert.ErrorIs(t, err, ErrUnauthenticated, "a revoked key is refused")

	_, err = c.RevokeKey(ctx, uuid.NewString())
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = c.RevokeKey(ctx, keys[0].ID)
	assert.ErrorIs(t, err, ErrConflict, "the project's last admin key")
}
