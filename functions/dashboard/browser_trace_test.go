package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/browsertest"
)

// browserSignIn signs the browser in with key from the sign-in page, which then opens path.
func browserSignIn(t *testing.T, ctx context.Context, base, key, path, waitFor string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+path),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(waitFor)),
	))
}

// injected counts the elements of main that a span's text could have made: scripts, handler
// attributes, javascript: links.
const injected = `document.querySelectorAll('main script, main a[href^="javascript"], main [onerror], main [onclick]').length`

// TestSpanDetailInBrowser drives the span detail in headless Chromium: open a trace, move to
// the llm span with the keyboard and open it with Enter (its detail fetched by the script):
// its chat messages, an inline image described, its image attachment shown from the bucket
// (loaded in the trace's page, no Content-Security-Policy violation); leave thumbs-down
// feedback with a reason through the form (stored, as the API shows), then the span's page
// shows the feedback and the attachment image. Markup in messages, attributes, the
// attachment's label and the reason stays text: no dialog opens.
func TestSpanDetailInBrowser(t *testing.T) {
	f := newFixture(t)
	payload := xssScript + " " + xssImg + " " + xssLink
	traceID, spanID := f.seedLLMTrace(t, "support-bot", payload, map[string]any{"html": xssImg, "url": xssLink})
	f.seedAttachment(t, f.api.A.Key, spanID, "screenshot "+xssImg)
	ctx := browsertest.Start(t, 360, 2*time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL
	browserSignIn(t, ctx, base, f.api.A.Key, "/ui/traces/"+traceID, `[data-testid="span-tree"]`)
	// Every Content-Security-Policy violation of the trace's page from now on, as the page
	// reports them.
	require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.plumeViolations = [];
		document.addEventListener("securitypolicyviolation", (e) => window.plumeViolations.push(e.violatedDirective + " " + e.blockedURI), true)`)))
	violations := chromedp.Evaluate[[]string](`window.plumeViolations`)

	// Keyboard: focus the root's row, ArrowDown to the llm span, Enter opens its detail.
	row := fmt.Sprintf(`[data-span-id="%s"]`, spanID)
	activeSpan := chromedp.Evaluate[string](`document.activeElement.closest("li.span").dataset.spanId`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS(`[data-testid="span-row"]:first-child a.open`)),
		chromedp.KeyEvent(kb.ArrowDown),
	))
	require.Equal(t, spanID, browsertest.Value(t, ctx, activeSpan), "ArrowDown moves to the next row")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid="span-detail"]`)),
	))
	assert.Equal(t, "true", browsertest.Value(t, ctx, chromedp.Evaluate[string](
		fmt.Sprintf(`document.querySelector('%s a.open').getAttribute("aria-expanded")`, row))))
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowLeft)))
	assert.NotEqual(t, spanID, browsertest.Value(t, ctx, activeSpan), "ArrowLeft goes to the parent")

	// The detail: messages with their roles, the inline image described, the attachment shown.
	assert.Equal(t, 2, browsertest.Value(t, ctx, chromedp.Evaluate[int](
		fmt.Sprintf(`document.querySelectorAll('%s [data-testid="span-input"] [data-testid="message"]').length`, row))))
	input := browsertest.Text(t, ctx, row+` [data-testid="span-input"]`)
	assert.Contains(t, input, "What is in this picture? "+payload)
	assert.Contains(t, input, "Image (data URL, ")
	assert.Contains(t, browsertest.Text(t, ctx, row+` [data-testid="span-attributes"]`), xssLink)
	img := row + ` [data-testid="attachment-image"]`
	require.NoError(t, chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(img))), "the pane shows the image attachment")
	loaded, err := chromedp.Run(ctx, chromedp.Poll[bool](
		fmt.Sprintf(`(() => { const i = document.querySelector('%s'); return i.complete && i.naturalWidth > 0; })()`, img),
		chromedp.WithPollingTimeout(15*time.Second)))
	require.NoError(t, err, "the attachment image loads in the trace's page")
	assert.True(t, loaded)
	assert.Equal(t, "screenshot "+xssImg, browsertest.Value(t, ctx, chromedp.Evaluate[string](
		fmt.Sprintf(`document.querySelector('%s').alt`, img))), "the label is the image's text alternative")
	assert.True(t, strings.HasPrefix(browsertest.Value(t, ctx, chromedp.Evaluate[string](
		fmt.Sprintf(`document.querySelector('%s').src`, img))), f.api.S3URL+"/"), "from the bucket")
	assert.Equal(t, 1, browsertest.Value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('main img').length`)), "the attachment only")
	assert.Zero(t, browsertest.Value(t, ctx, chromedp.Evaluate[int](injected)), "no element made from a span's text")
	assert.Empty(t, browsertest.Value(t, ctx, violations), "no Content-Security-Policy violation")
	// The listener does see a violation: an image of another origin is refused.
	require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`new Image().src = "http://127.0.0.2:9/refused.png"`)))
	refused, err := chromedp.Run(ctx, chromedp.Poll[[]string](`window.plumeViolations.length > 0 && window.plumeViolations`,
		chromedp.WithPollingTimeout(15*time.Second)))
	require.NoError(t, err, "an image of another origin is refused")
	assert.Equal(t, []string{"img-src http://127.0.0.2:9/refused.png"}, refused)

	// Thumbs down with a reason, through the form in the detail.
	reason := "wrong amount " + xssImg + " " + xssScript
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(row+` [data-testid="thumbs-down"]`)),
		chromedp.SendKeys(chromedp.CSS(row+` [data-testid="feedback-reason-input"]`), reason),
		chromedp.Click(chromedp.CSS(row+` [data-testid="feedback-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="feedback-item"]`)),
	))
	assert.Equal(t, base+"/ui/traces/"+traceID+"/spans/"+spanID+"#span-feedback", browsertest.Value(t, ctx, chromedp.Location()))
	fb := f.spanFeedback(t, f.api.A.Key, f.api.A.ProjectID, spanID)
	require.Len(t, fb, 1, "the feedback is stored")
	assert.Equal(t, false, fb[0]["thumbs_up"])
	assert.Equal(t, reason, fb[0]["reason"])
	assert.Equal(t, reason, browsertest.Text(t, ctx, `[data-testid="feedback-reason"]`))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="feedback-item"]`), "Thumbs down")

	// The span's own page shows the attachment from the bucket (its origin allowed by the CSP).
	loaded, err = chromedp.Run(ctx, chromedp.Poll[bool](
		`(() => { const i = document.querySelector('[data-testid="attachment-image"]'); return !!i && i.complete && i.naturalWidth > 0; })()`,
		chromedp.WithPollingTimeout(15*time.Second)))
	require.NoError(t, err, "the attachment image loads")
	assert.True(t, loaded)
	assert.Equal(t, 1, browsertest.Value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('main img').length`)), "the attachment only")
	assert.Zero(t, browsertest.Value(t, ctx, chromedp.Evaluate[int](injected)))

	assert.Zero(t, dialogs.Load(), "a dialog opened: a span's text ran as script")
}

