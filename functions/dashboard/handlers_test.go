package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
)

// assertPage checks what every page carries: HTML, the strict CSP, no caching.
func assertPage(t *testing.T, p page) {
	t.Helper()
	assert.Equal(t, "text/html; charset=utf-8", p.Header.Get("Content-Type"))
	csp := p.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "script-src 'self';")
	assert.Contains(t, csp, "default-src 'none'")
	assert.NotContains(t, csp, "unsafe-inline")
	assert.Equal(t, "no-store", p.Header.Get("Cache-Control"))
	assert.Equal(t, "nosniff", p.Header.Get("X-Content-Type-Options"))
	assert.NotContains(t, p.Body, " style=", "no inline style (CSP)")
	assert.NotRegexp(t, `<script>|<script [^>]*>[^<]`, p.Body, "no inline script (CSP)")
	assert.NotRegexp(t, `(?i)\son[a-z]+=`, p.Body, "no inline event handler (CSP)")
	assert.Contains(t, p.Body, `<main id="main"`)
}

func TestSignIn(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)

	p := b.get(t, "/ui/traces?name=x")
	assert.Equal(t, http.StatusUnauthorized, p.Status, "a page without a session")
	assertPage(t, p)
	assert.Contains(t, p.Body, `name="api_key"`, "the sign-in form")
	assert.Contains(t, p.Body, `name="next" value="/ui/traces?name=x"`)

	login := b.get(t, "/ui/login")
	require.Equal(t, http.StatusOK, login.Status)
	assertPage(t, login)
	token := csrf(t, login)
	ingestKey, key, err := auth.NewKey(auth.KeySpec{ProjectID: f.api.A.ProjectID, Role: auth.RoleIngest}, time.Now())
	require.NoError(t, err)
	require.NoError(t, f.api.Auth.CreateKey(t.Context(), key))

	tests := []struct {
		name   string
		form   url.Values
		header []string
		status int
		want   string
	}{
		{"no CSRF token", url.Values{"api_key": {f.api.A.Key}}, nil, http.StatusForbidden, "reload the page"},
		{"a wrong CSRF token", url.Values{"api_key": {f.api.A.Key}, "csrf": {wrongToken(token)}}, nil, http.StatusForbidden, "reload the page"},
		{"another site", url.Values{"api_key": {f.api.A.Key}, "csrf": {token}}, []string{"Origin", "https://evil.example"}, http.StatusForbidden, "another site"},
		{"not a form", url.Values{"api_key": {f.api.A.Key}, "csrf": {token}}, []string{"Content-Type", "application/json"}, http.StatusUnsupportedMediaType, "takes an HTML form"},
		{"no key", url.Values{"csrf": {token}}, nil, http.StatusUnauthorized, "Enter an API key."},
		{"an ingest key", url.Values{"api_key": {ingestKey}, "csrf": {token}}, nil, http.StatusForbidden, "role is ingest"},
		{"an unknown key", url.Values{"api_key": {"plm_" + strings.Repeat("x", 40)}, "csrf": {token}}, nil, http.StatusUnauthorized, "cannot sign in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.post(t, "/ui/login", tt.form, tt.header...)
			assert.Equal(t, tt.status, p.Status, p.Body)
			assertPage(t, p)
			assert.Contains(t, p.Body, tt.want)
			assert.Nil(t, b.sessionCookie(t))
		})
	}

	p = b.post(t, "/ui/login", url.Values{"api_key": {f.api.A.Key}, "csrf": {token}, "next": {"/ui/traces?name=x"}},
		"Origin", f.srv.URL, "X-Forwarded-Proto", "https")
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	assert.Equal(t, "/ui/traces?name=x", p.Header.Get("Location"))
	var set *http.Cookie
	for _, c := range (&http.Response{Header: p.Header}).Cookies() {
		if c.Name == "plume_session" {
			set = c
		}
	}
	require.NotNil(t, set)
	assert.Len(t, set.Value, 43, "32 bytes, base64url")
	assert.True(t, set.HttpOnly)
	assert.True(t, set.Secure, "HTTPS through a proxy")
	assert.Equal(t, http.SameSiteLaxMode, set.SameSite)
	assert.Equal(t, "/ui", set.Path)
	assert.Equal(t, 12*3600, set.MaxAge)
	for _, c := range p.Header.Values("Set-Cookie") {
		assert.NotContains(t, c, f.api.A.Key)
	}
	// The session is stored under the hash of its id, and holds the key's id and user.
	ws, err := ddb.NewWebSessionStore(f.api.Table).WebSession(t.Context(), auth.HashKey(set.Value), time.Now())
	require.NoError(t, err)
	assert.Equal(t, f.api.A.ProjectID, ws.ProjectID)
	assert.Equal(t, f.api.A.UserID, ws.User.ID)
	assert.Equal(t, auth.HashKey(f.api.A.Key), ws.KeyHash)
	assert.WithinDuration(t, time.Now().Add(12*time.Hour), ws.ExpiresAt, time.Minute)
}

