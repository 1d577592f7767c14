package prompts_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/auth"
)

func TestAuthentication(t *testing.T) {
	api := newTestAPI(t)
	ctx := context.Background()
	now := time.Now()

	soon := now.Add(time.Hour)
	expiring, expiringKey, err := auth.NewKey(auth.KeySpec{ProjectID: api.a.projectID, ExpiresAt: &soon}, now)
	require.NoError(t, err)
	require.NoError(t, api.auth.CreateKey(ctx, expiringKey))
	revoked, revokedKey, err := auth.NewKey(auth.KeySpec{ProjectID: api.a.projectID}, now)
	require.NoError(t, err)
	require.NoError(t, api.auth.CreateKey(ctx, revokedKey))
	_, err = api.auth.RevokeKey(ctx, api.a.projectID, revokedKey.ID, now)
	require.NoError(t, err)
	second, secondKey, err := auth.NewKey(auth.KeySpec{ProjectID: api.a.projectID}, now)
	require.NoError(t, err)
	require.NoError(t, api.auth.CreateKey(ctx, secondKey))

	tests := []struct {
		name   string
		header string
		status int
	}{
		{"no header", "", 401},
		{"basic scheme", "Basic " + api.a.key, 401},
		{"bearer without key", "Bearer ", 401},
		{"unknown key", "Bearer plm_000000000000000000000000000000000000000", 401},
		{"revoked key", "Bearer " + revoked, 401},
		{"valid key", "Bearer " + api.a.key, 404},
		{"lowercase scheme", "bearer " + api.a.key, 404},
		{"second active key of the project (rotation)", "Bearer " + second, 404},
		{"key that expires later", "Bearer " + expiring, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "/v1/prompts/none", nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			res := api.doRequest(t, req)
			assert.Equal(t, tt.status, res.status, "body: %s", res.raw)
			if tt.status == 401 {
				assert.Equal(t, "unauthenticated", res.errCode())
				assert.Equal(t, `Bearer realm="plume"`, res.header.Get("WWW-Authenticate"))
			}
		})
	}

	health := api.do(t, "GET", "/healthz", "", nil)
	assert.Equal(t, http.StatusOK, health.status)
	assert.Equal(t, "ok", health.body["status"])
}

func TestExpiredKeyIsRefusedEvenWhenCached(t *testing.T) {
	ctx := context.Background()
	api := newTestAPI(t)
	now := time.Now()
	exp := now.Add(time.Hour)
	secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: api.a.projectID, ExpiresAt: &exp}, now)
	require.NoError(t, err)
	require.NoError(t, api.auth.CreateKey(ctx, k))

	clock := exp.Add(-time.Second)
	authn := auth.NewAuthenticator(api.auth, auth.MaxCacheTTL, auth.WithClock(func() time.Time { return clock }))
	_, err = authn.Authenticate(ctx, "Bearer "+secret)
	require.NoError(t, err)
	clock = exp.Add(time.Second) // the key is cached, and expiry is still checked on every request
	_, err = authn.Authenticate(ctx, "Bearer "+secret)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expired")
}

func TestRevocationTakesEffectAfterCacheTTL(t *testing.T) {
	ctx := context.Background()
	api := newTestAPI(t)
	now := time.Now()
	clock := now
	authn := auth.NewAuthenticator(api.auth, auth.MaxCacheTTL, auth.WithClock(func() time.Time { return clock }))
	p, err := authn.Authenticate(ctx, "Bearer "+api.a.key)
	require.NoError(t, err)
	keys, err := api.auth.Keys(ctx, api.a.projectID)
	require.NoError(t, err)
	_, err = api.auth.RevokeKey(ctx, api.a.projectID, p.KeyID, now)
	require.NoError(t, err)

	clock = now.Add(auth.MaxCacheTTL - time.Second)
	_, err = authn.Authenticate(ctx, "Bearer "+api.a.key)
	assert.NoError(t, err, "within the documented cache TTL the revoked key may still pass")
	clock = now.Add(auth.MaxCacheTTL)
	_, err = authn.Authenticate(ctx, "Bearer "+api.a.key)
	assert.Error(t, err, "after the cache TTL a revoked key fails")
	assert.Len(t, keys, 1)
}
