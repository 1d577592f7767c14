package dashboard_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// promptTags reads the tags of a prompt through the REST API, tag → version.
func (f *fixture) promptTags(t *testing.T, tenant apitest.Tenant, slug string) map[string]int {
	t.Helper()
	res := f.api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/prompts/"+slug+"/tags", tenant.Key, nil)
	var tags []struct {
		Tag     string `json:"tag"`
		Version int    `json:"version"`
	}
	res.Decode(t, &tags)
	out := map[string]int{}
	for _, e := range tags {
		out[e.Tag] = e.Version
	}
	return out
}

// versionModels reads the bound models of a prompt's versions through the REST API.
func (f *fixture) versionModels(t *testing.T, tenant apitest.Tenant, slug string) map[int]string {
	t.Helper()
	res := f.api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/prompts/"+slug+"/versions", tenant.Key, nil)
	var versions []struct {
		Version int     `json:"version"`
		ModelID *string `json:"model_id"`
	}
	res.Decode(t, &versions)
	out := map[int]string{}
	for _, v := range versions {
		out[v.Version] = ""
		if v.ModelID != nil {
			out[v.Version] = *v.ModelID
		}
	}
	return out
}

// feedbackLinks reads the project's feedback links through the REST API, id → status.
func (f *fixture) feedbackLinks(t *testing.T, tenant apitest.Tenant) map[string]string {
	t.Helper()
	res := f.api.MustDo(t, "GET", "/feedback-links", tenant.Key, nil)
	out := map[string]string{}
	for _, e := range res.Map(t)["links"].([]any) {
		m := e.(map[string]any)
		out[m["id"].(string)] = m["status"].(string)
	}
	return out
}