func TestOpenRedirect(t *testing.T) {
	f := newFixture(t)
	for _, next := range []string{"//evil.example/ui/", "https://evil.example/ui/", "/ui/\\evil", "/other"} {
		b := f.browser(t)
		login := b.get(t, "/ui/login")
		p := b.post(t, "/ui/login", url.Values{"api_key": {f.api.A.Key}, "csrf": {csrf(t, login)}, "next": {next}})
		require.Equal(t, http.StatusSeeOther, p.Status)
		assert.Equal(t, "/ui/", p.Header.Get("Location"), next)
	}
}

func TestPages(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	shortID, shortSpans := f.seedTrace(t, f.api.A.Key, "checkout", 2, func(i int, s map[string]any) {
		if i == 1 {
			s["status"] = "error"
			s["error_message"] = "card declined"
			s["cost"] = 0.25
			s["attributes"] = map[string]any{"inputTokens": 120, "outputTokens": 30}
			s["input_data"] = "the input"
			s["output_data"] = "the output"
			s["tags"] = map[string]string{"env": "prod"}
		}
	})
	longID, _ := f.seedTrace(t, f.api.A.Key, "batch job", 250, nil)
	victimID, _ := f.seedTrace(t, f.api.B.Key, "B's private trace", 1, nil)

	// The overview's figures come from the metrics, which follow the table's change stream
	// (this fixture's table has none: TestOverview checks them); its recent traces are the
	// project's own.
	t.Run("overview", func(t *testing.T) {
		p := b.get(t, "/ui/")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, shortID)
		assert.NotContains(t, p.Body, "B&#39;s private trace")
	})
	t.Run("traces", func(t *testing.T) {
		p := b.get(t, "/ui/traces")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Equal(t, 2, strings.Count(p.Body, `data-testid="trace-row"`))
		assert.Contains(t, p.Body, `href="/ui/traces/`+shortID+`"`)
		assert.NotContains(t, p.Body, victimID)
		assert.Less(t, strings.Index(p.Body, "batch job"), strings.Index(p.Body, "checkout"), "newest first")

		p = b.get(t, "/ui/traces?name=checkout")
		assert.Equal(t, 1, strings.Count(p.Body, `data-testid="trace-row"`))
		assert.Contains(t, p.Body, shortID)
		p = b.get(t, "/ui/traces?status=error")
		assert.Equal(t, 1, strings.Count(p.Body, `data-testid="trace-row"`))
		assert.Contains(t, p.Body, shortID)
		p = b.get(t, "/ui/traces?status=error&name=batch+job")
		assert.Contains(t, p.Body, `data-testid="no-traces"`)
		assert.Contains(t, p.Body, `value="batch job"`, "the filter is kept in the form")
	})
	t.Run("trace", func(t *testing.T) {
		p := b.get(t, "/ui/traces/"+shortID)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Equal(t, 3, strings.Count(p.Body, `data-testid="span-row"`))
		assert.Contains(t, p.Body, `class="span d0" data-depth="0" data-testid="span-row" data-span-id="`+shortSpans[0]+`"`)
		assert.Contains(t, p.Body, `class="span d1 err" data-depth="1" data-testid="span-row" data-span-id="`+shortSpans[2]+`"`)
		assert.Contains(t, p.Body, `href="/ui/traces/`+shortID+`/spans/`+shortSpans[2]+`"`)
		assert.Contains(t, p.Body, "$0.250000")
		assert.Contains(t, p.Body, `<rect x="`)
		assert.NotContains(t, p.Body, "the input", "span bodies are loaded when opened")
	})
	t.Run("pages of spans", func(t *testing.T) {
		p := b.get(t, "/ui/traces/"+longID)
		require.Equal(t, http.StatusOK, p.Status)
		assert.Equal(t, 200, strings.Count(p.Body, `data-testid="span-row"`))
		assert.Contains(t, p.Body, `href="/ui/traces/`+longID+`?page=2" rel="next"`)
		p = b.get(t, "/ui/traces/"+longID+"?page=2")
		require.Equal(t, http.StatusOK, p.Status)
		assert.Equal(t, 51, strings.Count(p.Body, `data-testid="span-row"`))
		assert.Contains(t, p.Body, "Page 2 of 2")
	})
	t.Run("span", func(t *testing.T) {
		path := "/ui/traces/" + shortID + "/spans/" + shortSpans[2]
		p := b.get(t, path)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, "<title>Span step 1 · Plume</title>")
		for _, want := range []string{"the input", "the output", "card declined", `data-testid="tokens">120 in, 30 out<`, "<code>env</code></td><td>prod</td>"} {
			assert.Contains(t, p.Body, want)
		}
		req, err := http.NewRequest("GET", f.srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("X-Plume-Fragment", "1")
		frag := b.do(t, req)
		require.Equal(t, http.StatusOK, frag.Status)
		assert.True(t, strings.HasPrefix(strings.TrimSpace(frag.Body), `<section class="card" data-testid="span-detail"`), frag.Body)
		assert.NotContains(t, frag.Body, "<html")
		assert.Contains(t, frag.Body, "the output")
	})
	t.Run("bad input and other tenants", func(t *testing.T) {
		tests := []struct {
			name   string
			path   string
			status int
		}{
			{"bad status", "/ui/traces?status=bogus", http.StatusBadRequest},
			{"negative offset", "/ui/traces?offset=-1", http.StatusBadRequest},
			{"long name", "/ui/traces?name=" + strings.Repeat("a", 1025), http.StatusBadRequest},
			{"long trace id", "/ui/traces/" + strings.Repeat("a", 129), http.StatusNotFound},
			{"control character", "/ui/traces/a%01b", http.StatusNotFound},
			{"unknown trace", "/ui/traces/" + uuid.NewString(), http.StatusNotFound},
			{"another project's trace", "/ui/traces/" + victimID, http.StatusNotFound},
			{"page 0", "/ui/traces/" + shortID + "?page=0", http.StatusBadRequest},
			{"page past the end", "/ui/traces/" + shortID + "?page=2", http.StatusNotFound},
			{"span of another trace", "/ui/traces/" + longID + "/spans/" + shortSpans[1], http.StatusNotFound},
			{"unknown page", "/ui/nothing", http.StatusNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.get(t, tt.path)
				assert.Equal(t, tt.status, p.Status, p.Body)
				assertPage(t, p)
				assert.Contains(t, p.Body, `data-testid="error-message"`)
				assert.NotContains(t, p.Body, "B&#39;s private trace")
			})
		}
	})
}

