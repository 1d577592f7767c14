package dashboard_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/dashboard"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
)

// fixture is the REST API (for seeding, as clients do) and the dashboard over the same table,
// served over HTTP. The dashboard checks the session's key on every request (no key cache),
// so that a revocation shows at once.
type fixture struct {
	api *apitest.API
	srv *httptest.Server
	// signalPages are pages of newShowcase that show signals (a span's, a trace's, a
	// session's), which the crawl may reach through other entities.
	signalPages []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return serveDashboard(t, apitest.New(t, apitest.Options{Config: func(c *config.Config) { c.AuthCacheTTL = 0 }}))
}

// newStreamFixture is newFixture over a table with its change stream, for the pages that read
// the metrics (the overview): seed, then f.api.DrainStream, then read the page.
func newStreamFixture(t *testing.T) *fixture {
	t.Helper()
	return serveDashboard(t, apitest.New(t, apitest.Options{Config: func(c *config.Config) { c.AuthCacheTTL = 0 }}))
}

// serveDashboard serves the dashboard over api's table and REST handler, as
// dashboard.Function builds it.
func serveDashboard(t *testing.T, api *apitest.API) *fixture {
	t.Helper()
	origin, err := dashboard.AttachmentOrigin(t.Context(), api.Blobs)
	require.NoError(t, err)
	h := dashboard.NewHandler(dashboard.Deps{
		Sessions: ddb.NewWebSessionStore(api.Table), Authn: api.Env.Authn(),
		API: api.Handler, ImageOrigin: origin,
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{api: api, srv: srv}
}

// browser is an HTTP client with a cookie jar that does not follow redirects.
type browser struct {
	f   *fixture
	c   *http.Client
	jar *cookiejar.Jar
}

func (f *fixture) browser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &browser{f: f, jar: jar, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	Status int
	Header http.Header
	Body   string
}

func (b *browser) do(t *testing.T, req *http.Request) page {
	t.Helper()
	res, err := b.c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return page{Status: res.StatusCode, Header: res.Header, Body: string(body)}
}

func (b *browser) get(t *testing.T, path string) page {
	t.Helper()
	req, err := http.NewRequest("GET", b.f.srv.URL+path, nil)
	require.NoError(t, err)
	return b.do(t, req)
}

func (b *browser) post(t *testing.T, path string, form url.Values, header ...string) page {
	t.Helper()
	req, err := http.NewRequest("POST", b.f.srv.URL+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(t, req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the form on p.
func csrf(t *testing.T, p page) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.Body)
	require.NotNil(t, m, "no csrf field in %.300s", p.Body)
	return m[1]
}

// signIn signs b in with key and returns the session's CSRF token.
func (b *browser) signIn(t *testing.T, key string) string {
	t.Helper()
	login := b.get(t, "/ui/login")
	require.Equal(t, http.StatusOK, login.Status, login.Body)
	res := b.post(t, "/ui/login", url.Values{"api_key": {key}, "csrf": {csrf(t, login)}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	home := b.get(t, "/ui/")
	require.Equal(t, http.StatusOK, home.Status, home.Body)
	return csrf(t, home)
}

// sessionCookie is the session cookie b holds for the server.
func (b *browser) sessionCookie(t *testing.T) *http.Cookie {
	t.Helper()
	u, err := url.Parse(b.f.srv.URL + "/ui/")
	require.NoError(t, err)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == "plume_session" {
			return c
		}
	}
	return nil
}

// span is an SDK-shaped span.
func span(id, traceID, parent, name string, at time.Time, d time.Duration) map[string]any {
	s := map[string]any{
		"id": id, "trace_id": traceID, "name": name, "kind": "generic",
		"started_at": float64(at.UnixMicro()) / 1e6, "ended_at": float64(at.Add(d).UnixMicro()) / 1e6, "status": "ok",
	}
	if parent != "" {
		s["parent_span_id"] = parent
	}
	return s
}

// seedTrace posts a trace of a root and n children to key's project and returns its id and the
// span ids, root first.
func (f *fixture) seedTrace(t *testing.T, key, name string, n int, extra func(i int, s map[string]any)) (string, []string) {
	t.Helper()
	traceID, at := uuid.NewString(), time.Now().Add(-time.Hour)
	ids := []string{uuid.NewString()}
	spans := []any{span(ids[0], traceID, "", name, at, time.Duration(n+1)*time.Second)}
	for i := range n {
		id := uuid.NewString()
		ids = append(ids, id)
		s := span(id, traceID, ids[0], fmt.Sprintf("step %d", i), at.Add(time.Duration(i)*time.Second), time.Second)
		if extra != nil {
			extra(i, s)
		}
		spans = append(spans, s)
	}
	for start := 0; start < len(spans); start += 1000 {
		f.api.MustDo(t, "POST", "/spans", key, spans[start:min(start+1000, len(spans))])
	}
	return traceID, ids
}

func regexpFind(t *testing.T, pattern, s string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	require.NotNil(t, m, "%s not in %.300s", pattern, s)
	return m[1]
}

// wrongToken is a CSRF token that differs from token in its first character.
func wrongToken(token string) string {
	if token[0] == 'x' {
		return "y" + token[1:]
	}
	return "x" + token[1:]
}
