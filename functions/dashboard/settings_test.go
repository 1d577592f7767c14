package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/config"
)

// issueKey issues a key of role in project straight into the store and returns its secret and
// id.
func (f *fixture) issueKey(t *testing.T, project string, role auth.Role) (string, string) {
	t.Helper()
	secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: project, Role: role, User: auth.User{Email: string(role) + "@example.com"}}, time.Now())
	require.NoError(t, err)
	require.NoError(t, f.api.Auth.CreateKey(t.Context(), k))
	return secret, k.ID
}

// keyCount is the number of keys of project.
func (f *fixture) keyCount(t *testing.T, project string) int {
	t.Helper()
	keys, err := f.api.Auth.Keys(t.Context(), project)
	require.NoError(t, err)
	return len(keys)
}

func TestSettingsAdminAndMember(t *testing.T) {
	f := newFixture(t)
	admin := f.browser(t)
	admin.signIn(t, f.api.A.Key)
	p := admin.get(t, "/ui/settings")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `<h1>Settings</h1>`)
	assert.Contains(t, p.Body, f.api.A.ProjectID)
	assert.Contains(t, p.Body, `data-testid="keys"`)
	assert.Contains(t, p.Body, `data-testid="issue-form"`)
	assert.Contains(t, p.Body, `data-testid="mine"`, "the session's own key is marked")
	assert.Contains(t, p.Body, `data-testid="no-prices"`)
	assert.Contains(t, p.Body, `data-testid="no-links"`)
	assert.Contains(t, p.Body, `aria-current="page">Settings`)

	memberKey, _ := f.issueKey(t, f.api.A.ProjectID, auth.RoleMember)
	member := f.browser(t)
	token := member.signIn(t, memberKey)
	p = member.get(t, "/ui/settings")
	require.Equal(t, http.StatusOK, p.Status, "the page works for members: %s", p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="keys-admin-only"`)
	assert.NotContains(t, p.Body, `data-testid="keys"`)
	assert.NotContains(t, p.Body, `data-testid="issue-form"`)
	assert.Contains(t, p.Body, `data-testid="price-form"`, "members set prices")
	assert.Contains(t, p.Body, "member")

	// A member's forged forms are refused by the API, and nothing changes.
	before := f.keyCount(t, f.api.A.ProjectID)
	res := member.post(t, "/ui/settings/keys", url.Values{"csrf": {token}, "role": {"admin"}})
	assert.Equal(t, http.StatusForbidden, res.Status, res.Body)
	res = member.get(t, "/ui/settings/keys/"+uuid.NewString()+"/revoke")
	assert.Equal(t, http.StatusForbidden, res.Status, res.Body)
	res = member.post(t, "/ui/settings/keys/"+uuid.NewString()+"/revoke", url.Values{"csrf": {token}})
	assert.Equal(t, http.StatusForbidden, res.Status, res.Body)
	assert.Equal(t, before, f.keyCount(t, f.api.A.ProjectID))

	// Without a session, nothing.
	anon := f.browser(t)
	assert.Equal(t, http.StatusUnauthorized, anon.get(t, "/ui/settings").Status)
	assert.Equal(t, http.StatusUnauthorized, anon.post(t, "/ui/settings/keys", url.Values{"role": {"admin"}}).Status)
}

func TestSettingsIssueKey(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	token := b.signIn(t, f.api.A.Key)
	name := `<script>alert(1)</script>`

	res := b.post(t, "/ui/settings/keys", url.Values{"csrf": {token}, "role": {"member"}, "name": {name}, "user_email": {"ci@example.com"}, "expires_in_days": {"30"}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	require.Equal(t, "/ui/settings/keys/issued", res.Header.Get("Location"))
	assert.NotContains(t, res.Header.Get("Location"), auth.KeyPrefix, "no secret in a URL")

	shown := b.get(t, "/ui/settings/keys/issued")
	require.Equal(t, http.StatusOK, shown.Status, shown.Body)
	assertPage(t, shown)
	secret := regexpFind(t, `value="(plm_[A-Za-z0-9]+)" data-testid="secret"`, shown.Body)
	require.True(t, strings.HasPrefix(secret, auth.KeyPrefix))
	assert.Contains(t, shown.Body, `data-testid="secret-warning"`)
	assert.Contains(t, shown.Body, "&lt;script&gt;", "the name is escaped")
	assert.NotContains(t, shown.Body, name)

	// The key works, with its role.
	assert.Equal(t, http.StatusOK, f.api.Do(t, "GET", "/projects/"+f.api.A.ProjectID+"/model-prices", secret, nil).Status)
	assert.Equal(t, http.StatusForbidden, f.api.Do(t, "GET", "/projects/"+f.api.A.ProjectID+"/api-keys", secret, nil).Status)

	again := b.get(t, "/ui/settings/keys/issued")
	require.Equal(t, http.StatusOK, again.Status)
	assert.NotContains(t, again.Body, secret, "reloading does not show the secret")
	assert.Contains(t, again.Body, `data-testid="secret-gone"`)
	p := b.get(t, "/ui/settings")
	assert.NotContains(t, p.Body, secret)
	assert.Contains(t, p.Body, secret[:12], "listed by its start")
	assert.NotContains(t, p.Body, name)
	assert.Equal(t, 2, f.keyCount(t, f.api.A.ProjectID))

	// Another session of another project does not see a secret left in a cookie.
	res = b.post(t, "/ui/settings/keys", url.Values{"csrf": {token}, "role": {"ingest"}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	u, _ := url.Parse(f.srv.URL + "/ui/settings/keys/issued")
	var cookies []*http.Cookie
	for _, c := range b.jar.Cookies(u) {
		if c.Name == "plume_issued_key" {
			cookies = append(cookies, c)
		}
	}
	require.Len(t, cookies, 1)
	other := f.browser(t)
	other.signIn(t, f.api.B.Key)
	other.jar.SetCookies(u, cookies)
	p = other.get(t, "/ui/settings/keys/issued")
	assert.Contains(t, p.Body, `data-testid="secret-gone"`, "a key of another project is not shown")
	assert.NotContains(t, p.Body, `data-testid="secret"`)

	tests := []struct {
		name string
		form url.Values
		want string
	}{
		{"bad role", url.Values{"role": {"owner"}, "name": {"kept name"}}, "owner"},
		{"no role", url.Values{"name": {"kept name"}}, "role is required"},
		{"bad email", url.Values{"role": {"member"}, "name": {"kept name"}, "user_email": {"nope"}}, "not an email"},
		{"bad expiry", url.Values{"role": {"member"}, "name": {"kept name"}, "expires_in_days": {"-3"}}, "Choose an expiry"},
		{"long name", url.Values{"role": {"member"}, "name": {strings.Repeat("n", 101)}}, "at most 100"},
	}
	before := f.keyCount(t, f.api.A.ProjectID)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.form.Set("csrf", token)
			res := b.post(t, "/ui/settings/keys", tt.form)
			assert.Equal(t, http.StatusBadRequest, res.Status, res.Body)
			assert.Contains(t, res.Body, `data-testid="issue-error"`)
			assert.Contains(t, res.Body, tt.want)
			if tt.name != "long name" {
				assert.Contains(t, res.Body, `value="kept name"`, "the input is kept")
			}
		})
	}
	assert.Equal(t, before, f.keyCount(t, f.api.A.ProjectID), "nothing issued")
}

func TestSettingsRevokeKey(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	token := b.signIn(t, f.api.A.Key)
	secret, id := f.issueKey(t, f.api.A.ProjectID, auth.RoleMember)
	_, bID := f.issueKey(t, f.api.B.ProjectID, auth.RoleAdmin)

	confirm := b.get(t, "/ui/settings/keys/"+id+"/revoke")
	require.Equal(t, http.StatusOK, confirm.Status, confirm.Body)
	assertPage(t, confirm)
	assert.Contains(t, confirm.Body, secret[:12])
	assert.Contains(t, confirm.Body, `data-testid="revoke-key"`)
	assert.Contains(t, confirm.Body, "cannot be undone")
	assert.Equal(t, http.StatusOK, f.api.Do(t, "GET", "/projects/"+f.api.A.ProjectID+"/model-prices", secret, nil).Status, "the confirm step changes nothing")

	res := b.post(t, "/ui/settings/keys/"+id+"/revoke", url.Values{"csrf": {token}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	assert.Equal(t, "/ui/settings#keys", res.Header.Get("Location"))
	assert.Equal(t, http.StatusUnauthorized, f.api.Do(t, "GET", "/projects/"+f.api.A.ProjectID+"/model-prices", secret, nil).Status)
	p := b.get(t, "/ui/settings")
	assert.Contains(t, p.Body, ">revoked<")
	confirm = b.get(t, "/ui/settings/keys/"+id+"/revoke")
	assert.Contains(t, confirm.Body, "already revoked")
	assert.NotContains(t, confirm.Body, `data-testid="revoke-key"`)

	// The last admin key (the session's own) cannot be revoked.
	mine := regexpFind(t, `data-testid="my-key-id">([^<]+)<`, p.Body)
	confirm = b.get(t, "/ui/settings/keys/"+mine+"/revoke")
	assert.Contains(t, confirm.Body, "revoking it signs you out")
	res = b.post(t, "/ui/settings/keys/"+mine+"/revoke", url.Values{"csrf": {token}})
	assert.Equal(t, http.StatusConflict, res.Status, res.Body)
	assert.Contains(t, res.Body, "last usable admin key")

	// Another project's key, unknown and malformed ids: not found, nothing revoked.
	for _, path := range []string{"/ui/settings/keys/" + bID + "/revoke", "/ui/settings/keys/" + uuid.NewString() + "/revoke", "/ui/settings/keys/nope/revoke"} {
		assert.Equal(t, http.StatusNotFound, b.get(t, path).Status, path)
		assert.Equal(t, http.StatusNotFound, b.post(t, path, url.Values{"csrf": {token}}).Status, path)
	}
	keys, err := f.api.Auth.Keys(t.Context(), f.api.B.ProjectID)
	require.NoError(t, err)
	for _, k := range keys {
		assert.Nil(t, k.RevokedAt, "B's keys are untouched")
	}
	assert.Equal(t, http.StatusForbidden, b.post(t, "/ui/settings/keys/"+id+"/revoke", url.Values{}).Status, "no CSRF token")
}

func TestSettingsPrices(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	token := b.signIn(t, f.api.A.Key)
	model := "acme/fine-<b>tune</b>"

	res := b.post(t, "/ui/settings/prices", url.Values{"csrf": {token}, "model": {model}, "input": {"0.5"}, "output": {"1.5"}, "cached_input": {"0.1"}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	got := f.api.MustDo(t, "GET", "/projects/"+f.api.A.ProjectID+"/model-prices/"+url.PathEscape(model), f.api.A.Key, nil).Map(t)
	assert.Equal(t, "project_price", got["source"])
	assert.InDelta(t, 1.5, got["output"], 1e-12)
	p := b.get(t, "/ui/settings")
	assert.Contains(t, p.Body, `data-testid="price"`)
	assert.Contains(t, p.Body, "acme/fine-&lt;b&gt;tune&lt;/b&gt;")
	assert.NotContains(t, p.Body, "<b>tune")

	for _, tt := range []struct {
		name string
		form url.Values
		want string
	}{
		{"no model", url.Values{"input": {"1"}, "output": {"1"}}, "Enter the model id"},
		{"not a number", url.Values{"model": {"m"}, "input": {"cheap"}, "output": {"1"}}, "Input price must be a number"},
		{"not finite", url.Values{"model": {"m"}, "input": {"1"}, "output": {"NaN"}}, "Output price must be a number"},
		{"negative", url.Values{"model": {"m"}, "input": {"-1"}, "output": {"1"}}, "input"},
		{"bad cached", url.Values{"model": {"m"}, "input": {"1"}, "output": {"1"}, "cache_write": {"x"}}, "Cache write price"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.form.Set("csrf", token)
			res := b.post(t, "/ui/settings/prices", tt.form)
			assert.Equal(t, http.StatusBadRequest, res.Status, res.Body)
			assert.Contains(t, res.Body, `data-testid="price-error"`)
			assert.Contains(t, res.Body, tt.want)
		})
	}
	list := f.api.MustDo(t, "GET", "/projects/"+f.api.A.ProjectID+"/model-prices", f.api.A.Key, nil).Map(t)
	assert.Len(t, list["overrides"], 1, "nothing else stored")

	confirm := b.get(t, "/ui/settings/prices/delete?model="+url.QueryEscape(model))
	require.Equal(t, http.StatusOK, confirm.Status, confirm.Body)
	assert.Contains(t, confirm.Body, `data-testid="delete-price"`)
	assert.Equal(t, http.StatusNotFound, b.get(t, "/ui/settings/prices/delete?model=unknown").Status)
	res = b.post(t, "/ui/settings/prices/delete", url.Values{"csrf": {token}, "model": {model}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	list = f.api.MustDo(t, "GET", "/projects/"+f.api.A.ProjectID+"/model-prices", f.api.A.Key, nil).Map(t)
	assert.Empty(t, list["overrides"])
	assert.Equal(t, http.StatusNotFound, b.post(t, "/ui/settings/prices/delete", url.Values{"csrf": {token}, "model": {model}}).Status)
}

func TestSettingsFeedbackLinks(t *testing.T) {
	f := newFixture(t)
	content := "You help."
	for _, key := range []string{f.api.A.Key, f.api.B.Key} {
		f.api.MustDo(t, "POST", "/v1/tasks/support/prompt/versions/ensure", key, map[string]any{"content": content})
	}
	link := f.api.MustDo(t, "POST", "/feedback-links", f.api.A.Key, map[string]any{"prompt_slug": "support", "link_type": "prompt_completion"}).Map(t)
	id := link["id"].(string)
	bLink := f.api.MustDo(t, "POST", "/feedback-links", f.api.B.Key, map[string]any{"prompt_slug": "support", "link_type": "prompt_completion"}).Map(t)["id"].(string)
	b := f.browser(t)
	token := b.signIn(t, f.api.A.Key)

	p := b.get(t, "/ui/settings")
	assert.Contains(t, p.Body, `data-link-id="`+id+`"`)
	assert.NotContains(t, p.Body, bLink)
	confirm := b.get(t, "/ui/settings/links/"+id+"/revoke")
	require.Equal(t, http.StatusOK, confirm.Status, confirm.Body)
	assert.Contains(t, confirm.Body, `data-testid="revoke-confirm"`)
	assert.Equal(t, http.StatusNotFound, b.get(t, "/ui/settings/links/"+bLink+"/revoke").Status)
	assert.Equal(t, http.StatusNotFound, b.post(t, "/ui/settings/links/"+bLink+"/revoke", url.Values{"csrf": {token}}).Status)

	res := b.post(t, "/ui/settings/links/"+id+"/revoke", url.Values{"csrf": {token}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	links := f.api.MustDo(t, "GET", "/feedback-links", f.api.A.Key, nil).Map(t)["links"].([]any)
	assert.Equal(t, "revoked", links[0].(map[string]any)["status"])
	b2 := f.api.MustDo(t, "GET", "/feedback-links", f.api.B.Key, nil).Map(t)["links"].([]any)
	assert.Equal(t, "active", b2[0].(map[string]any)["status"], "B's link is untouched")
}

// TestRevokeOwnKeyEndsSession: an admin who revokes, through the settings page, the key they
// signed in with is signed out at the next page, though this process caches keys for a minute.
func TestRevokeOwnKeyEndsSession(t *testing.T) {
	f := serveDashboard(t, apitest.New(t, apitest.Options{Config: func(c *config.Config) { c.AuthCacheTTL = time.Minute }}))
	secret, id := f.issueKey(t, f.api.A.ProjectID, auth.RoleAdmin) // A's first key stays: not the last admin
	b := f.browser(t)
	token := b.signIn(t, secret)
	require.Equal(t, http.StatusOK, b.get(t, "/ui/settings").Status, "the key is cached now")
	res := b.post(t, "/ui/settings/keys/"+id+"/revoke", url.Values{"csrf": {token}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	assert.Equal(t, http.StatusUnauthorized, b.get(t, "/ui/settings").Status, "the revoked key's session ended at once")
}