func TestPromptPin(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	for _, c := range []string{"You are kind.", "You are very kind.", "You are brief."} {
		f.api.EnsurePrompt(t, a, "support-bot", c)
	}
	f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/prompts/support-bot/tags/production:pin", a.Key, map[string]any{"version": 1})
	f.api.EnsurePrompt(t, f.api.B, "b-secret", "B's private prompt")
	b := f.browser(t)
	token := b.signIn(t, a.Key)

	t.Run("the prompt page has the form and the tags", func(t *testing.T) {
		p := b.get(t, "/ui/prompts/support-bot")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `action="/ui/prompts/support-bot/pin"`)
		assert.Regexp(t, `data-tag="production">\s*<td[^>]*>.*</td>\s*<td class="num" data-testid="tag-version">1<`, p.Body)
		assert.Contains(t, p.Body, `href="/ui/prompts/support-bot/optimize"`)
		assert.NotContains(t, p.Body, `data-testid="notice"`)
	})
	t.Run("confirm shows old to new and the diff", func(t *testing.T) {
		p := b.get(t, "/ui/prompts/support-bot/pin?tag=production&version=2")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `data-testid="pin-old">1<`)
		assert.Contains(t, p.Body, `data-testid="pin-to">2<`)
		assert.Equal(t, `You are <ins>very </ins>kind.`, regexpFind(t, `(?s)<pre class="diff" data-testid="diff">(.*?)</pre>`, p.Body))
		assert.Contains(t, p.Body, `name="expected" value="1"`)
		assert.Equal(t, 1, f.promptTags(t, a, "support-bot")["production"], "a confirm step changes nothing")
	})
	t.Run("confirm of a new tag", func(t *testing.T) {
		p := b.get(t, "/ui/prompts/support-bot/pin?tag=staging&version=3")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, `data-testid="pin-new"`)
		assert.Contains(t, p.Body, `name="expected" value="0"`)
		assert.Equal(t, `<ins>You are brief.</ins>`, regexpFind(t, `(?s)<pre class="diff" data-testid="diff">(.*?)</pre>`, p.Body))
	})
	t.Run("POST pins", func(t *testing.T) {
		p := b.post(t, "/ui/prompts/support-bot/pin", url.Values{"csrf": {token}, "tag": {"production"}, "version": {"2"}, "expected": {"1"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, "/ui/prompts/support-bot?pinned=production#tags", p.Header.Get("Location"))
		assert.Equal(t, 2, f.promptTags(t, a, "support-bot")["production"])
		shown := b.get(t, "/ui/prompts/support-bot?pinned=production")
		assert.Contains(t, shown.Body, `data-testid="notice">The tag production now points at version 2.<`)

		p = b.post(t, "/ui/prompts/support-bot/pin", url.Values{"csrf": {token}, "tag": {"staging"}, "version": {"3"}, "expected": {"0"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, 3, f.promptTags(t, a, "support-bot")["staging"], "a new tag")
	})
	t.Run("a stale confirm is refused", func(t *testing.T) {
		// The confirm page showed production at 1; it has moved to 2 since.
		p := b.post(t, "/ui/prompts/support-bot/pin", url.Values{"csrf": {token}, "tag": {"production"}, "version": {"3"}, "expected": {"1"}})
		require.Equal(t, http.StatusConflict, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `data-testid="pin-error"`)
		assert.Contains(t, p.Body, "moved since this page was shown")
		assert.Contains(t, p.Body, `name="expected" value="2"`, "the confirm step anew, with the tag as it is")
		assert.Equal(t, 2, f.promptTags(t, a, "support-bot")["production"], "nothing changed")
	})
	t.Run("bad input", func(t *testing.T) {
		for _, q := range []string{"tag=production&version=9", "tag=production&version=two", "tag=production", "tag=latest&version=1",
			"tag=Bad%20Tag&version=1", "version=1"} {
			p := b.get(t, "/ui/prompts/support-bot/pin?"+q)
			assert.Equal(t, http.StatusBadRequest, p.Status, q)
			assertPage(t, p)
			assert.Contains(t, p.Body, `data-testid="error-message"`)
		}
		for _, form := range []url.Values{
			{"tag": {"production"}, "version": {"9"}, "expected": {"2"}},
			{"tag": {"production"}, "version": {"1"}, "expected": {"x"}},
			{"tag": {"production"}, "version": {"1"}},
			{"tag": {"latest"}, "version": {"1"}, "expected": {"3"}},
		} {
			form.Set("csrf", token)
			p := b.post(t, "/ui/prompts/support-bot/pin", form)
			assert.Equal(t, http.StatusBadRequest, p.Status, form.Encode())
		}
		assert.Equal(t, map[string]int{"latest": 3, "production": 2, "staging": 3}, f.promptTags(t, a, "support-bot"), "nothing changed")
	})
	t.Run("another project's prompt", func(t *testing.T) {
		p := b.get(t, "/ui/prompts/b-secret/pin?tag=production&version=1")
		assert.Equal(t, http.StatusNotFound, p.Status)
		assert.NotContains(t, p.Body, "private prompt")
		p = b.post(t, "/ui/prompts/b-secret/pin", url.Values{"csrf": {token}, "tag": {"production"}, "version": {"1"}, "expected": {"0"}})
		assert.Equal(t, http.StatusNotFound, p.Status)
		assert.NotContains(t, f.promptTags(t, f.api.B, "b-secret"), "production")
	})
	t.Run("a form without its CSRF token", func(t *testing.T) {
		p := b.post(t, "/ui/prompts/support-bot/pin", url.Values{"tag": {"production"}, "version": {"1"}, "expected": {"2"}})
		assert.Equal(t, http.StatusForbidden, p.Status)
		assert.Equal(t, 2, f.promptTags(t, a, "support-bot")["production"])
	})
	t.Run("the tag moves between the confirm page and the POST", func(t *testing.T) {
		p := b.get(t, "/ui/prompts/support-bot/pin?tag=production&version=3")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		expected := regexpFind(t, `name="expected" value="(\d+)"`, p.Body)
		require.Equal(t, "2", expected)
		// Someone deploys version 1 through the REST API while the confirm page is open.
		f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/prompts/support-bot/tags/production:pin", a.Key, map[string]any{"version": 1})

		form := url.Values{"csrf": {token}, "tag": {"production"}, "version": {"3"}, "expected": {expected}}
		p = b.post(t, "/ui/prompts/support-bot/pin", form)
		require.Equal(t, http.StatusConflict, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `data-testid="pin-error"`)
		assert.Contains(t, p.Body, "moved since this page was shown")
		assert.Contains(t, html.UnescapeString(p.Body), `is at version 1 (expected it to be at version 2)`, "the API's message")
		assert.Contains(t, p.Body, `data-testid="pin-old">1<`, "the confirm step anew, with the tag as it is")
		assert.Contains(t, p.Body, `name="expected" value="1"`)
		assert.Equal(t, 1, f.promptTags(t, a, "support-bot")["production"], "the other deploy stands")

		// Confirming the new confirm step pins, with no read of the tag before the pin: the
		// API's precondition rides on the tag's write.
		form.Set("expected", "1")
		f.api.DDB.Reset()
		p = b.post(t, "/ui/prompts/support-bot/pin", form)
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Zero(t, f.api.DDB.Counts()["Query"], "no listing of versions or tags: %s", f.api.DDB)
		assert.Equal(t, 1, f.api.DDB.Counts()["PutItem"], "one write, the tag's: %s", f.api.DDB)
		assert.Equal(t, 3, f.promptTags(t, a, "support-bot")["production"])
	})
	t.Run("a new tag created between the confirm page and the POST", func(t *testing.T) {
		p := b.get(t, "/ui/prompts/support-bot/pin?tag=canary&version=2")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		require.Contains(t, p.Body, `name="expected" value="0"`)
		f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/prompts/support-bot/tags/canary:pin", a.Key, map[string]any{"version": 1})

		p = b.post(t, "/ui/prompts/support-bot/pin", url.Values{"csrf": {token}, "tag": {"canary"}, "version": {"2"}, "expected": {"0"}})
		require.Equal(t, http.StatusConflict, p.Status, p.Body)
		assert.Contains(t, html.UnescapeString(p.Body), `is at version 1 (expected it not to exist)`)
		assert.Contains(t, p.Body, `name="expected" value="1"`)
		assert.Equal(t, 1, f.promptTags(t, a, "support-bot")["canary"])
	})
}

func TestPromptBindModel(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	f.api.EnsurePrompt(t, a, "support-bot", "One.")
	f.api.EnsurePrompt(t, a, "support-bot", "Two.")
	f.api.EnsurePrompt(t, f.api.B, "b-secret", "B's private prompt")
	b := f.browser(t)
	token := b.signIn(t, a.Key)

	p := b.post(t, "/ui/prompts/support-bot/versions/2/model", url.Values{"csrf": {token}, "model_id": {"gpt-4o-mini"}, "action": {"bind"}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	assert.Equal(t, "/ui/prompts/support-bot?bound=2#version-2", p.Header.Get("Location"))
	assert.Equal(t, map[int]string{1: "", 2: "gpt-4o-mini"}, f.versionModels(t, a, "support-bot"))
	shown := b.get(t, "/ui/prompts/support-bot?bound=2")
	assert.Contains(t, shown.Body, `data-testid="notice">Version 2 is now bound to the model gpt-4o-mini.<`)
	assert.Contains(t, shown.Body, `id="model-2" name="model_id" value="gpt-4o-mini"`)

	t.Run("invalid model", func(t *testing.T) {
		p := b.post(t, "/ui/prompts/support-bot/versions/1/model", url.Values{"csrf": {token}, "model_id": {"  "}})
		require.Equal(t, http.StatusBadRequest, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `data-testid="bind-error">model_id must not be empty`)
		assert.Contains(t, p.Body, `id="model-1" name="model_id" value="  " placeholder="gpt-4o-mini" aria-invalid="true"`, "the input kept")
		long := strings.Repeat("m", 1000)
		p = b.post(t, "/ui/prompts/support-bot/versions/1/model", url.Values{"csrf": {token}, "model_id": {long}})
		assert.Equal(t, http.StatusBadRequest, p.Status)
		assert.Contains(t, p.Body, `data-testid="bind-error"`)
		assert.Equal(t, map[int]string{1: "", 2: "gpt-4o-mini"}, f.versionModels(t, a, "support-bot"), "nothing stored")
	})
	t.Run("unbind", func(t *testing.T) {
		p := b.post(t, "/ui/prompts/support-bot/versions/2/model", url.Values{"csrf": {token}, "model_id": {"gpt-4o-mini"}, "action": {"unbind"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, map[int]string{1: "", 2: ""}, f.versionModels(t, a, "support-bot"))
	})
	t.Run("missing version and another project's prompt", func(t *testing.T) {
		for _, path := range []string{"/ui/prompts/support-bot/versions/9/model", "/ui/prompts/support-bot/versions/x/model", "/ui/prompts/b-secret/versions/1/model"} {
			p := b.post(t, path, url.Values{"csrf": {token}, "model_id": {"gpt-4o"}})
			assert.Equal(t, http.StatusNotFound, p.Status, path)
			assert.NotContains(t, p.Body, "private prompt")
		}
		assert.Equal(t, map[int]string{1: ""}, f.versionModels(t, f.api.B, "b-secret"))
	})
	t.Run("without CSRF token", func(t *testing.T) {
		p := b.post(t, "/ui/prompts/support-bot/versions/1/model", url.Values{"model_id": {"gpt-4o"}})
		assert.Equal(t, http.StatusForbidden, p.Status)
		assert.Equal(t, "", f.versionModels(t, a, "support-bot")[1])
	})
}

func TestPromptCompletions(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	v1 := f.api.EnsurePrompt(t, a, "support-bot", "One.")
	v2 := f.api.EnsurePrompt(t, a, "support-bot", "Two.")
	other := f.api.EnsurePrompt(t, a, "other-bot", "Other.")
	b := f.browser(t)
	b.signIn(t, a.Key)

	p := b.get(t, "/ui/prompts/support-bot/completions")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="no-completions"`)

	traceID, at := uuid.NewString(), time.Now().Add(-time.Minute)
	s1, s2, s3 := uuid.NewString(), uuid.NewString(), uuid.NewString()
	f.api.MustDo(t, "POST", "/spans", a.Key, []any{
		apitest.LLMSpan(s1, traceID, "", "support-bot", v1, "hello <b>one</b>", "answer one", at),
		apitest.LLMSpan(s2, traceID, "", "support-bot", v2, "hello two", "answer two", at.Add(time.Second)),
		apitest.LLMSpan(s3, traceID, "", "other-bot", other, "other input", "other output", at.Add(2*time.Second)),
	})
	f.api.MustDo(t, "POST", "/v1/prompts/support-bot/completions/"+s2+"/feedback", a.Key, map[string]any{"thumbs_up": false, "reason": "too <i>long</i>"})
	jid := f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{
		"name": "Tone", "template": "**Tone**: calm", "evaluation_type": "scored", "score_min": 1, "score_max": 5,
	}).Map(t)["id"].(string)
	f.api.MustDo(t, "PUT", "/projects/"+a.ProjectID+"/prompts/support-bot/judges/"+jid, a.Key, nil)
	f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges/"+jid+"/evaluations", a.Key, []any{
		map[string]any{"span_id": s2, "score": 4, "evaluation_reason": "calm enough"},
	})

	p = b.get(t, "/ui/prompts/support-bot/completions")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Equal(t, 2, strings.Count(p.Body, `data-testid="completion"`))
	assert.NotContains(t, p.Body, "other input", "another prompt's completion")
	i1, i2 := strings.Index(p.Body, `data-span="`+s1+`"`), strings.Index(p.Body, `data-span="`+s2+`"`)
	require.True(t, i2 >= 0 && i1 > i2, "newest first")
	second := p.Body[i2:i1]
	assert.Contains(t, second, "Version 2")
	assert.Contains(t, second, `data-testid="thumbs">👎 down<`)
	assert.Contains(t, second, `data-testid="reason">too &lt;i&gt;long&lt;/i&gt;<`)
	assert.Contains(t, second, `Tone: <strong data-testid="score">4 / 5</strong>`)
	assert.Contains(t, second, `href="/ui/traces/`+traceID+`/spans/`+s2+`"`)
	assert.Contains(t, second, `data-testid="output">answer two<`)
	assert.Contains(t, p.Body[i1:], "Version 1")
	assert.Contains(t, p.Body[i1:], `hello &lt;b&gt;one&lt;/b&gt;`)

	assert.NotContains(t, p.Body, `data-testid="next"`, "one page")

	// Version 1 only.
	p = b.get(t, "/ui/prompts/support-bot/completions?version=1")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Equal(t, 1, strings.Count(p.Body, `data-testid="completion"`))
	assert.Contains(t, p.Body, `data-span="`+s1+`"`)
	assert.Contains(t, p.Body, `<option value="1" selected>Version 1</option>`)

	// 21 more completions: two pages, the second after the Older link.
	var batch []any
	for i := range 21 {
		batch = append(batch, apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", "support-bot", v2, fmt.Sprint("later ", i), "a", at.Add(time.Duration(10+i)*time.Second)))
	}
	f.api.MustDo(t, "POST", "/spans", a.Key, batch)
	p = b.get(t, "/ui/prompts/support-bot/completions")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Equal(t, 20, strings.Count(p.Body, `data-testid="completion"`))
	next := regexp.MustCompile(`href="([^"]+)" rel="next" data-testid="next"`).FindStringSubmatch(p.Body)
	require.Len(t, next, 2, "an Older link")
	p = b.get(t, html.UnescapeString(next[1]))
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Equal(t, 3, strings.Count(p.Body, `data-testid="completion"`))
	assert.Contains(t, p.Body, `data-span="`+s1+`"`)
	assert.Contains(t, p.Body, `data-testid="first"`)
	assert.NotContains(t, p.Body, `data-testid="next"`)
	bad := b.get(t, "/ui/prompts/support-bot/completions?cursor=bogus")
	assert.Equal(t, http.StatusBadRequest, bad.Status)

	f.api.EnsurePrompt(t, f.api.B, "b-secret", "B's private prompt")
	for _, path := range []string{"/ui/prompts/b-secret/completions", "/ui/prompts/Nope/completions"} {
		p := b.get(t, path)
		assert.Equal(t, http.StatusNotFound, p.Status, path)
	}
}

func TestPromptFeedbackLinks(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	f.api.EnsurePrompt(t, a, "support-bot", "One.")
	f.api.EnsurePrompt(t, f.api.B, "b-secret", "B's private prompt")
	bLink := f.api.MustDo(t, "POST", "/feedback-links", f.api.B.Key, map[string]any{"prompt_slug": "b-secret", "link_type": "prompt_completion"}).Map(t)["id"].(string)
	b := f.browser(t)
	token := b.signIn(t, a.Key)

	p := b.get(t, "/ui/prompts/support-bot/links")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="no-links"`)

	p = b.post(t, "/ui/prompts/support-bot/links", url.Values{"csrf": {token}, "expires_in_hours": {"24"}})
	require.Equal(t, http.StatusCreated, p.Status, p.Body)
	assertPage(t, p)
	linkURL := regexpFind(t, `readonly value="([^"]+)" data-testid="link-url"`, p.Body)
	assert.Contains(t, linkURL, "/f/")
	links := f.feedbackLinks(t, a)
	require.Len(t, links, 1)
	var id string
	for id = range links {
	}
	assert.Equal(t, "active", links[id])
	assert.Contains(t, p.Body, `data-link="`+id+`"`)

	t.Run("bad lifetime", func(t *testing.T) {
		for _, hours := range []string{"soon", "100000"} {
			p := b.post(t, "/ui/prompts/support-bot/links", url.Values{"csrf": {token}, "expires_in_hours": {hours}})
			assert.Equal(t, http.StatusBadRequest, p.Status, hours)
			assert.Contains(t, p.Body, `data-testid="link-error"`)
			assert.Contains(t, p.Body, `value="`+hours+`"`, "the input kept")
		}
		assert.Len(t, f.feedbackLinks(t, a), 1, "nothing stored")
	})
	t.Run("revoke with a confirm step", func(t *testing.T) {
		p := b.get(t, "/ui/prompts/support-bot/links/"+id+"/revoke")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `data-testid="revoke-confirm"`)
		assert.Equal(t, "active", f.feedbackLinks(t, a)[id], "the confirm step changes nothing")

		p = b.post(t, "/ui/prompts/support-bot/links/"+id+"/revoke", url.Values{"csrf": {token}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, "/ui/prompts/support-bot/links?revoked="+id, p.Header.Get("Location"))
		assert.Equal(t, "revoked", f.feedbackLinks(t, a)[id])
		shown := b.get(t, "/ui/prompts/support-bot/links?revoked="+id)
		assert.Contains(t, shown.Body, `data-testid="notice"`)
		assert.Contains(t, shown.Body, `data-testid="link-status">revoked<`)

		again := b.get(t, "/ui/prompts/support-bot/links/"+id+"/revoke")
		require.Equal(t, http.StatusOK, again.Status, again.Body)
		assert.Contains(t, again.Body, "This link is revoked already")
		assert.NotContains(t, again.Body, `data-testid="revoke-confirm"`, "nothing left to confirm")
		assert.Contains(t, again.Body, `href="/ui/prompts/support-bot/links">Feedback links of support-bot</a>`)
	})
	t.Run("another project's link", func(t *testing.T) {
		for _, path := range []string{"/ui/prompts/support-bot/links/" + bLink + "/revoke", "/ui/prompts/b-secret/links/" + bLink + "/revoke"} {
			p := b.get(t, path)
			assert.Equal(t, http.StatusNotFound, p.Status, path)
			p = b.post(t, path, url.Values{"csrf": {token}})
			assert.Equal(t, http.StatusNotFound, p.Status, path)
		}
		assert.Equal(t, "active", f.feedbackLinks(t, f.api.B)[bLink])
		p := b.post(t, "/ui/prompts/b-secret/links", url.Values{"csrf": {token}})
		assert.Equal(t, http.StatusNotFound, p.Status)
		assert.Len(t, f.feedbackLinks(t, f.api.B), 1)
	})
	t.Run("without CSRF token", func(t *testing.T) {
		p := b.post(t, "/ui/prompts/support-bot/links", url.Values{})
		assert.Equal(t, http.StatusForbidden, p.Status)
		assert.Len(t, f.feedbackLinks(t, a), 1)
	})
}
