package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/config"
)

// TestWebhooksCommands: create prints the secret alone on stdout, list shows the webhook and no
// secret, show shows one, deliveries shows a pin's delivery, delete removes it; bad input exits 2.
func TestWebhooksCommands(t *testing.T) {
	rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(rcv.Close)
	h := newClientHarness(t, apitest.Options{Config: func(c *config.Config) { c.Webhooks.AllowedHosts = []string{"127.0.0.1"} }})

	r := h.run("webhooks", "create", "--url", rcv.URL, "--event", api.EventPromptTagMoved)
	require.Equal(t, exitOK, r.code, "%s", r)
	secret := strings.TrimSuffix(r.stdout, "\n")
	require.True(t, strings.HasPrefix(secret, "whsec_"), "stdout is the secret alone: %q", r.stdout)
	assert.Contains(t, r.stderr, "only time the webhook's secret is shown")

	var hooks []api.Webhook
	require.NoError(t, json.Unmarshal([]byte(h.ok("--output", "json", "webhooks", "list")), &hooks))
	require.Len(t, hooks, 1)
	assert.Equal(t, rcv.URL, hooks[0].URL)
	assert.NotContains(t, h.ok("webhooks", "list"), secret)
	var one api.Webhook
	require.NoError(t, json.Unmarshal([]byte(h.ok("--output", "json", "webhooks", "show", hooks[0].ID)), &one))
	assert.Equal(t, hooks[0], one)
	shown := h.ok("webhooks", "show", hooks[0].ID)
	assert.Contains(t, shown, rcv.URL)
	assert.Contains(t, shown, api.EventPromptTagMoved)
	assert.NotContains(t, shown, strings.TrimPrefix(secret, "whsec_"))

	h.api.EnsurePrompt(t, h.api.A, "bot", "hello")
	h.api.MustDo(t, "POST", "/projects/"+h.api.A.ProjectID+"/prompts/bot/tags/production:pin", h.api.A.Key, map[string]any{"version": 1})
	h.api.DrainStream(t)
	var log []api.WebhookDelivery
	require.Eventually(t, func() bool {
		log = nil
		_ = json.Unmarshal([]byte(h.ok("--output", "json", "webhooks", "deliveries", hooks[0].ID)), &log)
		return len(log) == 1 && log[0].Status == api.DeliverySucceeded
	}, 30*time.Second, 10*time.Millisecond)
	assert.Contains(t, h.ok("webhooks", "deliveries", hooks[0].ID), "prompt.tag.moved")

	assert.Equal(t, exitUsage, h.run("webhooks", "create", "--url", "ftp://x", "--event", api.EventPromptTagMoved).code)
	assert.Equal(t, exitUsage, h.run("webhooks", "create", "--url", rcv.URL, "--event", "no.such").code)
	assert.Equal(t, exitUsage, h.run("webhooks", "deliveries", hooks[0].ID, "--limit", "500").code)

	h.ok("webhooks", "delete", hooks[0].ID)
	assert.Equal(t, exitUsage, h.run("webhooks", "delete", hooks[0].ID).code, "not found")
	assert.Equal(t, exitUsage, h.run("webhooks", "show", hooks[0].ID).code, "not found")
	assert.Equal(t, "[]", strings.TrimSpace(h.ok("--output", "json", "webhooks", "list")))
}
