package feedback_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/browsertest"
	"github.com/plumehq/plume/internal/testlog"
	"github.com/plumehq/plume/shared/auth"
)

const pageSlug = "support-reply"

// pageFixture is the API behind a test server, with completions of pageSlug in project A and a
// link to them.
type pageFixture struct {
	api   *apitest.API
	srv   *httptest.Server
	spans []string // ids of the completions, newest first
	link  pageLink
}

type pageLink struct {
	ID        string
	Token     string
	URL       string // the page on the test server
	ExpiresAt time.Time
}

// newPageFixture posts one completion of pageSlug per output, a minute apart, newest first.
func newPageFixture(t testing.TB, o apitest.Options, outputs ...string) *pageFixture {
	t.Helper()
	api := apitest.New(t, o)
	f := &pageFixture{api: api, srv: httptest.NewServer(api.Handler)}
	t.Cleanup(f.srv.Close)
	f.spans = postPageCompletions(t, api, api.A, pageSlug, outputs...)
	f.link = f.createLink(t, pageSlug, nil)
	return f
}

// postPageCompletions creates prompt slug in tenant's project and posts one llm span of it per
// output, returning their ids, newest first.
func postPageCompletions(t testing.TB, api *apitest.API, tenant apitest.Tenant, slug string, outputs ...string) []string {
	t.Helper()
	version := api.EnsurePrompt(t, tenant, slug, "You answer customer support questions.")
	if len(outputs) == 0 {
		return nil
	}
	now := time.Now().Add(-time.Minute)
	ids := make([]string, len(outputs))
	spans := make([]any, len(outputs))
	for i, out := range outputs {
		ids[i] = uuid.NewString()
		input := fmt.Sprintf("Where is my refund? (ticket %d)", i)
		spans[i] = apitest.LLMSpan(ids[i], uuid.NewString(), "", slug, version, input, out, now.Add(-time.Duration(i)*time.Minute))
	}
	api.MustDo(t, "POST", "/spans", tenant.Key, spans)
	return ids
}

