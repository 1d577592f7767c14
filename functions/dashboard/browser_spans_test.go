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

// TestSpansInBrowser drives the spans page in headless Chromium at 360 px: reach it from the
// main nav, filter through the form by kind and errors (the spans the API answers for the
// same query), open a span, and follow the gateway page's link to the calls it recorded. Span
// names and tags carry markup and javascript: links: no dialog may open and no element may be
// made from them.
func TestSpansInBrowser(t *testing.T) {
	f := newFixture(t)
	now := time.Now().UTC()
	evil := map[string]string{"html": xssImg, "link": xssLink}
	f.seedTraces(t, f.api.A,
		seeded{name: xssImg, start: now.Add(-2 * time.Hour), duration: time.Second, cost: 0.5, prompt: "greeter", tags: evil},
		seeded{name: "plain", start: now.Add(-time.Hour), duration: 4 * time.Second, cost: 0.25, failed: true, prompt: "greeter"},
	)
	gatewayCall := span(uuid.NewString(), uuid.NewString(), "", xssScript, now.Add(-time.Minute), time.Second)
	gatewayCall["kind"], gatewayCall["tags"] = "llm", map[string]string{"integration": "gateway"}
	f.api.MustDo(t, "POST", "/spans", f.api.A.Key, []any{gatewayCall})

	ctx := browsertest.Start(t, 360, 2*time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL

	// Sign in, then the nav's Spans: every span, newest first.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), f.api.A.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav a[href="/ui/spans"]`)),
		chromedp.Click(chromedp.CSS(`nav a[href="/ui/spans"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="spans"]`)),
	))
	assert.Equal(t, 5, countOf(t, ctx, `[data-testid="span-row"]`), "two traces of two spans and the gateway's call")
	assert.Equal(t, xssScript, browsertest.Text(t, ctx, `[data-testid="span-row"] td a`), "the newest first, its name as text")
	assert.Empty(t, browsertest.Value(t, ctx, overflowing), "the spans fit 360 px")
	assertNoInjected(t, ctx, "user data on the spans")

	// Filter through the form: the failed llm calls, as GET /spans answers them.
	var apiSpans []map[string]any
	f.api.MustDo(t, "GET", "/spans?span_kind=llm&has_error=true", f.api.A.Key, nil).Decode(t, &apiSpans)
	require.Len(t, apiSpans, 1)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#f-kind`), "llm"),
		chromedp.SetValue(chromedp.CSS(`#f-has_error`), "true"),
		chromedp.Click(chromedp.CSS(`[data-testid="filter-spans"]`)),
		chromedp.WaitVisible(chromedp.CSS(`main form a[href="/ui/spans"]`)), // the filter's Clear link
	))
	assert.Contains(t, browsertest.Value(t, ctx, chromedp.Location()), "kind=llm")
	assert.Contains(t, browsertest.Value(t, ctx, chromedp.Location()), "has_error=true")
	assert.Equal(t, 1, countOf(t, ctx, `[data-testid="span-row"]`))
	assert.Equal(t, 1, countOf(t, ctx, `[data-testid="span-row"].err`), "its error highlighted")
	assert.Equal(t, "llm", browsertest.Value(t, ctx, chromedp.Evaluate[string](`document.querySelector("#f-kind").value`)), "the kind kept in the form")
	assert.Empty(t, browsertest.Value(t, ctx, overflowing), "the filtered spans fit 360 px")

	// Open it: the span's page.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="span-row"] td a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="span-detail"]`)),
	))
	assert.Equal(t, base+"/ui/traces/"+apiSpans[0]["trace_id"].(string)+"/spans/"+apiSpans[0]["id"].(string),
		browsertest.Value(t, ctx, chromedp.Location()))

	// The tags of a span carrying markup, through the form: one span.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/spans?kind=llm"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="spans"]`)),
		chromedp.SendKeys(chromedp.CSS(`#f-tag-0`), "html="+xssImg),
		chromedp.Click(chromedp.CSS(`[data-testid="filter-spans"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#f-tag-1`)),
	))
	assert.Equal(t, 1, countOf(t, ctx, `[data-testid="span-row"]`), "the llm child of the tagged trace")
	assertNoInjected(t, ctx, "user data on the spans by tag")

	// The gateway page's link: every call the gateway recorded.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/gateway"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="gateway-spans"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="gateway-spans"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="spans"]`)),
	))
	assert.Equal(t, 1, countOf(t, ctx, `[data-testid="span-row"]`))
	assert.Equal(t, xssScript, browsertest.Text(t, ctx, `[data-testid="span-row"] td a`))
	assert.Equal(t, "integration=gateway", browsertest.Value(t, ctx, chromedp.Evaluate[string](`document.querySelector("#f-tag-0").value`)))
	assertNoInjected(t, ctx, "user data on the gateway's spans")

	assert.Zero(t, dialogs.Load(), "a dialog opened: user data ran as script")
}
