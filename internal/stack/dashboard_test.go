package stack_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/shared/asyncinvoke"
	"github.com/plumehq/plume/shared/auth"
)

// TestDashboardInTheStack signs in to the dashboard as the whole stack serves it (plume-local's
// handler, DashboardFunction as its Build makes it) and uses forms whose pages call the REST
// areas mounted in the dashboard's process: judges, optimization runs (mounted only with the
// runs' queue) and key management, which the API refuses to a member session as to a member
// key.
func TestDashboardInTheStack(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	api.Optimizations.Serve(func(context.Context, []byte) error { return nil }, asyncinvoke.Config{Retries: -1}) // runs stay queued
	whole, err := stack.Handler(api.Env)
	require.NoError(t, err)
	whole = api.Applying(whole) // the aggregates follow its writes, as API.Handler's
	srv := httptest.NewServer(whole)
	t.Cleanup(srv.Close)
	api.EnsurePrompt(t, api.A, "greeter", "Say hello to {{name}}.")

	admin := signInDashboard(t, srv.URL, api.A.Key)
	status, loc, _ := admin.post(t, "/ui/judges", url.Values{"name": {"polite"}, "template": {"Is it polite?\n{{output}}"}})
	require.Equal(t, http.StatusSeeOther, status)
	judgeID := strings.TrimPrefix(loc, "/ui/judges/")
	judge := api.MustDo(t, "GET", "/projects/"+api.A.ProjectID+"/judges/"+judgeID, api.A.Key, nil).Map(t)
	assert.Equal(t, "polite", judge["name"], "the form created the judge through the API")

	status, _, body := admin.post(t, "/ui/judges/"+judgeID+"/links", url.Values{"slug": {"greeter"}})
	require.Equal(t, http.StatusSeeOther, status, body)
	status, loc, body = admin.post(t, "/ui/prompts/greeter/optimize", url.Values{"strategy": {"quick_refine"}})
	require.Equal(t, http.StatusSeeOther, status, body)
	assert.True(t, strings.HasPrefix(loc, "/ui/optimization-runs/"), loc)
	runID := strings.TrimPrefix(loc, "/ui/optimization-runs/")
	api.MustDo(t, "GET", "/projects/"+api.A.ProjectID+"/optimization-runs/"+runID, api.A.Key, nil)

	secret, key, err := auth.NewKey(auth.KeySpec{ProjectID: api.A.ProjectID, Role: auth.RoleMember, User: auth.User{ID: "member-user"}}, time.Now())
	require.NoError(t, err)
	require.NoError(t, api.Auth.CreateKey(t.Context(), key))
	member := signInDashboard(t, srv.URL, secret)
	status, _, body = member.post(t, "/ui/settings/keys", url.Values{"role": {"admin"}})
	assert.Equal(t, http.StatusForbidden, status, "a member session may not issue keys: %.300s", body)
}

// dashboardSession is a signed-in browser of the dashboard: a cookie jar, redirects not followed.
type dashboardSession struct {
	base string
	c    *http.Client
	csrf string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func signInDashboard(t *testing.T, base, key string) *dashboardSession {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	s := &dashboardSession{base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
	_, _, login := s.get(t, "/ui/login")
	s.csrf = csrfField.FindStringSubmatch(login)[1]
	status, _, body := s.post(t, "/ui/login", url.Values{"api_key": {key}})
	require.Equal(t, http.StatusSeeOther, status, body)
	status, _, home := s.get(t, "/ui/")
	require.Equal(t, http.StatusOK, status, home)
	s.csrf = csrfField.FindStringSubmatch(home)[1]
	return s
}

func (s *dashboardSession) get(t *testing.T, path string) (int, string, string) {
	t.Helper()
	res, err := s.c.Get(s.base + path)
	require.NoError(t, err)
	return read(t, res)
}

// post sends a form with the session's CSRF token, as the page's own form does.
func (s *dashboardSession) post(t *testing.T, path string, form url.Values) (int, string, string) {
	t.Helper()
	form.Set("csrf", s.csrf)
	req, err := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.base)
	res, err := s.c.Do(req)
	require.NoError(t, err)
	return read(t, res)
}

func read(t *testing.T, res *http.Response) (int, string, string) {
	t.Helper()
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header.Get("Location"), string(body)
}