// createLink makes a link to prompt slug of project A, with extra fields in the request.
func (f *pageFixture) createLink(t testing.TB, slug string, extra map[string]any) pageLink {
	t.Helper()
	body := map[string]any{"prompt_slug": slug, "link_type": "prompt_completion"}
	for k, v := range extra {
		body[k] = v
	}
	var res struct {
		ID        string    `json:"id"`
		URL       string    `json:"url"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	f.api.MustDo(t, "POST", "/feedback-links", f.api.A.Key, body).Decode(t, &res)
	u, err := url.Parse(res.URL)
	require.NoError(t, err)
	token := path.Base(u.Path)
	require.True(t, strings.HasPrefix(token, "plf_"), "link url %s", res.URL)
	return pageLink{ID: res.ID, Token: token, URL: f.srv.URL + "/f/" + token, ExpiresAt: res.ExpiresAt}
}

// humanFeedback reads the feedback of a span of project A through the API.
func (f *pageFixture) humanFeedback(t *testing.T, spanID string) []pageFeedbackItem {
	t.Helper()
	return reviewsOf(t, f.api, f.api.A, spanID)
}

// reviewsOf reads the feedback of a span of tenant's project through the API.
func reviewsOf(t *testing.T, api *apitest.API, tenant apitest.Tenant, spanID string) []pageFeedbackItem {
	t.Helper()
	var res struct {
		Items []pageFeedbackItem `json:"items"`
	}
	api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/feedback/span/"+spanID, tenant.Key, nil).Decode(t, &res)
	return res.Items
}

type pageFeedbackItem struct {
	Kind           string  `json:"kind"`
	ThumbsUp       bool    `json:"thumbs_up"`
	Reason         string  `json:"reason"`
	ExpectedOutput *string `json:"expected_output"`
	CreatedBy      struct {
		ID string `json:"id"`
	} `json:"created_by"`
}

// page is a response of the pages.
type pageResponse struct {
	Status int
	Header http.Header
	Body   string
	URL    string // after redirects
}

// newReviewerClient is an HTTP client with its own cookie jar, like one person's browser. It
// follows redirects unless follow is false.
func newReviewerClient(t testing.TB, follow bool) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return c
}

func pageDo(t testing.TB, c *http.Client, req *http.Request) pageResponse {
	t.Helper()
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return pageResponse{Status: res.StatusCode, Header: res.Header, Body: string(body), URL: res.Request.URL.String()}
}

func pageGet(t testing.TB, c *http.Client, u string) pageResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	return pageDo(t, c, req)
}

func pagePost(t testing.TB, c *http.Client, u string, form url.Values) pageResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return pageDo(t, c, req)
}

// assertHTMLPage checks what every answer of the pages has: HTML, never JSON or a stack trace.
func assertHTMLPage(t *testing.T, p pageResponse) {
	t.Helper()
	assert.Equal(t, "text/html; charset=utf-8", p.Header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(p.Body, "<!doctype html>"), "body: %.200s", p.Body)
	assert.NotContains(t, p.Body, "goroutine")
	assert.NotContains(t, p.Body, `"error"`)
}

// TestPageInBrowser drives the page in headless Chromium: review a completion, see the thanks,
// find the feedback through the API; markup in an output stays text; revoked and expired links
// say so.
func TestPageInBrowser(t *testing.T) {
	const script = `<script>document.title='pwned'</script>`
	f := newPageFixture(t, apitest.Options{}, "Your refund was sent on Monday.", script)
	expired := f.createLink(t, pageSlug, map[string]any{"expires_in_hours": 0.0003}) // about a second
	started := time.Now()
	ctx := browsertest.Start(t, 1280, 2*time.Minute)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(f.link.URL),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="completion"]`)),
	))
	assert.Equal(t, "Feedback on "+pageSlug, browsertest.Value(t, ctx, chromedp.Title()))
	assert.Contains(t, browsertest.Text(t, ctx, "body"), script, "the output's markup is shown as text")

	const reason = "The refund was refused, not sent."
	completion := `[data-completion-id="` + f.spans[0] + `"] `
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(completion+`[data-testid="reason"]`), reason),
		chromedp.Click(chromedp.CSS(completion+`[data-testid="thumbs-down"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="saved-notice"]`)),
	))
	assert.Equal(t, "Thanks, your feedback was saved.", browsertest.Text(t, ctx, completion+`[data-testid="saved-notice"]`))
	assert.Contains(t, browsertest.Text(t, ctx, completion+`[data-testid="verdict"]`), "bad")
	assert.Equal(t, f.link.URL+"?done="+f.spans[0]+"#completion-"+f.spans[0], browsertest.Value(t, ctx, chromedp.Location()))
	assert.Equal(t, "Feedback on "+pageSlug, browsertest.Value(t, ctx, chromedp.Title()), "no script ran")

	items := f.humanFeedback(t, f.spans[0])
	require.Len(t, items, 1)
	assert.Equal(t, "human_feedback", items[0].Kind)
	assert.False(t, items[0].ThumbsUp)
	assert.Equal(t, reason, items[0].Reason)
	assert.True(t, strings.HasPrefix(items[0].CreatedBy.ID, "link:"+f.link.ID+":"), "created_by.id %q", items[0].CreatedBy.ID)

	f.api.MustDo(t, "DELETE", "/feedback-links/"+f.link.ID, f.api.A.Key, nil)
	time.Sleep(time.Until(expired.ExpiresAt.Add(50 * time.Millisecond)))
	tests := []struct {
		name string
		url  string
		want string
	}{
		{"revoked", f.link.URL, "This feedback link was revoked."},
		{"expired", expired.URL, "This feedback link expired on "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pageGet(t, http.DefaultClient, tt.url)
			assert.Equal(t, http.StatusForbidden, p.Status)
			assertHTMLPage(t, p)

			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(tt.url)))
			heading, message := browsertest.Text(t, ctx, "h1"), browsertest.Text(t, ctx, `[data-testid="error-message"]`)
			assert.Equal(t, "This feedback link can no longer be used", heading)
			assert.Contains(t, message, tt.want)
		})
	}
	t.Logf("Chromium started and drove the pages in %v", time.Since(started).Round(time.Millisecond))
}

