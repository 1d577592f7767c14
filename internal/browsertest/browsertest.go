// Package browsertest drives headless Chromium (the Debian chromium package) from Go tests
// through chromedp: a fresh browser and profile per test, bounded in time, the values and texts
// of the page, and the JavaScript dialogs it opens (a dialog in an XSS test is script that ran).
package browsertest

import (
	"context"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Start starts one headless Chromium for t, with a fresh profile, a window width wide pixels,
// and limit for everything the test does with it; everything is stopped when t ends. A machine
// without chromium fails the test with how to install it.
func Start(t *testing.T, width int, limit time.Duration) context.Context {
	t.Helper()
	execPath, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("this test needs headless Chromium on PATH (Debian: apt-get install chromium): %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), limit)
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
		chromedp.WindowSize(width, 800),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	require.NoError(t, chromedp.Do(browserCtx), "start Chromium at %s", execPath)
	return browserCtx
}

// CountDialogs counts the JavaScript dialogs the page opens from now on, dismissing each (a
// dialog left open would block the page).
func CountDialogs(ctx context.Context) *atomic.Int32 {
	var dialogs atomic.Int32
	opening := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range opening {
			if err != nil {
				return
			}
			dialogs.Add(1)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{})
		}
	}()
	return &dialogs
}

// Value runs a in the browser and returns its value.
func Value[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err)
	return v
}

// Text returns the visible text of the element that the CSS selector sel finds.
func Text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return Value(t, ctx, chromedp.Text(chromedp.CSS(sel)))
}
