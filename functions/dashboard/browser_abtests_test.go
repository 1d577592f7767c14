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

// TestABTestsInBrowser drives the A/B test pages in headless Chromium at 360 px: reach the
// list from the main nav, open a test's report (its variants, choices, means and intervals,
// "not yet" before the horizon), then a span's page with the signals recorded on it. Variant
// values and signal names carry markup: no dialog may open and no element may be made from
// them.
func TestABTestsInBrowser(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	var sigs []any
	for i := range 6 {
		id, variant := uuid.NewString(), []string{"control", "treat"}[i%2]
		f.api.MustDo(t, "POST", "/ab-choices", a.Key, map[string]any{"entity_type": "span", "entity_id": id, "choice_name": "model-test",
			"variant_key": variant, "variant_value": xssImg, "variants": map[string]any{"control": xssImg, "treat": xssScript},
			"weights": map[string]any{"control": 0.5, "treat": 0.5}, "duration_days": 14})
		sigs = append(sigs, map[string]any{"entity_type": "span", "entity_id": id, "name": xssScript, "value": i})
	}
	traceID, ids := f.seedTrace(t, a.Key, "checkout", 1, nil)
	sigs = append(sigs, map[string]any{"entity_type": "span", "entity_id": ids[1], "name": xssImg, "value": true})
	f.api.MustDo(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": sigs})

	ctx := browsertest.Start(t, 360, 2*time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), a.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav a[href="/ui/ab-tests"]`)),
		chromedp.Click(chromedp.CSS(`nav a[href="/ui/ab-tests"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="ab-tests"]`)),
	))
	assert.Equal(t, 1, countOf(t, ctx, `[data-testid="ab-test-row"]`))
	assert.Equal(t, "running", browsertest.Text(t, ctx, `[data-testid="ab-test-status"]`))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="ab-test-variants"]`), "control = "+xssImg+" (50%), control")
	assert.Empty(t, browsertest.Value(t, ctx, overflowing), "the list fits 360 px")
	assertNoInjected(t, ctx, "variant values on the list")

	// The report: three entities a variant; the signal's means (control 0, 2, 4; treat 1, 3, 5).
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="ab-test-name"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="ab-variants"]`)),
	))
	assert.Equal(t, base+"/ui/ab-tests/model-test", browsertest.Value(t, ctx, chromedp.Location()))
	assert.Equal(t, 2, countOf(t, ctx, `[data-testid="ab-variant-row"]`))
	assert.Equal(t, "3", browsertest.Text(t, ctx, `[data-testid="ab-variant-row"] [data-testid="ab-choices"]`))
	means := browsertest.Value(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid="ab-mean"]')).map(e => e.textContent)`))
	assert.Equal(t, []string{"2", "3"}, means)
	assert.Equal(t, "[-2.968, 6.968]", browsertest.Text(t, ctx, `[data-testid="ab-interval"]`), "2 ± t(0.975; 2) 4.302653 × 2/√3 = 4.968")
	assert.Equal(t, "not yet", browsertest.Text(t, ctx, `[data-testid="ab-significant"]`))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="ab-signals"]`), xssScript, "the signal's name as text")
	assert.Empty(t, browsertest.Value(t, ctx, overflowing), "the report fits 360 px")
	assertNoInjected(t, ctx, "variant values and signal names on the report")

	// A span's page shows its signals.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/traces/"+traceID+"/spans/"+ids[1]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="signals"]`)),
	))
	assert.Equal(t, 1, countOf(t, ctx, `[data-testid="signal-row"]`))
	assert.Equal(t, "true", browsertest.Text(t, ctx, `[data-testid="signal-value"]`))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="signal-row"]`), xssImg)
	assertNoInjected(t, ctx, "signal names on the span")

	assert.Zero(t, dialogs.Load(), "a dialog opened: user data ran as script")
}