func TestPageShowsCompletions(t *testing.T) {
	outputs := make([]string, 21)
	outputs[0] = strings.Repeat("é", 4100)
	for i := 1; i < len(outputs); i++ {
		outputs[i] = fmt.Sprintf("Answer %d", i)
	}
	f := newPageFixture(t, apitest.Options{}, outputs...)

	p := pageGet(t, newReviewerClient(t, true), f.link.URL)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertHTMLPage(t, p)
	assert.Contains(t, p.Body, "<title>Feedback on "+pageSlug+"</title>")
	assert.Contains(t, p.Body, "<h1>Feedback on <code>"+pageSlug+"</code></h1>")
	assert.Equal(t, 20, strings.Count(p.Body, `data-testid="completion"`), "at most 20 completions")
	assert.Contains(t, p.Body, f.spans[0])
	assert.NotContains(t, p.Body, f.spans[20], "the oldest completion is left out")
	assert.Equal(t, 4000, strings.Count(p.Body, "é"), "long outputs are cut")
	assert.Contains(t, p.Body, "… 100 more characters not shown.")
	assert.Contains(t, p.Body, "Where is my refund? (ticket 0)")
	assert.Contains(t, p.Body, "model <code>gpt-4o-mini</code>")
	assert.Regexp(t, `<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ">[^<]+ UTC</time>`, p.Body)
	assert.Equal(t, 20, strings.Count(p.Body, `<form method="post">`))
	assert.NotContains(t, p.Body, "saved-notice", "no notice before a submission")

	f.api.EnsurePrompt(t, f.api.A, "no-traffic", "Unused.")
	empty := f.createLink(t, "no-traffic", nil)
	p = pageGet(t, newReviewerClient(t, true), empty.URL)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, p.Body, "No completions of <code>no-traffic</code> yet.")
}

func TestPageErrors(t *testing.T) {
	f := newPageFixture(t, apitest.Options{}, "Your refund was sent.")
	otherPrompt := postPageCompletions(t, f.api, f.api.A, "billing-reply", "Your invoice is attached.")[0]
	projectB := postPageCompletions(t, f.api, f.api.B, pageSlug, "Your refund was sent.")[0]
	form := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	const urlencoded = "application/x-www-form-urlencoded"
	tests := []struct {
		name        string
		method      string
		url         string
		contentType string
		body        string
		wantStatus  int
		wantText    string
	}{
		{"unknown token", "GET", f.srv.URL + "/f/plf_unknown", "", "", 404, "This feedback link does not exist"},
		{"not a token", "GET", f.srv.URL + "/f/hello", "", "", 404, "This feedback link does not exist"},
		{"form to an unknown token", "POST", f.srv.URL + "/f/plf_unknown", urlencoded, form("completion_id", f.spans[0], "thumbs", "up"), 404, "This feedback link does not exist"},
		{"no completion_id", "POST", f.link.URL, urlencoded, form("thumbs", "up"), 400, "completion_id is missing"},
		{"no thumbs", "POST", f.link.URL, urlencoded, form("completion_id", f.spans[0]), 400, "Choose thumbs up or thumbs down."},
		{"thumbs sideways", "POST", f.link.URL, urlencoded, form("completion_id", f.spans[0], "thumbs", "sideways"), 400, "Choose thumbs up or thumbs down."},
		{"reason too long", "POST", f.link.URL, urlencoded, form("completion_id", f.spans[0], "thumbs", "up", "reason", strings.Repeat("x", 17<<10)), 400, "Reason: at most 16384 bytes."},
		{"completion of another prompt", "POST", f.link.URL, urlencoded, form("completion_id", otherPrompt, "thumbs", "up"), 404, "is not a completion of prompt"},
		{"completion of project B", "POST", f.link.URL, urlencoded, form("completion_id", projectB, "thumbs", "up"), 404, "is not a completion of prompt"},
		{"unknown completion", "POST", f.link.URL, urlencoded, form("completion_id", uuid.NewString(), "thumbs", "down"), 404, "is not a completion of prompt"},
		{"JSON body", "POST", f.link.URL, "application/json", `{"completion_id":"` + f.spans[0] + `","thumbs":"up"}`, 415, "application/x-www-form-urlencoded"},
		{"form too large", "POST", f.link.URL, urlencoded, form("completion_id", f.spans[0], "thumbs", "up", "reason", strings.Repeat("x", 300<<10)), 413, "larger than 256 KB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, tt.url, strings.NewReader(tt.body))
			require.NoError(t, err)
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			p := pageDo(t, newReviewerClient(t, false), req)
			assert.Equal(t, tt.wantStatus, p.Status)
			assertHTMLPage(t, p)
			assert.Contains(t, p.Body, tt.wantText)
		})
	}
	assert.Empty(t, reviewsOf(t, f.api, f.api.A, otherPrompt), "nothing is stored on the other prompt")
	assert.Empty(t, reviewsOf(t, f.api, f.api.B, projectB), "nothing is stored in project B")
}

