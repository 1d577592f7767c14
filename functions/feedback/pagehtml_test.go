package feedback

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestWriteFrameEscapesEveryValue: every value the page prints, in text and in attributes,
// is escaped, so no value can close its element or attribute.
func TestWriteFrameEscapesEveryValue(t *testing.T) {
	const hostile = `"><script>alert('x')</script>&`
	const escaped = `&#34;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;`
	f := frame{Title: hostile, Nonce: hostile, Page: &pageView{Slug: hostile, Completions: []completionView{{
		ID: hostile, At: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), Model: hostile,
		Input: shownText{Text: hostile}, Output: shownText{Text: hostile, Cut: 3},
		Verdict: "up", Reason: hostile, Expected: hostile,
	}}}}
	out := writeFrame(f)
	assert.NotContains(t, out, "<script")
	assert.NotContains(t, out, `"><`)
	// The title, nonce, slug twice, the anchor, data-completion-id, model, input, output, the
	// hidden id, two labels' for, two textareas' id and text.
	assert.Equal(t, 16, strings.Count(out, escaped), out)
	assert.Contains(t, out, "… 3 more characters not shown.")
	assert.Contains(t, out, `<time datetime="2026-12-02T10:00:00Z">2 Dec 2026, 10:00:00 UTC</time>`)

	e := writeFrame(frame{Title: "t", Error: &errorView{Heading: hostile, Message: hostile, RequestID: hostile, Back: true}})
	assert.NotContains(t, e, "<script")
	assert.Equal(t, 3, strings.Count(e, escaped), e)
	assert.Contains(t, e, `<a href="">Back to the completions</a>`)
}
