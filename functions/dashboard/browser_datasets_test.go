package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/browsertest"
)

// TestDatasetsInBrowser walks, in headless Chromium at 360 px, from the main nav's Datasets to
// a dataset (its rows, the next page of them), to one of its experiments (results, scores, the
// compare form) and to the two experiments compared (the differing rows first), then from a
// result to its trace; every page passes axe-core's WCAG 2 A/AA and best-practice rules
// (serious and critical), has one h1, fits 360 px outside its scrolling tables, and shows the
// markup of rows and outputs as text (no dialog, no element made from it).
func TestDatasetsInBrowser(t *testing.T) {
	axeSource := axeScript(t)
	f := newFixture(t)
	a := f.api.A
	traceID, _ := f.seedTrace(t, a.Key, "task", 1, nil)
	d := f.seedDataset(t, a, "capitals", "Countries and <b>capitals</b>", 1, 60)
	baseline := f.seedExperiment(t, a, d, "baseline", func(i int) string { return fmt.Sprintf("answer %d ok", i) }, traceID)
	candidate := f.seedExperiment(t, a, d, "candidate", func(i int) string {
		if i%3 == 0 {
			return fmt.Sprintf(`<img src=x onerror=alert(%d)> wrong`, i)
		}
		return fmt.Sprintf("answer %d ok", i)
	}, "")

	ctx := browsertest.Start(t, 360, 3*time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL
	signInBrowser(t, ctx, f)

	// The nav's Datasets: the project's datasets.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`nav a[href="/ui/datasets"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="datasets"]`)),
	))
	assert.Equal(t, "capitals", browsertest.Text(t, ctx, `[data-testid="dataset-name"]`))
	assertAccessible(t, ctx, axeSource, "datasets")

	// The dataset: its version, its first 50 rows, its experiments; then the next rows.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="dataset-name"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="dataset-rows"]`)),
	))
	assert.Equal(t, 50, countOf(t, ctx, `[data-testid="data-row"]`))
	assert.Equal(t, 2, countOf(t, ctx, `[data-testid="experiment-row"]`))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="row-data"]`), `<img src=x onerror=alert(0)>`, "a row's markup as text")
	assertAccessible(t, ctx, axeSource, "dataset")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="next-rows"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="dataset-rows"] caption`)),
	))
	assert.Equal(t, "Rows 51–60 of 60", browsertest.Text(t, ctx, `[data-testid="dataset-rows"] caption`))
	assert.Equal(t, 10, countOf(t, ctx, `[data-testid="data-row"]`))

	// The candidate experiment (the newest): its results with their scores.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="experiment-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="experiment-results"]`)),
	))
	assert.Equal(t, base+"/ui/experiments/"+candidate, browsertest.Value(t, ctx, chromedp.Location()))
	assert.Equal(t, 50, countOf(t, ctx, `[data-testid="result-row"]`))
	assert.Equal(t, 50, countOf(t, ctx, `[data-testid="result-score"]`))
	assert.Positive(t, browsertest.Value(t, ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll('[data-testid="result-output"]')).
		filter(e => e.textContent.includes("<img src=x")).length`)), "an output's markup as text")
	assertAccessible(t, ctx, axeSource, "experiment")

	// Compare it with the baseline through the form: the differing rows first.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#c-with`), baseline),
		chromedp.Click(chromedp.CSS(`[data-testid="compare"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="compare-rows"]`)),
	))
	loc := browsertest.Value(t, ctx, chromedp.Location())
	assert.True(t, strings.HasPrefix(loc, base+"/ui/experiments/compare?ids="+candidate+"&ids="+baseline), loc)
	differs := browsertest.Value(t, ctx, chromedp.Evaluate[[]bool](
		`Array.from(document.querySelectorAll('[data-testid="compare-row"]'), r => r.dataset.differs === "true")`))
	require.Len(t, differs, 50)
	firstSame := 0
	for firstSame < len(differs) && differs[firstSame] {
		firstSame++
	}
	assert.Positive(t, firstSame, "rows that differ")
	assert.NotContains(t, differs[firstSame:], true, "the differing rows first")
	assert.Equal(t, 2, countOf(t, ctx, `[data-testid="compare-metric"]`), "the column metric and the run metric")
	assert.Equal(t, 1, countOf(t, ctx, `[data-testid="compare-evaluator"]`), "the row evaluator's aggregates")
	assertAccessible(t, ctx, axeSource, "compare")

	// The baseline from the compare page, and a result's trace.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/experiments/"+baseline),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="result-trace"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="result-trace"]`)),
		chromedp.WaitVisible(chromedp.CSS(`h1`)),
	))
	assert.Equal(t, base+"/ui/traces/"+traceID, browsertest.Value(t, ctx, chromedp.Location()))
	assert.Zero(t, dialogs.Load(), "a dialog opened: user data ran as script")
}

// axeScript is axe-core's source (PLUME_TEST_AXE).
func axeScript(t *testing.T) []byte {
	t.Helper()
	path := os.Getenv(axeEnv)
	if path == "" {
		t.Fatalf("%s is not set: run the tests with `make test`, which installs axe-core (npm) into .cache", axeEnv)
	}
	src, err := os.ReadFile(path)
	require.NoError(t, err, "read axe-core from %s=%s", axeEnv, path)
	return src
}

// assertAccessible checks the page of ctx as TestEveryPageInBrowser checks every page: no
// serious or critical axe-core violation, exactly one h1, nothing wider than the window outside
// a .scroll region, no element made from user text.
func assertAccessible(t *testing.T, ctx context.Context, axeSource []byte, at string) {
	t.Helper()
	assert.Equal(t, 1, countOf(t, ctx, "h1"), "%s: one h1", at)
	assert.Empty(t, browsertest.Value(t, ctx, overflowing), "%s fits the window", at)
	assertNoInjected(t, ctx, "user data on "+at)
	require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](string(axeSource))), "inject axe-core into %s", at)
	for _, v := range browsertest.Value(t, ctx, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise)) {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("%s: axe %s (%s): %s; at %s", at, v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", "))
		}
	}
}
