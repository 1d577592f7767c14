package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// TestPinTagIfTagAt: the precondition against the real API.
func TestPinTagIfTagAt(t *testing.T) {
	_, c, _ := served(t)
	ctx := context.Background()
	for _, content := range []string{"one", "two", "three"} {
		_, err := c.EnsurePromptVersion(ctx, "support-bot", api.EnsureVersionRequest{Content: &content})
		require.NoError(t, err)
	}

	pin, err := c.PinTag(ctx, "support-bot", "production", 1, IfTagAt(0))
	require.NoError(t, err, "a new tag")
	assert.Nil(t, pin.PreviousVersion)
	pin, err = c.PinTag(ctx, "support-bot", "production", 2, IfTagAt(1))
	require.NoError(t, err)
	assert.Equal(t, 2, pin.Version)

	_, err = c.PinTag(ctx, "support-bot", "production", 3, IfTagAt(1))
	require.ErrorIs(t, err, ErrConflict)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusConflict, e.Status)
	assert.Contains(t, e.Message, "is at version 2")

	pin, err = c.PinTag(ctx, "support-bot", "production", 3)
	require.NoError(t, err, "without the option the pin is unconditional")
	assert.Equal(t, 3, pin.Version)
}

// TestPinTagBody: the option adds expected_version; without it the body is as before.
func TestPinTagBody(t *testing.T) {
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		bodies = append(bodies, m)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"tag":"production","version":2,"prompt":"p"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey("k"), WithProject("p1"), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)

	_, err = c.PinTag(context.Background(), "p", "production", 2)
	require.NoError(t, err)
	_, err = c.PinTag(context.Background(), "p", "production", 2, IfTagAt(0))
	require.NoError(t, err)
	require.Len(t, bodies, 2)
	assert.Equal(t, map[string]any{"version": 2.0}, bodies[0])
	assert.Equal(t, map[string]any{"version": 2.0, "expected_version": 0.0}, bodies[1])
}