func TestSignOutAndRevocation(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	token := b.signIn(t, f.api.A.Key)
	old := b.sessionCookie(t)
	require.NotNil(t, old)

	tests := []struct {
		name   string
		form   url.Values
		header []string
	}{
		{"no token", url.Values{}, nil},
		{"a wrong token", url.Values{"csrf": {wrongToken(token)}}, nil},
		{"another site's origin", url.Values{"csrf": {token}}, []string{"Origin", "http://evil.example"}},
		{"a cross-site fetch", url.Values{"csrf": {token}}, []string{"Sec-Fetch-Site", "cross-site"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.post(t, "/ui/logout", tt.form, tt.header...)
			assert.Equal(t, http.StatusForbidden, p.Status, p.Body)
			assertPage(t, p)
			assert.Equal(t, http.StatusOK, b.get(t, "/ui/").Status, "still signed in")
		})
	}

	p := b.post(t, "/ui/logout", url.Values{"csrf": {token}}, "Origin", f.srv.URL)
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	assert.Equal(t, "/ui/login", p.Header.Get("Location"))
	assert.Nil(t, b.sessionCookie(t), "the cookie is cleared")
	// The old cookie, kept elsewhere, no longer works: the session is gone server-side.
	replay := f.browser(t)
	u, _ := url.Parse(f.srv.URL + "/ui/")
	replay.jar.SetCookies(u, []*http.Cookie{{Name: old.Name, Value: old.Value, Path: "/ui"}})
	assert.Equal(t, http.StatusUnauthorized, replay.get(t, "/ui/").Status)

	// A revoked key ends its sessions on the next request.
	b.signIn(t, f.api.A.Key)
	p0, err := f.api.Env.Authn().Authenticate(context.Background(), "Bearer "+f.api.A.Key)
	require.NoError(t, err)
	_, err = f.api.Auth.RevokeKey(context.Background(), f.api.A.ProjectID, p0.KeyID, time.Now())
	require.NoError(t, err)
	p = b.get(t, "/ui/traces")
	assert.Equal(t, http.StatusUnauthorized, p.Status)
	assert.Contains(t, p.Body, `name="api_key"`)
}

func TestAssets(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	login := b.get(t, "/ui/login")
	for _, m := range []string{`src="(/ui/assets/app\.[0-9a-f]{12}\.js)"`, `href="(/ui/assets/app\.[0-9a-f]{12}\.css)"`} {
		found := regexpFind(t, m, login.Body)
		p := b.get(t, found)
		assert.Equal(t, http.StatusOK, p.Status, found)
		assert.Equal(t, "public, max-age=31536000, immutable", p.Header.Get("Cache-Control"))
	}
	assert.Equal(t, http.StatusNotFound, b.get(t, "/ui/assets/app.js").Status, "only hashed names")
}
