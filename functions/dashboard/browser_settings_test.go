package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/browsertest"
)

// TestSettingsInBrowser drives the settings page in headless Chromium: sign in as an admin,
// issue a member key whose name carries markup, read its secret from the page (once: a reload
// shows it no more), use it against the REST API, revoke it through the confirm step (the API
// then refuses it), and set and delete a model price whose id carries markup. No dialog may
// open at any point.
func TestSettingsInBrowser(t *testing.T) {
	f := newFixture(t)
	ctx := browsertest.Start(t, 360, time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL
	name := xssScript + xssImg
	prices := "/projects/" + f.api.A.ProjectID + "/model-prices"

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/settings"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), f.api.A.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="issue-form"]`)),
	))
	assert.Equal(t, f.api.A.ProjectID, browsertest.Text(t, ctx, `[data-testid="project-id"]`))
	assert.Equal(t, "admin", browsertest.Text(t, ctx, `[data-testid="my-role"]`))

	// Issue a member key: its secret is on the result page, once.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#k-role`), "member"),
		chromedp.SendKeys(chromedp.CSS(`#k-name`), name),
		chromedp.Click(chromedp.CSS(`[data-testid="issue"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="secret"]`)),
	))
	assert.Equal(t, base+"/ui/settings/keys/issued", browsertest.Value(t, ctx, chromedp.Location()))
	secret := browsertest.Value(t, ctx, chromedp.Value(chromedp.CSS(`[data-testid="secret"]`)))
	require.True(t, strings.HasPrefix(secret, "plm_"), secret)
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="secret-warning"]`), "will not be shown again")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="copy-secret"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="copied"]:empty`)),
	))
	assert.NotEmpty(t, browsertest.Text(t, ctx, `[data-testid="copied"]`), "the copy button says what happened")

	res := f.api.Do(t, "GET", prices, secret, nil)
	assert.Equal(t, http.StatusOK, res.Status, "the new key works: %s", res.Body)
	assert.Equal(t, http.StatusForbidden, f.api.Do(t, "GET", "/projects/"+f.api.A.ProjectID+"/api-keys", secret, nil).Status, "as a member")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="secret-gone"]`)),
	))
	html := browsertest.Value(t, ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	assert.NotContains(t, html, secret, "a reload does not show the secret")

	// Revoke it through the confirm step.
	keys, err := f.api.Auth.Keys(t.Context(), f.api.A.ProjectID)
	require.NoError(t, err)
	var id string
	for _, k := range keys {
		if strings.HasPrefix(secret, k.Display) {
			id = k.ID
		}
	}
	require.NotEmpty(t, id)
	row := `[data-key-id="` + id + `"]`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/settings"),
		chromedp.WaitVisible(chromedp.CSS(row)),
	))
	assert.Equal(t, name, browsertest.Text(t, ctx, row+` [data-testid="key-name"]`), "the name as text")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(row+` [data-testid="revoke-key-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="revoke-key"]`)),
	))
	assert.Equal(t, http.StatusOK, f.api.Do(t, "GET", prices, secret, nil).Status, "the confirm step changes nothing")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="revoke-key"]`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid="key-status"]`)),
	))
	assert.Equal(t, "revoked", browsertest.Text(t, ctx, row+` [data-testid="key-status"]`))
	res = f.api.Do(t, "GET", prices, secret, nil)
	assert.Equal(t, http.StatusUnauthorized, res.Status, "the API refuses the revoked key: %s", res.Body)

	// A model price whose id carries markup and a javascript: URL: set, then deleted after the
	// confirm step.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.SendKeys(chromedp.CSS(`#p-model`), xssLink+xssImg),
		chromedp.SendKeys(chromedp.CSS(`#p-in`), "0.5"),
		chromedp.SendKeys(chromedp.CSS(`#p-out`), "2"),
		chromedp.Click(chromedp.CSS(`[data-testid="set-price"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="price"]`)),
	))
	model := strings.ToLower(xssLink + xssImg)
	got := f.api.MustDo(t, "GET", prices+"/"+url.PathEscape(model), f.api.A.Key, nil).Map(t)
	assert.Equal(t, "project_price", got["source"])
	assertNoInjected(t, ctx, "a key's name or a model id")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="delete-price-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="delete-price"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="delete-price"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="no-prices"]`)),
	))
	list := f.api.MustDo(t, "GET", prices, f.api.A.Key, nil).Map(t)
	assert.Empty(t, list["overrides"])

	assert.Zero(t, dialogs.Load(), "a dialog opened: user data ran as script")
}
