package dashboard_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/browsertest"
)

// TestPromptWriteInBrowser drives the prompt pages' changes in headless Chromium: the diff of
// two versions, a tag pinned through its confirm step, a model bound, a feedback link created
// and revoked. The prompt's text and the model carry markup and links that must stay text: no
// dialog opens.
func TestPromptWriteInBrowser(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	payload := "Say " + xssScript + " " + xssImg + " " + xssLink + " hi."
	f.api.EnsurePrompt(t, a, "xss-bot", "Say hi.")
	f.api.EnsurePrompt(t, a, "xss-bot", payload)
	ctx := browsertest.Start(t, 360, 2*time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/prompts/xss-bot"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), a.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="versions"]`)),
	))

	// The diff of the two versions, chosen with the form.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="compare"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="diff"]`)),
	))
	assert.Equal(t, payload, browsertest.Text(t, ctx, `[data-testid="diff"]`))

	// Pin production to version 2: the confirm step shows the new tag and the text.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#pin-tag`), "production"),
		chromedp.SetValue(chromedp.CSS(`#pin-version`), "2"),
		chromedp.Click(chromedp.CSS(`[data-testid="pin"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="pin-confirm"]`)),
	))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="pin-change"]`), "The tag is new")
	assert.Equal(t, payload, browsertest.Text(t, ctx, `[data-testid="diff"]`))
	assert.Equal(t, payload, browsertest.Text(t, ctx, `[data-testid="diff"] ins`))
	assert.NotContains(t, f.promptTags(t, a, "xss-bot"), "production", "nothing pinned before the confirmation")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="pin-confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="notice"]`)),
	))
	assert.Equal(t, "The tag production now points at version 2.", browsertest.Text(t, ctx, `[data-testid="notice"]`))
	assert.Equal(t, 2, f.promptTags(t, a, "xss-bot")["production"])

	// Bind a model (markup in its id) to version 1.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#model-1`), xssImg),
		chromedp.Click(chromedp.CSS(`#version-1 [data-testid="bind"]`)),
		// The page before had a notice too: wait for what only the new page has.
		chromedp.WaitVisible(chromedp.CSS(`#version-1 [data-testid="unbind"]`)),
	))
	assert.Equal(t, "Version 1 is now bound to the model "+xssImg+".", browsertest.Text(t, ctx, `[data-testid="notice"]`))
	assert.Equal(t, xssImg, browsertest.Text(t, ctx, `#version-1 [data-testid="model"]`))
	assert.Equal(t, xssImg, f.versionModels(t, a, "xss-bot")[1])

	// Create a feedback link: its address shown once, in a readonly input.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="feedback-links-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="no-links"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="create-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="link-url"]`)),
	))
	linkURL := browsertest.Value(t, ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="link-url"]').value`))
	assert.Contains(t, linkURL, "/f/")
	assert.True(t, browsertest.Value(t, ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="link-url"]').readOnly`)))
	links := f.feedbackLinks(t, a)
	require.Len(t, links, 1)

	// Revoke it through the confirm step.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="revoke-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="revoke-confirm"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="revoke-confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="notice"]`)),
	))
	assert.Equal(t, "revoked", browsertest.Text(t, ctx, `[data-testid="link-status"]`))
	for _, status := range f.feedbackLinks(t, a) {
		assert.Equal(t, "revoked", status)
	}

	// Back on the prompt: its text and model stay text.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/prompts/xss-bot"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="versions"]`)),
	))
	assertNoInjected(t, ctx, "a prompt's text or model")
	assert.Zero(t, dialogs.Load(), "a dialog opened: user data ran as script")
}
