package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// served starts the whole API (every function, DynamoDB Local, the embedded S3) behind a real
// HTTP server and returns it with a client of tenant A.
func served(t *testing.T) (*apitest.API, *Client, string) {
	t.Helper()
	a := apitest.New(t, apitest.Options{})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey(a.A.Key), WithProject(a.A.ProjectID), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	return a, c, srv.URL
}

// TestPromptMethods: every prompt method against the real API.
func TestPromptMethods(t *testing.T) {
	a, c, base := served(t)
	ctx := context.Background()
	content := "You are a helpful agent for {{product}}."
	v1, err := c.EnsurePromptVersion(ctx, "support bot", api.EnsureVersionRequest{Content: &content})
	require.Error(t, err, "a slug with a space")
	assert.ErrorIs(t, err, ErrInvalid)

	v1, err = c.EnsurePromptVersion(ctx, "support-bot", api.EnsureVersionRequest{Content: &content})
	require.NoError(t, err)
	assert.Equal(t, 1, v1.Version)
	again, err := c.EnsurePromptVersion(ctx, "support-bot", api.EnsureVersionRequest{Content: &content})
	require.NoError(t, err)
	assert.Equal(t, v1.ID, again.ID, "ensure is idempotent")
	second := content + " Be brief."
	v2, err := c.EnsurePromptVersion(ctx, "support-bot", api.EnsureVersionRequest{Content: &second})
	require.NoError(t, err)

	got, err := c.PromptVersion(ctx, "support-bot", PromptSelector{Version: 1})
	require.NoError(t, err)
	assert.Equal(t, content, got.Content)
	latest, err := c.LatestPromptVersion(ctx, "support-bot")
	require.NoError(t, err)
	assert.Equal(t, v2.ID, latest.ID)
	byHash, err := c.PromptVersionByHash(ctx, "support-bot", v1.ContentHash)
	require.NoError(t, err)
	assert.Equal(t, v1.ID, byHash.ID)

	pin, err := c.PinTag(ctx, "support-bot", "production", 1)
	require.NoError(t, err)
	assert.Equal(t, 1, pin.Version)
	prod, err := c.PromptVersion(ctx, "support-bot", PromptSelector{Tag: "production"})
	require.NoError(t, err)
	assert.Equal(t, v1.ID, prod.ID)
	tags, err := c.PromptTags(ctx, "support-bot")
	require.NoError(t, err)
	names := map[string]int{}
	for _, tag := range tags {
		names[tag.Tag] = tag.Version
	}
	assert.Equal(t, map[string]int{"latest": 2, "production": 1}, names)

	model := "openai/gpt-4o-mini"
	bound, err := c.BindModel(ctx, "support-bot", 2, &model)
	require.NoError(t, err)
	assert.Equal(t, &model, bound.ModelID)
	vm, err := c.VersionModel(ctx, v2.ID)
	require.NoError(t, err)
	assert.Equal(t, &model, vm.Model)
	unbound, err := c.BindModel(ctx, "support-bot", 2, nil)
	require.NoError(t, err)
	assert.Nil(t, unbound.ModelID)

	versions, err := c.PromptVersions(ctx, "support-bot")
	require.NoError(t, err)
	assert.Len(t, versions, 2)
	prompts, err := c.Prompts(ctx)
	require.NoError(t, err)
	require.Len(t, prompts, 1)
	assert.Equal(t, "support-bot", prompts[0].Slug)

	_, err = c.PromptVersion(ctx, "no-such-prompt", PromptSelector{})
	assert.ErrorIs(t, err, ErrNotFound)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusNotFound, e.Status)
	assert.NotEmpty(t, e.RequestID)

	bad, err := New(WithBaseURL(base), WithAPIKey("plm_not_a_key_at_all_0123456789"), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	_, err = bad.LatestPromptVersion(ctx, "support-bot")
	assert.ErrorIs(t, err, ErrUnauthenticated)
	other, err := New(WithBaseURL(base), WithAPIKey(a.A.Key), WithProject(a.B.ProjectID), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	_, err = other.Prompts(ctx)
	assert.ErrorIs(t, err, ErrForbidden, "a key of another project")
}

// TestRetries: idempotent calls are retried on 5xx and 429, waiting as Retry-After asks; a
// POST that is not idempotent is not; a 4xx is not.
func TestRetries(t *testing.T) {
	var calls atomic.Int32
	status := func(n int32) int { // 503, 429, then 200
		switch n {
		case 1:
			return http.StatusServiceUnavailable
		case 2:
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if s := status(n); s != http.StatusOK {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(s)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"busy","request_id":"r-1"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"v-1","version":3}`))
	}))
	t.Cleanup(srv.Close)
	var waits []time.Duration
	c, err := New(WithBaseURL(srv.URL), WithAPIKey("k"), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	c.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }

	v, err := c.LatestPromptVersion(context.Background(), "bot")
	require.NoError(t, err)
	assert.Equal(t, 3, v.Version)
	assert.Equal(t, int32(3), calls.Load())
	assert.Equal(t, []time.Duration{2 * time.Second, 2 * time.Second}, waits, "Retry-After honoured")

	calls.Store(0)
	err = c.do(context.Background(), call{method: http.MethodPost, path: "/v1/spans"}, nil)
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, int32(1), calls.Load(), "a POST that is not idempotent is sent once")

	notFound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	t.Cleanup(notFound.Close)
	c2, err := New(WithBaseURL(notFound.URL), WithAPIKey("k"), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	calls.Store(0)
	_, err = c2.LatestPromptVersion(context.Background(), "bot")
	assert.ErrorIs(t, err, ErrNotFound, "a proxy's 404 without the API's body")
	assert.Equal(t, int32(1), calls.Load(), "a 4xx is not retried")
}

// TestConfiguration: options first, then PLUME_*, then the zeroeval names.
func TestConfiguration(t *testing.T) {
	env := map[string]string{"ZEROEVAL_API_KEY": "ze-key", "ZEROEVAL_API_URL": "https://ze.example.com", "PLUME_PROJECT_ID": "p-1"}
	c, err := New(WithEnv(func(k string) string { return env[k] }))
	require.NoError(t, err)
	assert.Equal(t, "ze-key", c.key)
	assert.Equal(t, "https://ze.example.com", c.base.String())
	assert.Equal(t, "p-1", c.Project())

	env["PLUME_API_KEY"], env["PLUME_BASE_URL"] = "plume-key", "https://plume.example.com/"
	c, err = New(WithEnv(func(k string) string { return env[k] }))
	require.NoError(t, err)
	assert.Equal(t, "plume-key", c.key)
	assert.Equal(t, "https://plume.example.com", c.base.String())

	c, err = New(WithAPIKey("opt-key"), WithBaseURL("http://127.0.0.1:8080"), WithEnv(func(k string) string { return env[k] }))
	require.NoError(t, err)
	assert.Equal(t, "opt-key", c.key)

	_, err = New(WithEnv(func(string) string { return "" }))
	assert.ErrorContains(t, err, "no base URL")
	_, err = New(WithBaseURL("http://x"), WithEnv(func(string) string { return "" }))
	assert.ErrorContains(t, err, "no API key")
	noProject, err := New(WithBaseURL("http://x"), WithAPIKey("k"), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	_, err = noProject.Prompts(context.Background())
	assert.ErrorContains(t, err, "no project")
	assert.False(t, errors.Is(err, ErrNotFound))
}
