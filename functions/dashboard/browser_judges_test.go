package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/browsertest"
)

// TestJudgesInBrowser drives the judges pages in headless Chromium: create a judge through the
// form while the criteria preview follows the template as it is typed, link it to a prompt,
// filter its evaluations, calibrate two (agree, then disagree with an expected score) and see
// its agreement change. The judge's name and template carry markup, which stays text: no
// dialog opens.
func TestJudgesInBrowser(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	f.api.EnsurePrompt(t, a, "support-bot", "You answer support-bot questions.")
	ctx := browsertest.Start(t, 360, 2*time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL
	name := xssScript + " judge"

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/judges"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), a.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="no-judges"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="new-judge"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="judge-form"]`)),
	))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="criteria-preview"]`), "Write the template")

	// The preview follows the template as it is typed.
	preview := `[data-testid="criteria-preview"]`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#j-name`), name),
		chromedp.SendKeys(chromedp.CSS(`#j-template`), "Judge the answer.\n## Accuracy\nThe facts are right.\n"),
		chromedp.WaitVisible(chromedp.CSS(preview+` [data-testid="criterion"]`)),
	))
	assert.Contains(t, browsertest.Text(t, ctx, preview), "accuracy")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#j-template`), "## "+xssImg+"\n**Tone**: polite, see "+xssLink+"\n"),
		chromedp.WaitVisible(chromedp.CSS(preview+` [data-testid="criterion"]:nth-child(3)`)),
	))
	previewText := browsertest.Text(t, ctx, preview)
	assert.Contains(t, previewText, xssImg, "a criterion named with markup, as text")
	assert.Contains(t, previewText, "tone")

	// Create it: scored 1 to 10, passing at 6.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#j-type`), "scored"),
		chromedp.SendKeys(chromedp.CSS(`#j-min`), "1"),
		chromedp.SendKeys(chromedp.CSS(`#j-max`), "10"),
		chromedp.SendKeys(chromedp.CSS(`#j-pass`), "6"),
		chromedp.Click(chromedp.CSS(`[data-testid="save-judge"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="link-form"]`)),
	))
	judges := f.judgesAPI(t, a)
	require.Len(t, judges, 1)
	j := judges[0]
	assert.Equal(t, name, j.Name)
	assert.Len(t, j.Criteria, 3)
	assert.Equal(t, base+"/ui/judges/"+j.ID, browsertest.Value(t, ctx, chromedp.Location()))
	assert.Equal(t, name, browsertest.Text(t, ctx, `h1`))

	// Link it to the prompt.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#l-slug`), "support-bot"),
		chromedp.Click(chromedp.CSS(`[data-testid="link-prompt"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="linked-prompt"]`)),
	))
	assert.Equal(t, []string{"support-bot"}, f.judgeAPI(t, a, j.ID).LinkedPrompts)

	// Its evaluations, filtered to the passing ones.
	now := time.Now().UTC()
	spans, _ := f.seedEvaluations(t, a, j.ID, "support-bot", []seededEval{
		{score: ptrF(9), at: now.Add(-time.Hour)}, {score: ptrF(2), at: now.Add(-2 * time.Hour)}, {score: ptrF(7), at: now.Add(-3 * time.Hour)}})
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="evaluations"]`)),
		chromedp.SetValue(chromedp.CSS(`#f-result`), "pass"),
		chromedp.Click(chromedp.CSS(`[data-testid="filter"]`)),
		// Only the filtered page has the option selected in its markup.
		chromedp.WaitReady(chromedp.CSS(`#f-result option[value="pass"][selected]`)),
	))
	assert.Equal(t, base+"/ui/judges/"+j.ID+"?result=pass&calibrated=&min_score=&max_score=&prompt=&from=&to=", browsertest.Value(t, ctx, chromedp.Location()))
	assert.Equal(t, 2, browsertest.Value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="evaluation"]').length`)))
	assert.Equal(t, "–", browsertest.Text(t, ctx, `[data-testid="perf-accuracy"]`))

	// Agree with the 9, then disagree with the 7: the person expected 3.
	calibrate := func(spanID string, agree bool, expected string) {
		t.Helper()
		ev := `[data-testid="evaluation"][data-span-id="` + spanID + `"]`
		verdict := `input[value="agree"]`
		if !agree {
			verdict = `[data-testid="disagree"]`
		}
		actions := []chromedp.Action[chromedp.Void]{
			chromedp.Click(chromedp.CSS(ev + ` summary`)),
			chromedp.WaitVisible(chromedp.CSS(ev + ` [data-testid="calibrate"]`)),
			chromedp.Click(chromedp.CSS(ev + ` ` + verdict)),
		}
		if expected != "" {
			actions = append(actions, chromedp.SendKeys(chromedp.CSS(ev+` [data-testid="expected-score"]`), expected))
		}
		actions = append(actions,
			chromedp.Click(chromedp.CSS(ev+` [data-testid="calibrate"]`)),
			chromedp.WaitVisible(chromedp.CSS(ev+` [data-testid="calibrated"]`)),
		)
		require.NoError(t, chromedp.Do(ctx, actions...))
	}
	calibrate(spans[0], true, "")
	assert.Equal(t, "100%", browsertest.Text(t, ctx, `[data-testid="perf-accuracy"]`))
	assert.Contains(t, browsertest.Value(t, ctx, chromedp.Location()), "result=pass", "the filters kept")
	calibrate(spans[2], false, "3")
	assert.Equal(t, "50%", browsertest.Text(t, ctx, `[data-testid="perf-accuracy"]`))
	assert.Equal(t, "4.00", browsertest.Text(t, ctx, `[data-testid="perf-mae"]`))
	assert.Equal(t, "2", browsertest.Text(t, ctx, `[data-testid="perf-n"]`))
	var perf api.JudgePerformance
	f.api.MustDo(t, "GET", "/projects/"+a.ProjectID+"/judges/"+j.ID+"/performance", a.Key, nil).Decode(t, &perf)
	assert.Equal(t, api.VerdictCounts{TruePositive: 1, FalsePositive: 1}, perf.Verdict.Counts)

	// The span of an evaluation opens.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-span-id="`+spans[0]+`"] [data-testid="span-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="span-detail"]`)),
	))
	assert.True(t, strings.HasSuffix(browsertest.Value(t, ctx, chromedp.Location()), "/spans/"+spans[0]))

	// The list and the template versions carry the markup as text.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/judges"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="judges"]`)),
	))
	assert.Equal(t, name, browsertest.Text(t, ctx, `[data-testid="judge-name"]`))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/judges/"+j.ID),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="versions"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="version"] summary`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="version-template"]`)),
	))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="version-template"]`), xssImg)

	// A backfill of 3 spans, through its confirm step.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#b-count`), "3"),
		chromedp.Click(chromedp.CSS(`[data-testid="backfill"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="backfill-confirm"]`)),
	))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="backfill-confirm"]`), "up to 3 times")
	assert.Zero(t, f.backfills(t, a), "asking queues nothing")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="confirm-backfill"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="backfill-notice"]`)),
	))
	assert.Equal(t, 1, f.backfills(t, a))
	assertNoInjected(t, ctx, "a judge's text")
	assert.Zero(t, dialogs.Load(), "a dialog opened: a judge's text ran as script")
}
