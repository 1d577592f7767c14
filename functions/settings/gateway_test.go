package settings_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ratelimit"
)

// TestGatewayStatus: GET /projects/{project_id}/gateway answers the deployment's gateway
// configuration and what its limits counted for the caller's project, and nothing of another
// project's; an ingest key is refused; without limits, limits and usage are null.
func TestGatewayStatus(t *testing.T) {
	ctx := context.Background()
	a := apitest.New(t, apitest.Options{Config: func(c *config.Config) {
		c.GatewayLimits = ratelimit.Config{RequestsPerMinute: 60, TokensPerMinute: 10_000, DailyUSD: 5, MaxStaleness: time.Second}
		c.GatewayURL = "https://gw.example.com/v1"
		c.GatewayTrace = "ALL"
	}})
	limits := a.Env.GatewayLimits()
	require.NotNil(t, limits)
	require.NoError(t, limits.Record(ctx, a.A.ProjectID, 1200, 1.0))
	require.NoError(t, limits.Record(ctx, a.A.ProjectID, 34, 0.23))
	require.NoError(t, limits.Record(ctx, a.B.ProjectID, 999, 4.0)) // B's, never A's
	path := "/projects/" + a.A.ProjectID + "/gateway"

	t.Run("member reads its project's", func(t *testing.T) {
		a.DDB.Reset()
		before := time.Now().UTC()
		res := a.MustDo(t, "GET", path, a.A.Key, nil)
		// The key's lookup (its first use: one GetItem) and the usage sums (one BatchGetItem).
		assert.Equal(t, map[string]int{"GetItem": 1, "BatchGetItem": 1}, a.DDB.Counts())
		var got api.GatewayStatus
		res.Decode(t, &got)
		require.NotNil(t, got.Endpoint)
		assert.Equal(t, "https://gw.example.com/v1", *got.Endpoint)
		assert.Equal(t, "all", got.Trace)
		assert.Equal(t, api.GatewayLimits{RequestsPerMinute: ptr(60), TokensPerMinute: ptr(10_000), DailySpendUSD: ptr(5.0)}, got.Limits)
		require.NotNil(t, got.Usage)
		require.NotNil(t, got.Usage.Tokens)
		require.NotNil(t, got.Usage.SpendUSD)
		assert.Equal(t, int64(1234), *got.Usage.Tokens)
		assert.InDelta(t, 1.23, *got.Usage.SpendUSD, 1e-9)
		assert.WithinDuration(t, before.Truncate(time.Minute), got.Usage.Minute, time.Minute)
		assert.Equal(t, before.Format("2006-01-02"), got.Usage.Day)

		a.DDB.Reset()
		a.MustDo(t, "GET", path, a.A.Key, nil)
		assert.Equal(t, map[string]int{"BatchGetItem": 1}, a.DDB.Counts(), "the key cached, the sums read again")
	})

	t.Run("another project's key", func(t *testing.T) {
		res := a.Do(t, "GET", path, a.B.Key, nil)
		assert.Equal(t, http.StatusForbidden, res.Status)
		assert.NotContains(t, string(res.Body), "1234")
	})

	t.Run("ingest key", func(t *testing.T) {
		secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: a.A.ProjectID, User: auth.User{ID: "app"}, Role: auth.RoleIngest}, time.Now())
		require.NoError(t, err)
		require.NoError(t, a.Auth.CreateKey(ctx, k))
		res := a.Do(t, "GET", path, secret, nil)
		assert.Equal(t, http.StatusForbidden, res.Status)
		assert.Equal(t, "forbidden", res.ErrCode(t))
	})

	t.Run("no limits", func(t *testing.T) {
		bare := apitest.New(t, apitest.Options{})
		bare.DDB.Reset()
		res := bare.MustDo(t, "GET", "/projects/"+bare.A.ProjectID+"/gateway", bare.A.Key, nil)
		assert.Equal(t, map[string]int{"GetItem": 1}, bare.DDB.Counts(), "the key's lookup only")
		assert.JSONEq(t, `{"endpoint": null, "trace": "off", "usage": null,
			"limits": {"requests_per_minute": null, "tokens_per_minute": null, "daily_spend_usd": null}}`, string(res.Body))
	})

	t.Run("requests limit only: nothing counted", func(t *testing.T) {
		rpm := apitest.New(t, apitest.Options{Config: func(c *config.Config) { c.GatewayLimits.RequestsPerMinute = 60 }})
		rpm.MustDo(t, "GET", "/projects/"+rpm.A.ProjectID+"/gateway", rpm.A.Key, nil)
		rpm.DDB.Reset()
		res := rpm.MustDo(t, "GET", "/projects/"+rpm.A.ProjectID+"/gateway", rpm.A.Key, nil)
		assert.Empty(t, rpm.DDB.Counts())
		assert.JSONEq(t, `{"endpoint": null, "trace": "off", "usage": null,
			"limits": {"requests_per_minute": 60, "tokens_per_minute": null, "daily_spend_usd": null}}`, string(res.Body))
	})
}

func ptr[T any](v T) *T { return &v }
