package auth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/errs"
)

const project = "5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10"

func TestNewSecret(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		s := NewSecret()
		require.True(t, strings.HasPrefix(s, KeyPrefix))
		require.Len(t, s, len(KeyPrefix)+keySecretLen)
		require.False(t, seen[s])
		seen[s] = true
	}
}

func TestNewKey(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	tests := []struct {
		name string
		spec KeySpec
		ok   bool
	}{
		{"minimal", KeySpec{ProjectID: project}, true},
		{"with user and expiry", KeySpec{ProjectID: project, User: User{ID: "u1", Email: "a@b.c", Name: "A"}, ExpiresAt: &future}, true},
		{"fixed secret", KeySpec{ProjectID: project, Secret: "plm_dev_secret_0123"}, true},
		{"project not a uuid", KeySpec{ProjectID: "dev"}, false},
		{"bad email", KeySpec{ProjectID: project, User: User{Email: "nope"}}, false},
		{"expiry in the past", KeySpec{ProjectID: project, ExpiresAt: &past}, false},
		{"short secret", KeySpec{ProjectID: project, Secret: "short"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secret, k, err := NewKey(tt.spec, now)
			if !tt.ok {
				require.Error(t, err)
				assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, HashKey(secret), k.Hash)
			assert.NotContains(t, k.Display, secret[len(k.Display):], "display shows only a prefix")
			assert.True(t, strings.HasPrefix(secret, k.Display))
			assert.NotEmpty(t, k.User.ID, "a user without an id gets one")
			assert.NoError(t, k.Usable(now))
		})
	}
}

func TestUsable(t *testing.T) {
	now := time.Now()
	exp := now.Add(time.Minute)
	k := Key{Display: "plm_abc", ExpiresAt: &exp}
	assert.NoError(t, k.Usable(now))
	assert.Equal(t, errs.CodeUnauthenticated, errs.CodeOf(k.Usable(exp)))
	k.RevokedAt = &now
	assert.ErrorContains(t, k.Usable(now), "revoked")
}

func TestRequireProject(t *testing.T) {
	ctx := WithPrincipal(context.Background(), Principal{ProjectID: project})
	pid, err := RequireProject(ctx, project)
	require.NoError(t, err)
	assert.Equal(t, project, pid)
	_, err = RequireProject(ctx, "9f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10")
	assert.Equal(t, errs.CodeForbidden, errs.CodeOf(err))
	_, err = RequireProject(context.Background(), project)
	assert.Equal(t, errs.CodeUnauthenticated, errs.CodeOf(err))
}
