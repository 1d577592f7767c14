package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Markup and links a client may put in any text field of a span: shown as text, never run.
const (
	xssScript = `<script>alert(1)</script>`
	xssImg    = `<img src=x onerror=alert(1)>`
	xssLink   = `javascript:alert(1)`
)

// TestDashboardInBrowser drives the dashboard in headless Chromium: sign in, list traces, open
// a trace and a span (its detail fetched by the script) whose fields carry markup, fold the
// tree, sign out (the old cookie no longer works), and a cross-site form post refused. No
// dialog may open at any point.
func TestDashboardInBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("this test needs headless Chromium on PATH (Debian: apt-get install chromium): %v", err)
	}
	f := newFixture(t)
	traceID, spans := f.seedTrace(t, f.api.A.Key, xssScript, 2, func(i int, s map[string]any) {
		if i == 0 {
			s["name"] = xssImg
			s["input_data"] = xssScript
			s["output_data"] = xssImg + ` <a href="` + xssLink + `">click</a>`
			s["tags"] = map[string]string{"link": xssLink, "html": xssImg}
			s["attributes"] = map[string]any{"url": xssLink, "html": xssScript}
			s["status"] = "error"
			s["error_message"] = xssScript
		}
	})
	ctx := startChromium(t, chromium)
	// A dialog would block the page: it is counted and dismissed from another goroutine.
	var dialogs atomic.Int32
	opening := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for _, err := range opening {
			if err != nil {
				return
			}
			dialogs.Add(1)
			_, _ = chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{})
		}
	}()
	base := f.srv.URL

	// Sign in from the page asked for.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/traces"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), f.api.A.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="traces"]`)),
	))
	assert.Equal(t, base+"/ui/traces", browserValue(t, ctx, chromedp.Location()), "back to the page asked for")
	assert.Contains(t, browserText(t, ctx, `[data-testid="traces"]`), xssScript, "the trace's name as text")

	// Open the trace, then the span: its detail comes from the script's fetch.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="trace-row"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="span-tree"]`)),
	))
	assert.Equal(t, base+"/ui/traces/"+traceID, browserValue(t, ctx, chromedp.Location()))
	assert.Equal(t, xssScript, browserText(t, ctx, `[data-testid="trace-name"]`))
	row := fmt.Sprintf(`[data-span-id="%s"]`, spans[1])
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(row+` a.open`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid="span-detail"]`)),
	))
	assert.Equal(t, base+"/ui/traces/"+traceID, browserValue(t, ctx, chromedp.Location()), "opened in place")
	assert.Equal(t, xssImg, browserText(t, ctx, row+` [data-testid="span-name"]`))
	assert.Equal(t, xssScript, browserText(t, ctx, row+` [data-testid="span-input"]`))
	assert.Contains(t, browserText(t, ctx, row+` [data-testid="span-output"]`), xssLink)
	assert.Contains(t, browserText(t, ctx, row+` [data-testid="span-tags"]`), xssLink)
	assert.Contains(t, browserText(t, ctx, row+` [data-testid="span-attributes"]`), xssLink)
	injected := browserValue(t, ctx, chromedp.Evaluate[int](
		`document.querySelectorAll('main img, main script, main a[href^="javascript"], main [onerror]').length`))
	assert.Zero(t, injected, "no element made from a span's text")

	// Fold the root: its children are hidden, and shown again.
	root := fmt.Sprintf(`[data-span-id="%s"]`, spans[0])
	isHidden := chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector('%s').hidden`, row))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(root+` button.fold`))))
	assert.True(t, browserValue(t, ctx, isHidden), "a folded span's children are hidden")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(root+` button.fold`))))
	assert.False(t, browserValue(t, ctx, isHidden))

	// Without the script, the span is a page of its own.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/traces/"+traceID+"/spans/"+spans[1]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="span-detail"]`)),
	))
	assert.Equal(t, xssScript, browserText(t, ctx, `[data-testid="span-input"]`))

	// A form posted from another site is refused, and the session lives on.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<form method="post" action="%s/ui/logout"><input name="csrf" value="guess"></form>`+
			`<script>document.forms[0].submit()</script>`, base)
	}))
	defer evil.Close()
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1) // another site than the dashboard's
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(evilURL),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-message"]`)),
	))
	assert.Equal(t, "Not allowed", browserText(t, ctx, "h1"))
	assert.Contains(t, browserText(t, ctx, `[data-testid="error-message"]`), "another site")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="trace-count"]`)),
	))

	// Sign out: the cookie the browser had no longer opens a page.
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/ui/"}})
	require.NoError(t, err)
	var old string
	for _, c := range cookies.Cookies {
		if c.Name == "plume_session" {
			old = c.Value
			assert.True(t, c.HTTPOnly)
		}
	}
	require.NotEmpty(t, old)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
	))
	replay := f.browser(t)
	u, err := url.Parse(base + "/ui/")
	require.NoError(t, err)
	replay.jar.SetCookies(u, []*http.Cookie{{Name: "plume_session", Value: old, Path: "/ui"}})
	assert.Equal(t, http.StatusUnauthorized, replay.get(t, "/ui/").Status, "the old cookie after sign-out")

	assert.Zero(t, dialogs.Load(), "a dialog opened: a span's text ran as script")
}

// browserValue runs a in the browser and returns its value.
func browserValue[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err)
	return v
}

// browserText returns the visible text of the element that the CSS selector sel finds.
func browserText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return browserValue(t, ctx, chromedp.Text(chromedp.CSS(sel)))
}

// startChromium starts one headless Chromium for t, with a fresh profile, and a minute for
// everything it does.
func startChromium(t *testing.T, execPath string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(execPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(360, 800),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	require.NoError(t, chromedp.Do(browserCtx), "start Chromium at %s", execPath)
	return browserCtx
}
