package mcpserver_test

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/auth"
)

// memberKey issues a member key of tenant's project.
func memberKey(t *testing.T, a *apitest.API, tenant apitest.Tenant) string {
	t.Helper()
	secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: tenant.ProjectID, User: auth.User{ID: "u-member"}, Role: auth.RoleMember}, time.Now())
	require.NoError(t, err)
	require.NoError(t, a.Auth.CreateKey(t.Context(), k))
	return secret
}

// TestWebhookTools: list-webhooks, get-webhook and list-events are read-only; list-webhooks lists
// the project's webhooks and get-webhook reads one, without their secrets, for admin keys only (a
// member's call is a tool error); list-events reads the event log newest first, by type, page by
// page with the cursor, and refuses a type or a time it cannot use; another project's key sees
// none of it.
func TestWebhookTools(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	a := s.api
	var hook api.CreatedWebhook
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/webhooks", a.A.Key, api.CreateWebhookRequest{URL: "https://hooks.example.com/plume", Events: []string{api.EventPromptTagMoved}}).Decode(t, &hook)
	a.EnsurePrompt(t, a.A, "bot", "v1")
	a.EnsurePrompt(t, a.A, "bot", "v2")
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/prompts/bot/tags/production:pin", a.A.Key, map[string]any{"version": 2})
	a.EnsurePrompt(t, a.B, "bot", "b1")
	a.DrainStream(t)

	cs, err := s.connect(t, a.A.Key)
	require.NoError(t, err)
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	for _, name := range []string{"list-events", "list-webhooks", "get-webhook"} {
		require.Contains(t, byName, name)
		assert.True(t, byName[name].Annotations.ReadOnlyHint, name)
		assert.NotNil(t, byName[name].OutputSchema, name)
	}

	var hooks api.WebhookList
	res := call(t, cs, "list-webhooks", map[string]any{}, &hooks)
	require.False(t, res.IsError, text(res))
	require.Len(t, hooks.Webhooks, 1)
	assert.Equal(t, hook.ID, hooks.Webhooks[0].ID)
	assert.Equal(t, []string{api.EventPromptTagMoved}, hooks.Webhooks[0].Events)
	assert.NotContains(t, text(res), hook.Secret, "never the secret")

	var one api.Webhook
	res = call(t, cs, "get-webhook", map[string]any{"webhook_id": hook.ID}, &one)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, hook.Webhook, one)
	assert.NotContains(t, text(res), hook.Secret, "never the secret")
	res = call(t, cs, "get-webhook", map[string]any{"webhook_id": ""}, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "invalid_request")

	var page mcpserver.ListEventsOutput
	res = call(t, cs, "list-events", map[string]any{}, &page)
	require.False(t, res.IsError, text(res))
	require.Len(t, page.Events, 3, "2 versions and the pin; not B's")
	assert.Nil(t, page.NextCursor)
	assert.Equal(t, api.EventPromptTagMoved, page.Events[0].Type, "newest first")
	for _, ev := range page.Events {
		assert.Equal(t, a.A.ProjectID, ev.ProjectID)
	}

	res = call(t, cs, "list-events", map[string]any{"types": []string{api.EventPromptVersionCreated}, "limit": 1}, &page)
	require.False(t, res.IsError, text(res))
	require.Len(t, page.Events, 1)
	require.NotNil(t, page.NextCursor)
	first := page.Events[0].ID
	res = call(t, cs, "list-events", map[string]any{"types": []string{api.EventPromptVersionCreated}, "limit": 1, "cursor": *page.NextCursor}, &page)
	require.False(t, res.IsError, text(res))
	require.Len(t, page.Events, 1)
	assert.NotEqual(t, first, page.Events[0].ID)
	assert.Equal(t, api.EventPromptVersionCreated, page.Events[0].Type)

	res = call(t, cs, "list-events", map[string]any{"since": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}, &page)
	require.False(t, res.IsError, text(res))
	require.Len(t, page.Events, 3)
	assert.Equal(t, api.EventPromptVersionCreated, page.Events[0].Type, "oldest first after since")

	for _, bad := range []map[string]any{
		{"types": []string{"prompt.deleted"}},
		{"since": "yesterday"},
		{"limit": 500},
		{"cursor": "not-a-cursor"},
	} {
		res := call(t, cs, "list-events", bad, nil)
		assert.True(t, res.IsError, "%v", bad)
		assert.Contains(t, text(res), "invalid_request", "%v", bad)
	}

	// A member reads the events, not the webhooks.
	member, err := s.connect(t, memberKey(t, a, a.A))
	require.NoError(t, err)
	res = call(t, member, "list-webhooks", map[string]any{}, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "forbidden")
	res = call(t, member, "get-webhook", map[string]any{"webhook_id": hook.ID}, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "forbidden")
	res = call(t, member, "list-events", map[string]any{}, &page)
	require.False(t, res.IsError, text(res))
	assert.Len(t, page.Events, 3)

	// Another project's key: its own, nothing of A's.
	other, err := s.connect(t, a.B.Key)
	require.NoError(t, err)
	call(t, other, "list-webhooks", map[string]any{}, &hooks)
	assert.Empty(t, hooks.Webhooks)
	res = call(t, other, "get-webhook", map[string]any{"webhook_id": hook.ID}, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "not_found", "another project's webhook")
	call(t, other, "list-events", map[string]any{}, &page)
	require.Len(t, page.Events, 1)
	assert.Equal(t, a.B.ProjectID, page.Events[0].ProjectID)
}
