package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/browsertest"
)

func TestPromptPages(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)

	p := b.get(t, "/ui/prompts")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="no-prompts"`, "the empty state")
	assert.Contains(t, p.Body, `ze.prompt("support-bot"`, "how to create one")
	assert.Contains(t, p.Body, `href="/ui/prompts" aria-current="page"`)

	a := f.api.A
	for _, c := range []string{"You are kind.", "You are very kind.", "You are <b>very</b> kind & brief."} {
		f.api.EnsurePrompt(t, a, "support-bot", c)
	}
	f.api.EnsurePrompt(t, a, "another", "Hello.")
	f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/prompts/support-bot/tags/production:pin", a.Key, map[string]any{"version": 2})
	f.api.MustDo(t, "PATCH", "/projects/"+a.ProjectID+"/prompts/support-bot/versions/2", a.Key, map[string]any{"model_id": "gpt-4o-mini"})
	f.api.EnsurePrompt(t, f.api.B, "b-secret", "B's private prompt")

	t.Run("list", func(t *testing.T) {
		p := b.get(t, "/ui/prompts")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Equal(t, 2, strings.Count(p.Body, `data-testid="prompt-row"`))
		assert.Regexp(t, `href="/ui/prompts/support-bot">support-bot</a></td>\s*<td class="num">3</td>`, p.Body, "the latest version")
		assert.NotContains(t, p.Body, "b-secret")
		assert.NotContains(t, p.Body, `data-testid="no-prompts"`)
	})
	t.Run("detail", func(t *testing.T) {
		p := b.get(t, "/ui/prompts/support-bot")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Equal(t, 3, strings.Count(p.Body, `data-testid="version"`))
		v3, v2 := strings.Index(p.Body, `data-version="3"`), strings.Index(p.Body, `data-version="2"`)
		v1 := strings.Index(p.Body, `data-version="1"`)
		assert.True(t, v3 < v2 && v2 < v1, "newest first")
		assert.Contains(t, p.Body[v3:v2], `data-testid="tag">latest<`)
		assert.Contains(t, p.Body[v2:v1], `data-testid="tag">production<`)
		assert.Contains(t, p.Body[v2:v1], `<code>gpt-4o-mini</code>`, "the bound model")
		assert.Contains(t, p.Body[v1:], `data-testid="model">none<`)
		assert.Contains(t, p.Body, `You are &lt;b&gt;very&lt;/b&gt; kind &amp; brief.`, "the text, escaped")
		assert.Contains(t, p.Body, `href="/ui/prompts/support-bot?diff=1..2"`)
		assert.NotContains(t, p.Body, `data-testid="diff"`)
		assert.Contains(t, p.Body, `<option value="2" selected>`, "the form compares the two newest")
		assert.Contains(t, p.Body, `<option value="3" selected>`)
	})
	t.Run("diff", func(t *testing.T) {
		tests := []struct {
			name, query, want string
		}{
			{"insert", "?diff=1..2", `You are <ins>very </ins>kind.`},
			{"delete", "?diff=2..1", `You are <del>very </del>kind.`},
			{"markup escaped", "?diff=2..3",
				`You are <del>very</del><ins>&lt;b&gt;very&lt;/b&gt;</ins> <del>kind.</del><ins>kind &amp; brief.</ins>`},
			{"from the form", "?from=1&to=2", `You are <ins>very </ins>kind.`},
			{"the same version", "?diff=3..3", `You are &lt;b&gt;very&lt;/b&gt; kind &amp; brief.`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.get(t, "/ui/prompts/support-bot"+tt.query)
				require.Equal(t, http.StatusOK, p.Status, p.Body)
				assertPage(t, p)
				assert.Equal(t, tt.want, regexpFind(t, `(?s)<pre class="diff" data-testid="diff">(.*?)</pre>`, p.Body))
				assert.Equal(t, tt.name == "the same version", strings.Contains(p.Body, `data-testid="no-changes"`))
			})
		}
	})
	t.Run("bad input and other projects", func(t *testing.T) {
		tests := []struct {
			name   string
			path   string
			status int
		}{
			{"diff not A..B", "/ui/prompts/support-bot?diff=2-3", http.StatusBadRequest},
			{"diff of version 0", "/ui/prompts/support-bot?diff=0..2", http.StatusBadRequest},
			{"diff with no version", "/ui/prompts/support-bot?diff=", http.StatusBadRequest},
			{"diff of a missing version", "/ui/prompts/support-bot?diff=1..9", http.StatusBadRequest},
			{"huge version", "/ui/prompts/support-bot?diff=1..99999999999", http.StatusBadRequest},
			{"form without to", "/ui/prompts/support-bot?from=1", http.StatusBadRequest},
			{"form with words", "/ui/prompts/support-bot?from=one&to=2", http.StatusBadRequest},
			{"not a slug", "/ui/prompts/Support%20Bot", http.StatusNotFound},
			{"unknown prompt", "/ui/prompts/nothing-here", http.StatusNotFound},
			{"another project's prompt", "/ui/prompts/b-secret", http.StatusNotFound},
			{"another project's prompt, diffed", "/ui/prompts/b-secret?diff=1..1", http.StatusNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.get(t, tt.path)
				assert.Equal(t, tt.status, p.Status, p.Body)
				assertPage(t, p)
				assert.Contains(t, p.Body, `data-testid="error-message"`)
				assert.NotContains(t, p.Body, "private prompt")
			})
		}
	})
	t.Run("signed out", func(t *testing.T) {
		p := f.browser(t).get(t, "/ui/prompts/support-bot")
		assert.Equal(t, http.StatusUnauthorized, p.Status)
		assert.NotContains(t, p.Body, "kind.")
	})
}

// TestPromptsInBrowser opens the prompts in headless Chromium: the list, a prompt whose text
// carries markup, its text, and the diff chosen with the form. The markup stays text and no
// dialog opens.
func TestPromptsInBrowser(t *testing.T) {
	f := newFixture(t)
	f.api.EnsurePrompt(t, f.api.A, "xss-bot", "Say hi.")
	f.api.EnsurePrompt(t, f.api.A, "xss-bot", "Say "+xssScript+" hi.")
	ctx := browsertest.Start(t, 360, time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/prompts"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), f.api.A.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="prompts"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="prompt-row"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="versions"]`)),
	))
	assert.Equal(t, base+"/ui/prompts/xss-bot", browsertest.Value(t, ctx, chromedp.Location()))
	newest := `[data-testid="version"][data-version="2"]`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(newest+` summary`)),
		chromedp.WaitVisible(chromedp.CSS(newest+` [data-testid="content"]`)),
	))
	assert.Equal(t, "Say "+xssScript+" hi.", browsertest.Text(t, ctx, newest+` [data-testid="content"]`))

	// The form compares the two newest versions by default.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="compare"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="diff"]`)),
	))
	assert.Equal(t, base+"/ui/prompts/xss-bot?from=1&to=2", browsertest.Value(t, ctx, chromedp.Location()))
	assert.Equal(t, "Say "+xssScript+" hi.", browsertest.Text(t, ctx, `[data-testid="diff"]`))
	assert.Equal(t, xssScript+" ", browsertest.Text(t, ctx, `[data-testid="diff"] ins`))
	assertNoInjected(t, ctx, "a prompt's text")
	assert.Zero(t, dialogs.Load(), "a dialog opened: a prompt's text ran as script")
}
