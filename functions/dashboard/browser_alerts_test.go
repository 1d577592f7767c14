package dashboard_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/browsertest"
)

// TestAlertsInBrowser drives the monitors, webhooks and events pages in headless Chromium as an
// admin: create a monitor whose name carries markup from the form, change, pause and resume it, create a
// webhook and read its secret once, see a delivery in its log and redeliver it, read the event
// log by type. Each page, with its rows, passes axe-core's serious and critical WCAG 2 A/AA
// rules (TestEveryPageInBrowser checks the same pages empty). No dialog may open.
func TestAlertsInBrowser(t *testing.T) {
	axePath := os.Getenv(axeEnv)
	if axePath == "" {
		t.Fatalf("%s is not set: run the tests with `make test`, which installs axe-core into .cache", axeEnv)
	}
	axeSource, err := os.ReadFile(axePath)
	require.NoError(t, err)
	f := newAlertsFixture(t)
	ctx := browsertest.Start(t, 1280, 2*time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL
	name := xssScript + xssImg
	accessible := func(what string) {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](string(axeSource))))
		for _, v := range browsertest.Value(t, ctx, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise)) {
			if v.Impact == "serious" || v.Impact == "critical" {
				t.Errorf("%s: axe %s (%s): %s; at %s", what, v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", "))
			}
		}
	}

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/monitors"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), f.api.A.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="monitor-form"]`)),
	))
	accessible("the empty monitors page")

	// A monitor from the form, then changed.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#m-name`), name),
		chromedp.SetValue(chromedp.CSS(`#m-thr`), "0.05"),
		chromedp.Click(chromedp.CSS(`[data-testid="create-monitor"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="monitor-edit-form"]`)),
	))
	assert.Equal(t, "no data", browsertest.Text(t, ctx, `[data-testid="monitor-state"]`))
	assert.Equal(t, "gt 0.05, resolves at 0.05", browsertest.Text(t, ctx, `[data-testid="monitor-rule"]`))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#m-thr`), "0.1"),
		chromedp.SetValue(chromedp.CSS(`#m-rthr`), "0.05"),
		chromedp.Click(chromedp.CSS(`[data-testid="save-monitor"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="monitor-saved"]`)),
	))
	assert.Equal(t, "gt 0.1, resolves at 0.05", browsertest.Text(t, ctx, `[data-testid="monitor-rule"]`))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="pause-monitor"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="monitor-paused"]`)),
	))
	accessible("a paused monitor's page")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="resume-monitor"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="pause-monitor"]`)),
	))
	accessible("a monitor's page")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/monitors"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="monitor-row"]`)),
	))
	assert.Equal(t, name, browsertest.Text(t, ctx, `[data-testid="monitor-name"]`), "the name as text")
	accessible("the monitors page")
	assertNoInjected(t, ctx, "a monitor's name")

	// A webhook from the form: its secret once.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/webhooks"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="webhook-form"]`)),
	))
	accessible("the empty webhooks page")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#w-url`), receiver(t)),
		chromedp.Click(chromedp.CSS(`[data-testid="webhook-event"][value="`+api.EventPromptVersionCreated+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="create-webhook"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="secret"]`)),
	))
	secret := browsertest.Value(t, ctx, chromedp.Value(chromedp.CSS(`[data-testid="secret"]`)))
	require.True(t, strings.HasPrefix(secret, "whsec_"), secret)
	accessible("the new webhook's page")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="secret-gone"]`)),
	))

	// An event delivered to it, then redelivered from its page.
	f.api.EnsurePrompt(t, f.api.A, "bot", "v1")
	f.api.DrainStream(t)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/webhooks"),
		chromedp.Click(chromedp.CSS(`[data-testid="webhook-url"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="webhook"]`)),
	))
	require.Eventually(t, func() bool {
		require.NoError(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid="webhook"]`))))
		return browsertest.Value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="delivery-row"]').length`)) == 1
	}, 20*time.Second, 100*time.Millisecond, "the delivery shows")
	accessible("a webhook's delivery log")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="redeliver"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="redelivered"]`)),
	))

	// The event log, by type.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/events"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="event-row"]`)),
	))
	accessible("the events page")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#ev-type`), api.EventPromptTagMoved),
		chromedp.Click(chromedp.CSS(`[data-testid="events-apply"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="no-events"]`)),
	))
	assert.Contains(t, browsertest.Value(t, ctx, chromedp.Location()), "type=prompt.tag.moved")
	assert.Zero(t, dialogs.Load(), "a dialog opened: user data ran as script")
}
