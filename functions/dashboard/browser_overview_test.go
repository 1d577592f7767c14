package dashboard_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/browsertest"
)

// TestOverviewSessionsInBrowser drives the overview, sessions and traces filter in headless
// Chromium: sign in on the overview (its SVG charts have a bar per hour and a point per hour
// with traces), open the sessions, filter them through the form, open a session, one of its traces, and filter the traces by tag
// through the form. Trace names, session names, tags and judge names carry markup and
// javascript: links: no dialog may open and no element may be made from them.
func TestOverviewSessionsInBrowser(t *testing.T) {
	f := newStreamFixture(t)
	now := time.Now().UTC()
	sessionID := uuid.NewString()
	evil := map[string]string{"env": "prod", "link": xssLink, "html": xssImg}
	traceIDs, children := f.seedTraces(t, f.api.A,
		seeded{name: xssImg, start: now.Add(-3 * time.Hour), duration: time.Second, cost: 0.5, prompt: "greeter", session: sessionID, tags: evil},
		seeded{name: xssScript, start: now.Add(-time.Hour), duration: 4 * time.Second, cost: 0.25, failed: true, prompt: "greeter", session: sessionID},
		seeded{name: "plain", start: now.Add(-time.Hour), duration: 2 * time.Second, tags: map[string]string{"env": "dev"}},
	)
	f.api.MustDo(t, "POST", "/sessions", f.api.A.Key, []any{map[string]any{"id": sessionID, "project_id": f.api.A.ProjectID, "name": xssScript, "tags": evil}})
	f.createJudge(t, f.api.A, xssImg, map[string]bool{children[0]: false, children[1]: true})
	f.api.DrainStream(t)

	ctx := browsertest.Start(t, 360, 2*time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL
	// Sign in on the overview: four bar charts of 24 bars, p50 and p95 points in two hours.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), f.api.A.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="chart-traces"] svg`)),
	))
	assert.Equal(t, "3", browsertest.Text(t, ctx, `[data-testid="trace-count"]`))
	assert.Equal(t, "$0.750000", browsertest.Text(t, ctx, `[data-testid="cost"]`))
	for _, id := range []string{"chart-traces", "chart-spans", "chart-cost", "chart-errors"} {
		assert.Equal(t, 24, countOf(t, ctx, `[data-testid="`+id+`"] svg rect[data-testid="bar"]`), id)
	}
	assert.Equal(t, 4, countOf(t, ctx, `[data-testid="chart-latency"] svg circle[data-testid="point"]`))
	assert.Equal(t, 5, countOf(t, ctx, `svg[role="img"][aria-labelledby]`), "every chart has a text alternative")
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="failing-judges"]`), xssImg, "the judge's name as text")
	assert.Empty(t, browsertest.Value(t, ctx, overflowing), "the overview fits 360 px")
	assertNoInjected(t, ctx, "user data on the overview")

	// A week: seven daily bars.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="range-7d"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="range-7d"][aria-current="page"]`)),
	))
	assert.Equal(t, 7, countOf(t, ctx, `[data-testid="chart-traces"] svg rect[data-testid="bar"]`))

	// The sessions, as the API lists them.
	apiSessions := f.api.MustDo(t, "GET", "/sessions", f.api.A.Key, nil)
	var listed []map[string]any
	apiSessions.Decode(t, &listed)
	require.Len(t, listed, 1)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/sessions"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sessions"]`)),
	))
	assert.Equal(t, len(listed), countOf(t, ctx, `[data-testid="session-row"]`))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="session-row"]`), xssScript)
	assert.Empty(t, browsertest.Value(t, ctx, overflowing), "the sessions fit 360 px")
	assertNoInjected(t, ctx, "user data on the sessions")

	// Filter the sessions through the form at 360 px: by a tag carrying markup and without
	// errors, none; with errors, the one session (it has a failed trace).
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#f-tag-0`), "html="+xssImg),
		chromedp.SetValue(chromedp.CSS(`#f-has_error`), "false"),
		chromedp.Click(chromedp.CSS(`[data-testid="filter-sessions"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="no-sessions"]`)),
	))
	assert.Contains(t, browsertest.Value(t, ctx, chromedp.Location()), "has_error=false")
	assert.Contains(t, browsertest.Value(t, ctx, chromedp.Location()), "tag=html%3D%3Cimg")
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="no-sessions"]`), "No sessions match this filter.")
	assert.Empty(t, browsertest.Value(t, ctx, overflowing), "the sessions filter fits 360 px")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#f-has_error`), "true"),
		chromedp.Click(chromedp.CSS(`[data-testid="filter-sessions"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sessions"]`)),
	))
	assert.Contains(t, browsertest.Value(t, ctx, chromedp.Location()), "has_error=true")
	assert.Equal(t, 1, countOf(t, ctx, `[data-testid="session-row"]`))
	assert.Equal(t, "html="+xssImg, browsertest.Value(t, ctx, chromedp.Evaluate[string](`document.querySelector("#f-tag-0").value`)), "the tag kept in the form")
	assertNoInjected(t, ctx, "user data on the filtered sessions")

	// A session: its traces in the order they started, with totals.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="session-row"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="session-trace-list"]`)),
	))
	assert.Equal(t, base+"/ui/sessions/"+sessionID, browsertest.Value(t, ctx, chromedp.Location()))
	assert.Equal(t, xssScript, browsertest.Text(t, ctx, `[data-testid="session-name"]`))
	assert.Equal(t, 2, countOf(t, ctx, `[data-testid="session-trace"]`))
	assert.Equal(t, "$0.750000", browsertest.Text(t, ctx, `[data-testid="session-cost"]`))
	assert.Equal(t, "1", browsertest.Text(t, ctx, `[data-testid="session-errors"]`))
	assert.Equal(t, xssImg, browsertest.Text(t, ctx, `[data-testid="session-trace"] td:nth-child(2)`), "the first to start first")
	assertNoInjected(t, ctx, "user data on the session")

	// Follow the first trace.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="session-trace"] td:nth-child(2) a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="span-tree"]`)),
	))
	assert.Equal(t, base+"/ui/traces/"+traceIDs[0], browsertest.Value(t, ctx, chromedp.Location()))

	// Filter the traces by tag through the form: a shareable URL, one trace.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/traces"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="traces"]`)),
	))
	assert.Equal(t, 3, countOf(t, ctx, `[data-testid="trace-row"]`))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#f-tag-0`), "html="+xssImg),
		chromedp.Click(chromedp.CSS(`[data-testid="filter-traces"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#f-tag-1`)),
	))
	assert.Contains(t, browsertest.Value(t, ctx, chromedp.Location()), "/ui/traces?")
	assert.Contains(t, browsertest.Value(t, ctx, chromedp.Location()), "tag=html%3D%3Cimg")
	assert.Equal(t, 1, countOf(t, ctx, `[data-testid="trace-row"]`))
	assert.Equal(t, xssImg, browsertest.Text(t, ctx, `[data-testid="trace-row"] a`))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#f-tag-1`), "env=dev"),
		chromedp.Click(chromedp.CSS(`[data-testid="filter-traces"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="no-traces"]`)),
	))
	assert.Zero(t, countOf(t, ctx, `[data-testid="trace-row"]`), "html=<img...> and env=dev: no trace has both")
	assertNoInjected(t, ctx, "user data on the traces")

	// A bad filter is a page saying what is wrong.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/traces?tag="+xssLink),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-message"]`)),
	))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="error-message"]`), "A tag filter is key=value")
	assertNoInjected(t, ctx, "user data on the error page")

	assert.Zero(t, dialogs.Load(), "a dialog opened: user data ran as script")
}