func TestPageHeaders(t *testing.T) {
	f := newPageFixture(t, apitest.Options{}, "Your refund was sent.")
	nonce := regexp.MustCompile(`<style nonce="([^"]+)">`)
	tests := []struct {
		name       string
		send       func(t *testing.T) pageResponse
		wantStatus int
	}{
		{"page", func(t *testing.T) pageResponse { return pageGet(t, newReviewerClient(t, false), f.link.URL) }, 200},
		{"unknown link", func(t *testing.T) pageResponse {
			return pageGet(t, newReviewerClient(t, false), f.srv.URL+"/f/plf_unknown")
		}, 404},
		{"bad form", func(t *testing.T) pageResponse {
			return pagePost(t, newReviewerClient(t, false), f.link.URL, url.Values{"thumbs": {"up"}})
		}, 400},
		{"saved", func(t *testing.T) pageResponse {
			return pagePost(t, newReviewerClient(t, false), f.link.URL, url.Values{"completion_id": {f.spans[0]}, "thumbs": {"up"}})
		}, 303},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.send(t)
			require.Equal(t, tt.wantStatus, p.Status, p.Body)
			h := p.Header
			assert.Equal(t, "text/html; charset=utf-8", h.Get("Content-Type"))
			assert.Equal(t, "no-store", h.Get("Cache-Control"))
			assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
			assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
			assert.Equal(t, "DENY", h.Get("X-Frame-Options"))
			csp := h.Get("Content-Security-Policy")
			for _, d := range []string{"default-src 'none'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
				assert.Contains(t, csp, d)
			}
			assert.NotContains(t, csp, "script-src")
			if p.Status == http.StatusSeeOther {
				assert.Equal(t, "?done="+f.spans[0]+"#completion-"+f.spans[0], h.Get("Location"))
				return
			}
			m := nonce.FindStringSubmatch(p.Body)
			require.NotNil(t, m, "the style sheet carries a nonce")
			assert.Contains(t, csp, "style-src 'nonce-"+m[1]+"'")
		})
	}

	a := nonce.FindStringSubmatch(pageGet(t, newReviewerClient(t, false), f.link.URL).Body)
	b := nonce.FindStringSubmatch(pageGet(t, newReviewerClient(t, false), f.link.URL).Body)
	require.NotNil(t, a)
	require.NotNil(t, b)
	assert.NotEqual(t, a[1], b[1], "a fresh nonce per response")
}

