package dashboard_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/browsertest"
)

// TestScreenshots is a tool for people, not a check: with PLUME_UI_SHOTS=<dir> it signs in to a
// seeded project, visits every dashboard page reachable by a link from the overview (one page
// per route shape), saves a screenshot of each at 1280 and 360 px wide under dir, and logs each
// page's weight (document, script and style bytes as the browser received them) and its
// horizontal overflow at 360 px (a page wider than the screen). Without the variable it is
// skipped.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("PLUME_UI_SHOTS")
	if dir == "" {
		t.Skip("set PLUME_UI_SHOTS to a directory to take the dashboard's screenshots")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	f := newShowcase(t)
	ctx := browsertest.Start(t, 1280, 10*time.Minute)
	base := f.srv.URL
	signInBrowser(t, ctx, f)
	crawl(t, ctx, func(target string) {
		name := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(shapeOf(target)), "-"), "-")
		for _, width := range []int64{1280, 360} {
			require.NoError(t, chromedp.Do(ctx,
				chromedp.EmulateViewport(width, 900),
				chromedp.Navigate(base+target),
				chromedp.WaitReady(chromedp.CSS(`body`)),
			))
			shot := browsertest.Value(t, ctx, chromedp.FullScreenshot(100))
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width)), shot, 0o644))
			if width == 1280 {
				weight := browsertest.Value(t, ctx, chromedp.Evaluate[int](`(() => {
					const nav = performance.getEntriesByType("navigation")[0];
					return performance.getEntriesByType("resource").reduce((n, r) => n + r.encodedBodySize, nav.encodedBodySize);
				})()`))
				t.Logf("page %-48s %7d bytes  %s", shapeOf(target), weight, target)
			} else if over := browsertest.Value(t, ctx, overflowing); over != "" {
				t.Logf("page %-48s overflows 360 px: %s", shapeOf(target), over)
			}
		}
	})
}

// overflowing lists the elements of the page (tag and classes) that reach past the window's
// right edge outside a .scroll region (a wrapper that scrolls on its own).
var overflowing = chromedp.Evaluate[string](`Array.from(document.querySelectorAll("body *")).
	filter(e => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest(".scroll")).
	map(e => e.tagName + "." + e.className).join(" ")`)

// madeFromText counts the elements in the page's main content that user text could have made
// if it were not escaped: images, scripts, javascript: links, event handlers. (A trace's page
// shows attachment images: its test counts without them.)
var madeFromText = chromedp.Evaluate[int](`document.querySelectorAll('main img, main script, main a[href^="javascript"], main [onerror], main [onclick]').length`)

// assertNoInjected checks that the page of ctx has no element made from user text;
// from says whose text.
func assertNoInjected(t *testing.T, ctx context.Context, from string) {
	t.Helper()
	assert.Zero(t, browsertest.Value(t, ctx, madeFromText), "an element made from %s", from)
}

// countOf is the number of elements sel selects in the page of ctx.
func countOf(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	return browsertest.Value(t, ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
}

// signInBrowser signs in to f's dashboard in the browser ctx with the key of f's project A.
func signInBrowser(t *testing.T, ctx context.Context, f *fixture) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+"/ui/login"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), f.api.A.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-out"]`)),
	))
}