// largeTraceSpans is the size of the large trace: a root and its children, posted 1000 a
// request.
const largeTraceSpans = 10_000

// TestLargeTraceInBrowser opens a 10,000-span trace: the first page of the tree renders and a
// span's detail opens. It measures, in the browser, the time from navigation to the first page
// of rows shown (performance.now() of the new document) and from the click on a span to its
// detail shown, and the page's size; it logs them and appends them as a JSON line to the file
// named by PLUME_UI_TIMINGS. No timing is asserted.
func TestLargeTraceInBrowser(t *testing.T) {
	f := newFixture(t)
	traceID, spans := f.seedTrace(t, f.api.A.Key, "large", largeTraceSpans-1, func(i int, s map[string]any) {
		s["input_data"] = fmt.Sprintf("input of step %d", i)
	})
	ctx := browsertest.Start(t, 360, 3*time.Minute)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)))
	base := f.srv.URL
	browserSignIn(t, ctx, base, f.api.A.Key, "/ui/", `[data-testid="trace-count"]`)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"/ui/traces/"+traceID)))
	treeMS, err := chromedp.Run(ctx, chromedp.Poll[float64](
		`document.querySelector('[data-testid="span-tree"] [data-testid="span-row"]:last-child a.open') !== null && performance.now()`,
		chromedp.WithPollingTimeout(time.Minute)))
	require.NoError(t, err, "the tree renders")
	assert.Equal(t, 200, browsertest.Value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="span-row"]').length`)), "one page of rows")
	// The page's size as the browser decoded it, as it came (gzipped, see gzip.go), and with
	// the headers.
	nav := `performance.getEntriesByType("navigation")[0]`
	pageBytes := browsertest.Value(t, ctx, chromedp.Evaluate[int](nav+`.decodedBodySize`))
	encodedBytes := browsertest.Value(t, ctx, chromedp.Evaluate[int](nav+`.encodedBodySize`))
	transferBytes := browsertest.Value(t, ctx, chromedp.Evaluate[int](nav+`.transferSize`))
	assert.Zero(t, browsertest.Value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="span-detail"]').length`)), "no span body before it is opened")

	// The last row of the page: the detail is fetched when clicked.
	row := fmt.Sprintf(`[data-span-id="%s"]`, browsertest.Value(t, ctx, chromedp.Evaluate[string](
		`document.querySelector('[data-testid="span-row"]:last-child').dataset.spanId`)))
	require.NoError(t, chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(row+` a.open`))))
	require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.plumeClickAt = performance.now()`),
		chromedp.Click(chromedp.CSS(row+` a.open`))))
	spanMS, err := chromedp.Run(ctx, chromedp.Poll[float64](
		fmt.Sprintf(`document.querySelector('%s [data-testid="span-detail"]') !== null && performance.now() - window.plumeClickAt`, row),
		chromedp.WithPollingTimeout(time.Minute)))
	require.NoError(t, err, "the span's detail shows")
	assert.Contains(t, browsertest.Text(t, ctx, row+` [data-testid="span-input"]`), "input of step")
	assert.Contains(t, spans, browsertest.Value(t, ctx, chromedp.Evaluate[string](
		fmt.Sprintf(`document.querySelector('%s').dataset.spanId`, row))))

	tree, span := msDuration(treeMS), msDuration(spanMS)
	t.Logf("large trace: tree %v, span %v, page bytes %d decoded, %d encoded, %d transferred", tree, span, pageBytes, encodedBytes, transferBytes)
	if name := os.Getenv("PLUME_UI_TIMINGS"); name != "" {
		line, err := json.Marshal(map[string]any{
			"test": t.Name(), "spans": largeTraceSpans, "tree_ms": treeMS, "span_ms": spanMS, "page_bytes": pageBytes,
			"encoded_bytes": encodedBytes, "transfer_bytes": transferBytes,
			"tree": tree.String(), "span": span.String(),
		})
		require.NoError(t, err)
		out, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = out.Write(append(line, '\n'))
		require.NoError(t, err)
		require.NoError(t, out.Close())
	}
}

// msDuration is a performance.now() difference as a Duration, to the microsecond.
func msDuration(ms float64) time.Duration {
	return (time.Duration(ms*1000) * time.Microsecond)
}