// TestPageRevealsNoSecrets checks that the page shows neither the project, nor a key, nor the
// token: forms post back to the page's own URL without naming it.
func TestPageRevealsNoSecrets(t *testing.T) {
	f := newPageFixture(t, apitest.Options{}, "Your refund was sent.")
	c := newReviewerClient(t, true)
	pages := map[string]pageResponse{
		"page":  pageGet(t, c, f.link.URL),
		"saved": pagePost(t, c, f.link.URL, url.Values{"completion_id": {f.spans[0]}, "thumbs": {"up"}}),
		"error": pagePost(t, c, f.link.URL, url.Values{"completion_id": {f.spans[0]}, "thumbs": {"maybe"}}),
	}
	for name, p := range pages {
		t.Run(name, func(t *testing.T) {
			require.Less(t, p.Status, 500, p.Body)
			for secret, value := range map[string]string{
				"project id": f.api.A.ProjectID, "API key": f.api.A.Key, "token": f.link.Token,
				"link id": f.link.ID, "user id": f.api.A.UserID,
			} {
				assert.NotContains(t, p.Body, value, "the page shows the %s", secret)
			}
			assert.NotContains(t, p.Body, "action=")
			assert.NotContains(t, p.Body, "<script")
		})
	}
	assert.Contains(t, pages["saved"].URL, "?done="+f.spans[0])
}

func TestPageReviewerCookie(t *testing.T) {
	f := newPageFixture(t, apitest.Options{}, "Your refund was sent.")
	valid := strings.Repeat("ab", 16)
	tests := []struct {
		name       string
		method     string
		cookie     string // sent plume_reviewer, "" for none
		proto      string // X-Forwarded-Proto
		wantNew    bool
		wantSecure bool
	}{
		{"first view", "GET", "", "", true, false},
		{"first view over https", "GET", "", "https", true, true},
		{"returning reviewer", "GET", valid, "", false, false},
		{"malformed cookie", "GET", "<script>", "", true, false},
		{"form without a cookie", "POST", "", "", true, false},
		{"form with a cookie", "POST", valid, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.method == "POST" {
				body = strings.NewReader(url.Values{"completion_id": {f.spans[0]}, "thumbs": {"up"}}.Encode())
			}
			req, err := http.NewRequest(tt.method, f.link.URL, body)
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tt.cookie != "" {
				req.Header.Set("Cookie", "plume_reviewer="+url.QueryEscape(tt.cookie))
			}
			if tt.proto != "" {
				req.Header.Set("X-Forwarded-Proto", tt.proto)
			}
			res, err := newReviewerClient(t, false).Do(req)
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			require.Less(t, res.StatusCode, 400)
			cookies := res.Cookies()
			if !tt.wantNew {
				assert.Empty(t, cookies)
				return
			}
			require.Len(t, cookies, 1)
			c := cookies[0]
			assert.Equal(t, "plume_reviewer", c.Name)
			assert.Regexp(t, `^[0-9a-f]{32}$`, c.Value)
			assert.Equal(t, "/f/", c.Path)
			assert.Equal(t, 365*24*3600, c.MaxAge)
			assert.True(t, c.HttpOnly)
			assert.Equal(t, http.SameSiteLaxMode, c.SameSite)
			assert.Equal(t, tt.wantSecure, c.Secure)
		})
	}
}

// TestPageSubmitUpserts checks that one reviewer (one cookie) has one record per completion,
// replaced by each submission, and that another reviewer of the same link has their own.
func TestPageSubmitUpserts(t *testing.T) {
	f := newPageFixture(t, apitest.Options{}, "Your refund was sent.")
	id := f.spans[0]
	alice, bob := newReviewerClient(t, true), newReviewerClient(t, true)
	pageGet(t, alice, f.link.URL)

	p := pagePost(t, alice, f.link.URL, url.Values{"completion_id": {id}, "thumbs": {"up"}, "reason": {"Polite."}})
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Equal(t, 1, strings.Count(p.Body, "Thanks, your feedback was saved."))
	assert.Contains(t, p.Body, "Reviewed: 👍 good")

	p = pagePost(t, alice, f.link.URL, url.Values{
		"completion_id": {id}, "thumbs": {"down"}, "reason": {"  Wrong date.\r\nIt was Tuesday.  "},
		"expected_output": {"Your refund was sent on Tuesday."},
	})
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, p.Body, "Reviewed: 👎 bad")
	assert.Contains(t, p.Body, ">Wrong date.\nIt was Tuesday.</textarea>", "the form keeps the reviewer's words")

	items := f.humanFeedback(t, id)
	require.Len(t, items, 1, "one record per reviewer and completion")
	assert.False(t, items[0].ThumbsUp)
	assert.Equal(t, "Wrong date.\nIt was Tuesday.", items[0].Reason)
	require.NotNil(t, items[0].ExpectedOutput)
	assert.Equal(t, "Your refund was sent on Tuesday.", *items[0].ExpectedOutput)

	p = pagePost(t, bob, f.link.URL, url.Values{"completion_id": {id}, "thumbs": {"up"}, "reason": {""}})
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	items = f.humanFeedback(t, id)
	require.Len(t, items, 2, "a second reviewer has their own record")
	assert.NotEqual(t, items[0].CreatedBy.ID, items[1].CreatedBy.ID)
	for _, it := range items {
		assert.True(t, strings.HasPrefix(it.CreatedBy.ID, "link:"+f.link.ID+":"), it.CreatedBy.ID)
		if it.ThumbsUp {
			assert.Empty(t, it.Reason, "an empty reason is not set")
			assert.Nil(t, it.ExpectedOutput)
		}
	}
}

