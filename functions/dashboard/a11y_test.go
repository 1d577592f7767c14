package dashboard_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/browsertest"
)

// axeEnv names the variable holding the path of axe-core's axe.min.js (npm axe-core), which
// make test installs into .cache (scripts/lib.sh, axe_fetch).
const axeEnv = "PLUME_TEST_AXE"

// axeRun runs axe-core on the page with the WCAG 2 A and AA rules and the best practices, and
// returns its violations.
const axeRun = `axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "best-practice"]}, resultTypes: ["violations"]}).
	then(r => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map(n => n.target.join(" "))})))`

// axeViolation is one rule that axe-core found broken on a page, and where.
type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// TestEveryPageInBrowser visits every dashboard page reachable by links from /ui/ (one per
// route shape, the crawl of TestScreenshots over the same seeded project), and the sign-in
// page, at 360 and 1280 px wide, in one headless Chromium. On each: no serious or critical
// violation of axe-core's WCAG 2 A/AA and best-practice rules (lesser ones are logged), exactly
// one h1, no Content-Security-Policy violation, no console error or uncaught exception, and at
// 360 px no element wider than the window outside a .scroll region.
func TestEveryPageInBrowser(t *testing.T) {
	axePath := os.Getenv(axeEnv)
	if axePath == "" {
		t.Fatalf("%s is not set: run the tests with `make test`, which installs axe-core (npm) into .cache, or from the "+
			"repository's root: export %s=$(bash -c '. scripts/lib.sh && axe_fetch && echo \"$AXE_CORE_JS\"')", axeEnv, axeEnv)
	}
	axeSource, err := os.ReadFile(axePath)
	require.NoError(t, err, "read axe-core from %s=%s", axeEnv, axePath)

	f := newShowcase(t)
	ctx := browsertest.Start(t, 1280, 5*time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL

	// What the page reports as it loads: CSP violations (through a binding the page calls from
	// its securitypolicyviolation listener), console errors, uncaught exceptions and error
	// entries of the browser's log (a failed load). Listen sees each event before the command
	// that follows it returns.
	var mu sync.Mutex
	var reported []string
	report := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, s)
	}
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventBindingCalled:
			if ev.Name == "plumeCSPViolation" {
				report("Content-Security-Policy violation: " + ev.Payload)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				args := make([]string, 0, len(ev.Args))
				for _, a := range ev.Args {
					if a.Value != nil {
						args = append(args, string(a.Value))
					} else {
						args = append(args, a.Description)
					}
				}
				report("console." + string(ev.Type) + ": " + strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			report(fmt.Sprintf("uncaught exception: %s (%s:%d)", msg, d.URL, d.LineNumber))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				report(fmt.Sprintf("console error (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	}))
	_, err = chromedp.Call(ctx, log.Enable, cdp.Empty{})
	require.NoError(t, err)
	_, err = chromedp.Call(ctx, runtime.AddBinding, runtime.AddBindingParams{Name: "plumeCSPViolation"})
	require.NoError(t, err)
	_, err = chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
		Source: `document.addEventListener("securitypolicyviolation", e => plumeCSPViolation(
			e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber))`,
	})
	require.NoError(t, err)

	// check loads target at each width and records what is wrong with it. errorPages are the
	// targets answered with an error page, whose load the browser logs as failed.
	errorPages := map[string]bool{}
	start := time.Now()
	check := func(target string) {
		for _, width := range []int64{360, 1280} {
			at := fmt.Sprintf("%s (%s) at %d px", shapeOf(target), target, width)
			mu.Lock()
			reported = nil
			mu.Unlock()
			require.NoError(t, chromedp.Do(ctx,
				chromedp.EmulateViewport(width, 900),
				chromedp.Navigate(base+target),
				chromedp.WaitReady(chromedp.CSS(`body`)),
			), at)
			if h1 := browsertest.Value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("h1").length`)); h1 != 1 {
				t.Errorf("%s: %d h1 elements, want exactly one", at, h1)
			}
			if width == 360 {
				if over := browsertest.Value(t, ctx, overflowing); over != "" {
					t.Errorf("%s: wider than the window outside a .scroll region: %s", at, over)
				}
			}
			require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](string(axeSource))), "inject axe-core into %s", at)
			violations := browsertest.Value(t, ctx, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise))
			for _, v := range violations {
				if v.Impact == "serious" || v.Impact == "critical" {
					t.Errorf("%s: axe %s (%s): %s; at %s", at, v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", "))
				} else {
					t.Logf("%s: axe %s (%s, not failing the test): %s; at %s", at, v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", "))
				}
			}
			mu.Lock()
			for _, r := range reported {
				if errorPages[target] && strings.HasPrefix(r, "console error (network):") && strings.HasSuffix(r, " "+base+target) {
					continue // the error page's own status
				}
				t.Errorf("%s: %s", at, r)
			}
			mu.Unlock()
		}
	}

	check("/ui/login")
	signInBrowser(t, ctx, f)
	shapes := crawl(t, ctx, check)
	// Pages no link leads to: a form's GET step, filtered lists, error pages (400 and 404).
	errorPages["/ui/traces?sort=sideways"] = true
	errorPages["/ui/traces/00000000-0000-4000-8000-000000000000"] = true
	for _, target := range append(f.signalPages,
		"/ui/prompts/support-reply/pin?tag=staging&version=1",
		"/ui/traces?status=error&sort=cost&duration_min=1",
		"/ui/sessions?has_error=true&sort=traces",
		"/ui/traces?sort=sideways",
		"/ui/traces/00000000-0000-4000-8000-000000000000",
	) {
		check(target)
		shapes = append(shapes, target)
	}
	t.Logf("checked %d pages (the sign-in page and %d route shapes) at 360 and 1280 px in %s: %s",
		len(shapes)+1, len(shapes), time.Since(start).Round(time.Second), strings.Join(shapes, " "))
	require.Greater(t, len(shapes), 10, "the crawl reached too few pages: is the overview's navigation there?")
	require.Zero(t, dialogs.Load(), "a page opened a dialog")
}
