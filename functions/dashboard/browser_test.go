package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/browsertest"
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
	ctx := browsertest.Start(t, 360, time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL

	// Sign in from the page asked for.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/traces"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), f.api.A.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="traces"]`)),
	))
	assert.Equal(t, base+"/ui/traces", browsertest.Value(t, ctx, chromedp.Location()), "back to the page asked for")
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="traces"]`), xssScript, "the trace's name as text")

	// Open the trace, then the span: its detail comes from the script's fetch.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="trace-row"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="span-tree"]`)),
	))
	assert.Equal(t, base+"/ui/traces/"+traceID, browsertest.Value(t, ctx, chromedp.Location()))
	assert.Equal(t, xssScript, browsertest.Text(t, ctx, `[data-testid="trace-name"]`))
	row := fmt.Sprintf(`[data-span-id="%s"]`, spans[1])
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(row+` a.open`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid="span-detail"]`)),
	))
	assert.Equal(t, base+"/ui/traces/"+traceID, browsertest.Value(t, ctx, chromedp.Location()), "opened in place")
	assert.Equal(t, xssImg, browsertest.Text(t, ctx, row+` [data-testid="span-name"]`))
	assert.Equal(t, xssScript, browsertest.Text(t, ctx, row+` [data-testid="span-input"]`))
	assert.Contains(t, browsertest.Text(t, ctx, row+` [data-testid="span-output"]`), xssLink)
	assert.Contains(t, browsertest.Text(t, ctx, row+` [data-testid="span-tags"]`), xssLink)
	assert.Contains(t, browsertest.Text(t, ctx, row+` [data-testid="span-attributes"]`), xssLink)
	assertNoInjected(t, ctx, "a span's text")

	// Fold the root: its children are hidden, and shown again.
	root := fmt.Sprintf(`[data-span-id="%s"]`, spans[0])
	isHidden := chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector('%s').hidden`, row))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(root+` button.fold`))))
	assert.True(t, browsertest.Value(t, ctx, isHidden), "a folded span's children are hidden")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(root+` button.fold`))))
	assert.False(t, browsertest.Value(t, ctx, isHidden))

	// Without the script, the span is a page of its own.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/traces/"+traceID+"/spans/"+spans[1]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="span-detail"]`)),
	))
	assert.Equal(t, xssScript, browsertest.Text(t, ctx, `[data-testid="span-input"]`))

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
	assert.Equal(t, "Not allowed", browsertest.Text(t, ctx, "h1"))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="error-message"]`), "another site")
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