// crawl visits, in the signed-in browser ctx, every dashboard page reachable by links from
// /ui/, one page per route shape (shapeOf), at most 60: visit loads the page at target (a path
// and query, at the widths it wants) and checks or records it; then the links to /ui/ of the
// page as visit left it join the queue. It returns the shapes visited, in order.
func crawl(t *testing.T, ctx context.Context, visit func(target string)) []string {
	t.Helper()
	queue, seen, shapes := []string{"/ui/"}, map[string]bool{}, []string(nil)
	for len(queue) > 0 && len(shapes) < 60 {
		target := queue[0]
		queue = queue[1:]
		if seen[shapeOf(target)] {
			continue
		}
		seen[shapeOf(target)] = true
		shapes = append(shapes, shapeOf(target))
		visit(target)
		links := browsertest.Value(t, ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('a[href^="/ui/"]'), a => a.getAttribute("href"))`))
		for _, l := range links {
			u, err := url.Parse(l)
			if err != nil || strings.HasPrefix(u.Path, "/ui/assets/") || slices.Contains(queue, u.RequestURI()) {
				continue
			}
			queue = append(queue, u.RequestURI())
		}
	}
	return shapes
}

var idSegment = regexp.MustCompile(`/(?:[0-9a-f]{8}-[0-9a-f-]{27}|[0-9]+)(/|$)`)

// shapeOf is a page's route shape: ids in its path replaced, the names of its query parameters
// kept (a filtered list and a diff are pages of their own).
func shapeOf(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	p := u.Path
	for idSegment.MatchString(p) {
		p = idSegment.ReplaceAllString(p, "/{id}$1")
	}
	keys := make([]string, 0, len(u.Query()))
	for k := range u.Query() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		p += "?" + strings.Join(keys, "&")
	}
	return p
}

// newShowcase is the dashboard over a project with something on every page: traces in
// sessions (llm spans of a prompt, an error), two versions of a prompt with feedback, a judge
// with evaluations, a succeeded optimization run (the fake model server), a feedback link, a
// price, a dataset with two experiments, a webhook and a monitor that notifies it.
func newShowcase(t *testing.T) *fixture {
	t.Helper()
	f := newOptimizeFixture(t, true, gatewayConfig)
	a, ctx := f.api.A, context.Background()
	require.NoError(t, f.api.Env.GatewayLimits().Record(ctx, a.ProjectID, 4200, 1.23)) // the gateway page's meters
	rest := f.restClient(t, a)
	judgeID := f.seedOptimizable(t, a, "support-reply", "You answer support questions for {{product}}. Be brief.")
	v2 := f.api.EnsurePrompt(t, a, "support-reply", "You answer support questions for {{product}}. Be brief and kind; cite the docs.")
	at := time.Now().Add(-3 * time.Hour)
	for i := range 12 {
		session := fmt.Sprintf("sess-%d", i%3)
		traceID, ids := f.seedTrace(t, a.Key, fmt.Sprintf("handle ticket %d", i), 3, func(j int, s map[string]any) {
			s["session_id"] = session
			if i%5 == 0 && j == 2 {
				s["status"], s["error_message"] = "error", "upstream timed out"
			}
		})
		llm := apitest.LLMSpan(uuid.NewString(), traceID, session, "support-reply", v2,
			`[{"role":"system","content":"You answer support questions."},{"role":"user","content":"Where is my order?"}]`,
			"It ships tomorrow.", at.Add(time.Duration(i)*10*time.Minute))
		llm["parent_span_id"] = ids[0]
		f.api.MustDo(t, "POST", "/spans", a.Key, []any{llm})
	}
	// An A/B test with its report, and signals on a span, its trace and its session.
	f.seedABTest(t, a, "model-test")
	sigSession := uuid.NewString()
	sigTrace, sigSpans := f.seedTrace(t, a.Key, "checkout", 1, func(_ int, s map[string]any) { s["session_id"] = sigSession })
	f.api.MustDo(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": []any{
		map[string]any{"entity_type": "span", "entity_id": sigSpans[1], "name": "converted", "value": true},
		map[string]any{"entity_type": "trace", "entity_id": sigTrace, "name": "revenue", "value": 12.5},
		map[string]any{"entity_type": "session", "entity_id": sigSession, "name": "turns", "value": 3},
	}})
	f.signalPages = []string{"/ui/traces/" + sigTrace + "/spans/" + sigSpans[1], "/ui/traces/" + sigTrace, "/ui/sessions/" + sigSession}
	evals := make([]seededEval, 8)
	for i := range evals {
		evals[i] = seededEval{pass: i%3 != 0, at: time.Now().Add(-time.Duration(i) * time.Hour)}
	}
	f.seedEvaluations(t, a, judgeID, "support-reply", evals)
	_, err := rest.CreateFeedbackLink(ctx, api.LinkRequest{PromptSlug: "support-reply", LinkType: "prompt_completion"})
	require.NoError(t, err)
	_, err = rest.SetModelPrice(ctx, "openai/gpt-4o-mini", api.PutModelPriceRequest{Provider: "openai", Input: ptr(0.15), Output: ptr(0.6)})
	require.NoError(t, err)
	hook, err := rest.CreateWebhook(ctx, api.CreateWebhookRequest{URL: "https://hooks.example.com/plume", Events: []string{api.EventMonitorAlerted, api.EventMonitorResolved}})
	require.NoError(t, err)
	_, err = rest.CreateMonitor(ctx, api.CreateMonitorRequest{Name: "checkout errors", Metric: api.MonitorErrorRate, Window: "5m",
		Comparison: api.MonitorGT, Threshold: ptr(0.05), Notify: []string{hook.ID}})
	require.NoError(t, err)
	run, err := rest.StartPromptOptimization(ctx, "support-reply", api.OptimizationRunRequest{OptimizerType: "quick_refine"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		r, err := rest.OptimizationRun(ctx, run.ID)
		require.NoError(t, err)
		return r.Status == "succeeded" || r.Status == "failed"
	}, 2*time.Minute, 200*time.Millisecond, "the optimization run did not end")
	f.seedDatasetShowcase(t, a)
	return f
}
