package client

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// TestSplitTag: a split through the client, read through GetPrompt's cache: each session
// keeps its version (its own cache entry), the answer names its variant, and once the split
// ends (and the cache is dropped) the tag's version is served again.
func TestSplitTag(t *testing.T) {
	_, c, _ := served(t)
	ctx := context.Background()
	for _, content := range []string{"one", "two"} {
		_, err := c.EnsurePromptVersion(ctx, "support-bot", api.EnsureVersionRequest{Content: &content})
		require.NoError(t, err)
	}
	_, err := c.PinTag(ctx, "support-bot", "production", 1)
	require.NoError(t, err)
	sp, err := c.SplitTag(ctx, "support-bot", "production", api.PromptSplitRequest{Name: "client-split", DurationDays: 1,
		Variants: []api.PromptSplitVariant{{Version: 1, Weight: 1}, {Version: 2, Weight: 1}}})
	require.NoError(t, err)
	assert.Equal(t, "client-split", sp.Test)
	_, err = c.SplitTag(ctx, "support-bot", "production", api.PromptSplitRequest{Name: "again", DurationDays: 1,
		Variants: []api.PromptSplitVariant{{Version: 1, Weight: 1}, {Version: 2, Weight: 1}}})
	require.ErrorIs(t, err, ErrConflict)

	seen := map[int]bool{}
	for i := range 20 {
		o := &GetPromptOptions{Tag: "production", SessionID: fmt.Sprintf("s-%d", i)}
		first, err := c.GetPrompt(ctx, "support-bot", o)
		require.NoError(t, err)
		require.NotNil(t, first.ABChoice)
		assert.Equal(t, fmt.Sprintf("v%d", first.Version), first.ABChoice.VariantKey)
		again, err := c.PromptVersion(ctx, "support-bot", PromptSelector{Tag: "production", SessionID: o.SessionID})
		require.NoError(t, err)
		assert.Equal(t, first.Version, again.Version, "session %s", o.SessionID)
		seen[first.Version] = true
	}
	assert.Len(t, seen, 2, "twenty sessions of an even split meet both versions")
	rep, err := c.ABTest(ctx, "client-split")
	require.NoError(t, err)
	assert.Equal(t, "support-bot", rep.Prompt)

	_, err = c.EndSplit(ctx, "support-bot", "production")
	require.NoError(t, err)
	c.InvalidatePrompt("support-bot")
	p, err := c.GetPrompt(ctx, "support-bot", &GetPromptOptions{Tag: "production", SessionID: "s-1"})
	require.NoError(t, err)
	assert.Equal(t, 1, p.Version)
	assert.Nil(t, p.ABChoice)
	_, err = c.EndSplit(ctx, "support-bot", "production")
	require.ErrorIs(t, err, ErrNotFound)
}
