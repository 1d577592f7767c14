package client

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestEvents: the event log read newest first, by type, oldest after a time and page by page
// with the cursor the answer's header gives.
func TestEvents(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey(a.A.Key), WithProject(a.A.ProjectID), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	ctx, start := context.Background(), time.Now().Add(-time.Second)
	a.EnsurePrompt(t, a.A, "bot", "v1")
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/prompts/bot/tags/production:pin", a.A.Key, map[string]any{"version": 1})
	a.DrainStream(t)

	all, err := c.Events(ctx, EventsQuery{})
	require.NoError(t, err)
	require.Len(t, all.Events, 2)
	assert.Empty(t, all.Next)
	assert.Equal(t, api.EventPromptTagMoved, all.Events[0].Type, "newest first")

	moved, err := c.Events(ctx, EventsQuery{Types: []string{api.EventPromptTagMoved}})
	require.NoError(t, err)
	require.Len(t, moved.Events, 1)

	first, err := c.Events(ctx, EventsQuery{Since: start, Limit: 1})
	require.NoError(t, err)
	require.Len(t, first.Events, 1)
	require.NotEmpty(t, first.Next)
	second, err := c.Events(ctx, EventsQuery{Since: start, Limit: 1, Cursor: first.Next})
	require.NoError(t, err)
	require.Len(t, second.Events, 1)
	assert.Equal(t, []api.Event{all.Events[1], all.Events[0]}, append(first.Events, second.Events...), "oldest first")

	_, err = c.Events(ctx, EventsQuery{Types: []string{"no.such"}})
	var apiErr *Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 400, apiErr.Status)
}
