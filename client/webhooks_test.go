package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/config"
)

// TestWebhooks: register a webhook, see a pin delivered to it and logged, redeliver it with the
// same id, delete it. (Roles and tenancy: internal/stack's tests of every route.)
func TestWebhooks(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		ids = append(ids, r.Header.Get("webhook-id"))
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	received := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ids...)
	}
	a := apitest.New(t, apitest.Options{Config: func(c *config.Config) { c.Webhooks.AllowedHosts = []string{"127.0.0.1"} }})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	newClient := func(key string) *Client {
		c, err := New(WithBaseURL(srv.URL), WithAPIKey(key), WithProject(a.A.ProjectID), WithEnv(func(string) string { return "" }))
		require.NoError(t, err)
		return c
	}
	c, ctx := newClient(a.A.Key), context.Background()

	hook, err := c.CreateWebhook(ctx, api.CreateWebhookRequest{URL: rcv.URL, Events: []string{api.EventPromptTagMoved}, Format: api.WebhookStandard})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(hook.Secret, "whsec_"))
	_, err = c.CreateWebhook(ctx, api.CreateWebhookRequest{URL: "ftp://example.com", Events: []string{api.EventPromptTagMoved}})
	var apiErr *Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusBadRequest, apiErr.Status)

	hooks, err := c.Webhooks(ctx)
	require.NoError(t, err)
	require.Len(t, hooks, 1)
	assert.Equal(t, hook.Webhook, hooks[0])
	one, err := c.Webhook(ctx, hook.ID)
	require.NoError(t, err)
	assert.Equal(t, hook.Webhook, one)
	raw := a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/webhooks/"+hook.ID, a.A.Key, nil)
	assert.NotContains(t, string(raw.Body), "secret", "the secret is answered once, at creation")
	assert.NotContains(t, string(raw.Body), strings.TrimPrefix(hook.Secret, "whsec_"))
	bClient, err := New(WithBaseURL(srv.URL), WithAPIKey(a.B.Key), WithProject(a.B.ProjectID), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	_, err = bClient.Webhook(ctx, hook.ID)
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusNotFound, apiErr.Status, "another project's webhook is not found")

	a.EnsurePrompt(t, a.A, "bot", "hello")
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/prompts/bot/tags/production:pin", a.A.Key, map[string]any{"version": 1})
	a.DrainStream(t)
	require.Eventually(t, func() bool { return len(received()) == 1 }, 30*time.Second, 5*time.Millisecond)

	var log []api.WebhookDelivery
	require.Eventually(t, func() bool {
		log, err = c.WebhookDeliveries(ctx, hook.ID, 10)
		return err == nil && len(log) == 1 && log[0].Status == api.DeliverySucceeded
	}, 30*time.Second, 5*time.Millisecond)
	assert.Equal(t, api.EventPromptTagMoved, log[0].EventType)
	assert.Equal(t, received()[0], log[0].EventID)

	again, err := c.Redeliver(ctx, hook.ID, log[0].ID)
	require.NoError(t, err)
	assert.Equal(t, api.DeliveryPending, again.Status)
	require.Eventually(t, func() bool { return len(received()) == 2 }, 30*time.Second, 5*time.Millisecond)
	assert.Equal(t, received()[0], received()[1], "redelivered with the same id")

	require.NoError(t, c.DeleteWebhook(ctx, hook.ID))
	err = c.DeleteWebhook(ctx, hook.ID)
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, http.StatusNotFound, apiErr.Status)
	hooks, err = c.Webhooks(ctx)
	require.NoError(t, err)
	assert.Empty(t, hooks)
	_, err = c.Webhook(ctx, hook.ID)
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, http.StatusNotFound, apiErr.Status, "a deleted webhook is not found")
}