func TestPageRateLimit(t *testing.T) {
	// The four requests are counted in one minute of the clock.
	f := newPageFixture(t, apitest.Options{LinkRate: 3, Clock: apitest.MinuteStart()}, "Your refund was sent.")
	c := newReviewerClient(t, false)
	for i := range 3 {
		p := pageGet(t, c, f.link.URL)
		require.Equal(t, http.StatusOK, p.Status, "request %d: %s", i+1, p.Body)
	}
	tests := []struct {
		name string
		send func() pageResponse
	}{
		{"page", func() pageResponse { return pageGet(t, c, f.link.URL) }},
		{"form", func() pageResponse {
			return pagePost(t, c, f.link.URL, url.Values{"completion_id": {f.spans[0]}, "thumbs": {"up"}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.send()
			assert.Equal(t, http.StatusTooManyRequests, p.Status)
			assert.Equal(t, "60", p.Header.Get("Retry-After"))
			assertHTMLPage(t, p)
			assert.Contains(t, p.Body, "Too many requests")
		})
	}
	assert.Empty(t, f.humanFeedback(t, f.spans[0]), "a rate-limited form is not saved")
}

// FuzzPageForm feeds arbitrary form bodies to the review form: every answer is a redirect or
// an HTML error page the person can act on, never a 500.
func FuzzPageForm(f *testing.F) {
	fx := newPageFixture(f, apitest.Options{LinkRate: 1 << 30}, "Your refund was sent.")
	for _, seed := range []string{
		"completion_id=" + fx.spans[0] + "&thumbs=up",
		"completion_id=" + fx.spans[0] + "&thumbs=down&reason=r&expected_output=e",
		"completion_id=" + strings.ToUpper(fx.spans[0]) + "&thumbs=down",
		"completion_id=%zz&thumbs=up",
		"completion_id=" + strings.Repeat("a", 200) + "&thumbs=up",
		"thumbs=up&thumbs=down",
		"completion_id=&thumbs=",
		"",
		"a=1;b=2",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/f/"+fx.link.Token, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		fx.api.Handler.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusSeeOther:
			assert.True(t, strings.HasPrefix(rec.Header().Get("Location"), "?done="))
		case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge:
			assert.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
			assert.True(t, strings.HasPrefix(rec.Body.String(), "<!doctype html>"))
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
	})
}

func TestPagePanicIsAnHTMLPage(t *testing.T) {
	testlog.Capture(t) // the panic's error line
	// Without its dependencies, the page handler panics.
	h := feedback.NewHandler(feedback.Deps{}, auth.NewAuthenticator(nil, 0))
	for _, method := range []string{"GET", "POST"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/f/plf_x", strings.NewReader("verdict=up")))
		assert.Equal(t, http.StatusInternalServerError, rec.Code, method)
		assert.Contains(t, rec.Header().Get("Content-Type"), "text/html", method)
		assert.Contains(t, rec.Body.String(), "Something went wrong", method)
	}
}
