package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/config"
)

// newAlertsFixture is the dashboard over an API with its change stream (the event log and the
// deliveries are raised from it: f.api.DrainStream) whose webhooks may post to 127.0.0.1.
func newAlertsFixture(t *testing.T) *fixture {
	t.Helper()
	return serveDashboard(t, apitest.New(t, apitest.Options{Config: func(c *config.Config) {
		c.AuthCacheTTL = 0
		c.Webhooks.AllowedHosts = []string{"127.0.0.1"}
	}}))
}

// receiver is a webhook target that answers 200.
func receiver(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hook"
}

// createMonitor creates a monitor of tenant through the API.
func (f *fixture) createMonitor(t *testing.T, tenant apitest.Tenant, name string) api.Monitor {
	t.Helper()
	thr := 0.05
	var m api.Monitor
	f.api.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/monitors", tenant.Key, api.CreateMonitorRequest{
		Name: name, Metric: api.MonitorErrorRate, Window: "5m", Comparison: api.MonitorGT, Threshold: &thr,
	}).Decode(t, &m)
	return m
}

func monitorForm(token string, kv ...string) url.Values {
	v := url.Values{"csrf": {token}, "name": {"checkout errors"}, "metric": {"error_rate"}, "window": {"1h"},
		"comparison": {"gt"}, "threshold": {"0.05"}, "resolve_threshold": {"0.02"}, "min_samples": {"20"}, "reminder": {"1h"},
		"filter": {"model"}, "filter_value": {"gpt-4o"}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// TestMonitorsPages: a member creates a monitor from the page, sees it listed with its state
// and its definition on its page, changes it (PATCH) and deletes it; bad input is a 400 with
// the form kept, and another project's monitor is a 404 page.
func TestMonitorsPages(t *testing.T) {
	f := newFixture(t)
	memberKey, _ := f.issueKey(t, f.api.A.ProjectID, auth.RoleMember)
	b := f.browser(t)
	token := b.signIn(t, memberKey)

	p := b.get(t, "/ui/monitors")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="no-monitors"`)
	assert.Contains(t, p.Body, `aria-current="page">Monitors`)
	assert.Contains(t, p.Body, `data-testid="monitor-form"`, "members manage monitors")

	res := b.post(t, "/ui/monitors", monitorForm(token, "name", "<b>checkout</b>"))
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	loc := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, "/ui/monitors/"), loc)
	id := strings.TrimPrefix(loc, "/ui/monitors/")

	p = b.get(t, "/ui/monitors")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Equal(t, 1, strings.Count(p.Body, `data-testid="monitor-row"`))
	assert.Contains(t, p.Body, `data-testid="monitor-state">no data<`)
	assert.Contains(t, p.Body, "&lt;b&gt;checkout&lt;/b&gt;", "the name is escaped")
	assert.Contains(t, p.Body, "model = gpt-4o")

	p = b.get(t, loc)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="monitor-rule">gt 0.05, resolves at 0.02<`)
	assert.Contains(t, p.Body, `data-testid="no-history"`)
	assert.Contains(t, p.Body, `name="min_samples" inputmode="numeric" value="20"`, "the edit form holds the definition")

	// Edit: a PATCH of every field; the state is kept.
	res = b.post(t, loc, monitorForm(token, "name", "checkout errors", "threshold", "0.1", "filter", "", "filter_value", ""))
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	var m api.Monitor
	f.api.MustDo(t, "GET", "/projects/"+f.api.A.ProjectID+"/monitors/"+id, f.api.A.Key, nil).Decode(t, &m)
	assert.Equal(t, 0.1, m.Threshold)
	assert.Equal(t, api.MonitorFilters{}, m.Filters)
	assert.Equal(t, "checkout errors", m.Name)
	assert.Equal(t, api.MonitorNoData, m.State)
	p = b.get(t, res.Header.Get("Location"))
	assert.Contains(t, p.Body, `data-testid="monitor-saved"`)

	// Pause, then resume: the state is kept.
	res = b.post(t, loc+"/pause", url.Values{"csrf": {token}, "paused": {"true"}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	p = b.get(t, loc)
	assert.Contains(t, p.Body, `data-testid="monitor-paused"`)
	assert.Contains(t, p.Body, `data-testid="resume-monitor"`)
	f.api.MustDo(t, "GET", "/projects/"+f.api.A.ProjectID+"/monitors/"+id, f.api.A.Key, nil).Decode(t, &m)
	assert.True(t, m.Paused)
	assert.Equal(t, 0.1, m.Threshold, "pausing changes nothing else")
	assert.Contains(t, b.get(t, "/ui/monitors").Body, `data-testid="monitor-paused"`)
	res = b.post(t, loc+"/pause", url.Values{"csrf": {token}, "paused": {"false"}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	p = b.get(t, loc)
	assert.NotContains(t, p.Body, `data-testid="monitor-paused"`)
	assert.Contains(t, p.Body, `data-testid="pause-monitor"`)
	assert.Equal(t, http.StatusBadRequest, b.post(t, loc+"/pause", url.Values{"csrf": {token}, "paused": {"maybe"}}).Status)

	// Bad input: 400, the form shown again with its input and the reason.
	tests := []struct {
		name string
		form url.Values
		want string
	}{
		{"threshold not a number", monitorForm(token, "threshold", "NaN"), "threshold must be a number"},
		{"no threshold", monitorForm(token, "threshold", ""), "Enter the threshold"},
		{"unknown filter", monitorForm(token, "filter", "colour"), "Choose a filter"},
		{"negative samples", monitorForm(token, "min_samples", "-1"), "minimum samples"},
		{"unknown metric (the API's refusal)", monitorForm(token, "metric", "vibes"), "metric"},
		{"bad window (the API's refusal)", monitorForm(token, "window", "fortnight"), "window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/ui/monitors", loc} {
				p := b.post(t, path, tt.form)
				assert.Equal(t, http.StatusBadRequest, p.Status, p.Body)
				assert.Contains(t, p.Body, `data-testid="monitor-error"`)
				assert.Contains(t, p.Body, tt.want)
			}
		})
	}
	var list api.MonitorList
	f.api.MustDo(t, "GET", "/projects/"+f.api.A.ProjectID+"/monitors", f.api.A.Key, nil).Decode(t, &list)
	assert.Len(t, list.Monitors, 1, "no refused form created one")

	// Tenancy: project B's monitor is a 404 page, to read, change or delete.
	other := f.createMonitor(t, f.api.B, "b's")
	for _, p := range []page{
		b.get(t, "/ui/monitors/"+other.ID),
		b.get(t, "/ui/monitors/"+other.ID+"/delete"),
		b.post(t, "/ui/monitors/"+other.ID, monitorForm(token)),
		b.post(t, "/ui/monitors/"+other.ID+"/delete", url.Values{"csrf": {token}}),
		b.post(t, "/ui/monitors/"+other.ID+"/pause", url.Values{"csrf": {token}, "paused": {"true"}}),
	} {
		assert.Equal(t, http.StatusNotFound, p.Status, p.Body)
	}
	f.api.MustDo(t, "GET", "/projects/"+f.api.B.ProjectID+"/monitors/"+other.ID, f.api.B.Key, nil)

	// Without the CSRF token nothing changes.
	assert.Equal(t, http.StatusForbidden, b.post(t, loc+"/delete", url.Values{"csrf": {wrongToken(token)}}).Status)

	// Delete: the confirm step, then the monitor is gone.
	p = b.get(t, loc+"/delete")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, p.Body, `data-testid="delete-monitor"`)
	res = b.post(t, loc+"/delete", url.Values{"csrf": {token}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	assert.Equal(t, http.StatusNotFound, b.get(t, loc).Status)
}

// TestWebhooksPages: an admin creates a webhook from the page and sees its secret once, its
// deliveries (a page of 4 GetItem and 1 Query, whatever the project holds) and redelivers
// one; a member sees no webhook and no admin button, and its forged forms are refused (403);
// another project's webhook is a 404 page.
func TestWebhooksPages(t *testing.T) {
	f := newAlertsFixture(t)
	b := f.browser(t)
	token := b.signIn(t, f.api.A.Key)

	p := b.get(t, "/ui/webhooks")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="no-webhooks"`)
	assert.Contains(t, p.Body, `data-testid="webhook-form"`)

	target := receiver(t)
	res := b.post(t, "/ui/webhooks", url.Values{"csrf": {token}, "url": {target}, "events": {api.EventPromptVersionCreated, api.EventPromptTagMoved}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	require.Equal(t, "/ui/webhooks/created", res.Header.Get("Location"))
	shown := b.get(t, "/ui/webhooks/created")
	require.Equal(t, http.StatusOK, shown.Status, shown.Body)
	assertPage(t, shown)
	secret := regexpFind(t, `value="(whsec_[^"]+)" data-testid="secret"`, shown.Body) // as the page escapes it (+ is &#43;)
	again := b.get(t, "/ui/webhooks/created")
	assert.NotContains(t, again.Body, secret, "the secret shows once")
	assert.Contains(t, again.Body, `data-testid="secret-gone"`)

	p = b.get(t, "/ui/webhooks")
	require.Equal(t, 1, strings.Count(p.Body, `data-testid="webhook-row"`), p.Body)
	assert.NotContains(t, p.Body, secret)
	hookID := regexpFind(t, `data-webhook-id="([^"]+)"`, p.Body)

	// Bad input: the API's refusal, shown with the form (400).
	p = b.post(t, "/ui/webhooks", url.Values{"csrf": {token}, "url": {"not a url"}, "events": {api.EventPromptTagMoved}})
	assert.Equal(t, http.StatusBadRequest, p.Status, p.Body)
	assert.Contains(t, p.Body, `data-testid="webhook-error"`)
	p = b.post(t, "/ui/webhooks", url.Values{"csrf": {token}, "url": {target}, "events": {"prompt.deleted"}})
	assert.Equal(t, http.StatusBadRequest, p.Status, p.Body)

	// A version raises an event, delivered to the webhook: its page shows the delivery.
	f.api.EnsurePrompt(t, f.api.A, "bot", "v1")
	f.api.DrainStream(t)
	var ds []api.WebhookDelivery
	require.Eventually(t, func() bool {
		var out api.WebhookDeliveryList
		f.api.MustDo(t, "GET", "/projects/"+f.api.A.ProjectID+"/webhooks/"+hookID+"/deliveries", f.api.A.Key, nil).Decode(t, &out)
		ds = out.Deliveries
		return len(ds) == 1 && ds[0].Status == api.DeliverySucceeded
	}, 10e9, 1e7)
	f.api.DDB.Reset()
	p = b.get(t, "/ui/webhooks/"+hookID)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	t.Logf("webhook page: DynamoDB %v", f.api.DDB.Counts())
	assert.Equal(t, map[string]int{"GetItem": 4, "Query": 1}, f.api.DDB.Counts(),
		"the session and its key; the webhook (GET it, and again by its deliveries route); one Query of its log (it was 3 Queries: the project's webhooks twice)")
	assertPage(t, p)
	assert.Equal(t, 1, strings.Count(p.Body, `data-testid="delivery-row"`))
	assert.Contains(t, p.Body, api.EventPromptVersionCreated)
	assert.Contains(t, p.Body, `data-testid="delivery-status">succeeded<`)
	assert.Contains(t, p.Body, `data-testid="redeliver"`)
	res = b.post(t, "/ui/webhooks/"+hookID+"/deliveries/"+ds[0].ID+"/redeliver", url.Values{"csrf": {token}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	p = b.get(t, res.Header.Get("Location"))
	assert.Contains(t, p.Body, `data-testid="redelivered"`)

	// A member: no list, no form, no button; the forged forms are refused and change nothing.
	memberKey, _ := f.issueKey(t, f.api.A.ProjectID, auth.RoleMember)
	member := f.browser(t)
	mtoken := member.signIn(t, memberKey)
	p = member.get(t, "/ui/webhooks")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, p.Body, `data-testid="webhooks-admin-only"`)
	for _, admin := range []string{`data-testid="webhooks"`, `data-testid="webhook-form"`, `data-testid="redeliver"`, hookID} {
		assert.NotContains(t, p.Body, admin)
	}
	for _, p := range []page{
		member.post(t, "/ui/webhooks", url.Values{"csrf": {mtoken}, "url": {target}, "events": {api.EventPromptTagMoved}}),
		member.get(t, "/ui/webhooks/"+hookID),
		member.post(t, "/ui/webhooks/"+hookID+"/deliveries/"+ds[0].ID+"/redeliver", url.Values{"csrf": {mtoken}}),
		member.post(t, "/ui/webhooks/"+hookID+"/delete", url.Values{"csrf": {mtoken}}),
	} {
		assert.Equal(t, http.StatusForbidden, p.Status, p.Body)
		assert.NotContains(t, p.Body, `data-testid="redeliver"`)
	}
	var hooks api.WebhookList
	f.api.MustDo(t, "GET", "/projects/"+f.api.A.ProjectID+"/webhooks", f.api.A.Key, nil).Decode(t, &hooks)
	assert.Len(t, hooks.Webhooks, 1, "the member's forms changed nothing")

	// Tenancy: project B's webhook is a 404 page to A's admin.
	var bHook api.CreatedWebhook
	f.api.MustDo(t, "POST", "/projects/"+f.api.B.ProjectID+"/webhooks", f.api.B.Key, api.CreateWebhookRequest{URL: target, Events: api.EventTypes}).Decode(t, &bHook)
	for _, p := range []page{
		b.get(t, "/ui/webhooks/"+bHook.ID),
		b.get(t, "/ui/webhooks/"+bHook.ID+"/delete"),
		b.post(t, "/ui/webhooks/"+bHook.ID+"/delete", url.Values{"csrf": {token}}),
		b.post(t, "/ui/webhooks/"+bHook.ID+"/deliveries/"+ds[0].ID+"/redeliver", url.Values{"csrf": {token}}),
	} {
		assert.Equal(t, http.StatusNotFound, p.Status, p.Body)
	}

	// Delete, after the confirm step.
	p = b.get(t, "/ui/webhooks/"+hookID+"/delete")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	res = b.post(t, "/ui/webhooks/"+hookID+"/delete", url.Values{"csrf": {token}})
	require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
	assert.Equal(t, http.StatusNotFound, b.get(t, "/ui/webhooks/"+hookID).Status)
}

// TestEventsPage: the event log newest first, by type, page by page with the cursor; a type
// that is none or a bad cursor is a 400.
func TestEventsPage(t *testing.T) {
	f := newAlertsFixture(t)
	memberKey, _ := f.issueKey(t, f.api.A.ProjectID, auth.RoleMember)
	b := f.browser(t)
	b.signIn(t, memberKey)
	for i := range 3 {
		f.api.EnsurePrompt(t, f.api.A, "bot", fmt.Sprint("v", i))
	}
	f.api.MustDo(t, "POST", "/projects/"+f.api.A.ProjectID+"/prompts/bot/tags/production:pin", f.api.A.Key, map[string]any{"version": 1})
	f.api.EnsurePrompt(t, f.api.B, "bot", "b")
	f.api.DrainStream(t)

	p := b.get(t, "/ui/events")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `aria-current="page">Events`)
	assert.Equal(t, 4, strings.Count(p.Body, `data-testid="event-row"`), "A's 3 versions and 1 tag move; not B's")
	assert.Less(t, strings.Index(p.Body, `event-type">`+api.EventPromptTagMoved), strings.Index(p.Body, `event-type">`+api.EventPromptVersionCreated), "newest first")

	p = b.get(t, "/ui/events?type="+api.EventPromptTagMoved)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Equal(t, 1, strings.Count(p.Body, `data-testid="event-row"`))

	for _, bad := range []string{"?type=prompt.deleted", "?cursor=" + strings.Repeat("x", 5000), "?cursor=garbage", "?offset=50"} {
		p := b.get(t, "/ui/events"+bad)
		assert.Equal(t, http.StatusBadRequest, p.Status, "%s: %s", bad, p.Body)
	}
}

// TestAlertsPagesRequests counts the AWS requests of the monitors, webhooks and events pages:
// the same with 3 events and deliveries as with 63, more than a page holds (the event log's
// page and the delivery log's are 50).
func TestAlertsPagesRequests(t *testing.T) {
	f := newAlertsFixture(t)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	var hook api.CreatedWebhook
	f.api.MustDo(t, "POST", "/projects/"+f.api.A.ProjectID+"/webhooks", f.api.A.Key, api.CreateWebhookRequest{URL: receiver(t), Events: []string{api.EventPromptVersionCreated}}).Decode(t, &hook)
	m := f.createMonitor(t, f.api.A, "errors")
	pages := []string{"/ui/monitors", "/ui/monitors/" + m.ID, "/ui/webhooks", "/ui/webhooks/" + hook.ID, "/ui/events"}

	versions := 0
	seed := func(n int) {
		for range n {
			versions++
			f.api.EnsurePrompt(t, f.api.A, "bot", fmt.Sprint("v", versions))
		}
		f.api.DrainStream(t)
		require.Eventually(t, func() bool {
			var out api.WebhookDeliveryList
			f.api.MustDo(t, "GET", "/projects/"+f.api.A.ProjectID+"/webhooks/"+hook.ID+"/deliveries?limit=200", f.api.A.Key, nil).Decode(t, &out)
			done := 0
			for _, d := range out.Deliveries {
				if d.Status == api.DeliverySucceeded {
					done++
				}
			}
			return done == versions
		}, 30e9, 1e7, "every delivery made")
	}
	counts := func() map[string]map[string]int {
		out := map[string]map[string]int{}
		for _, path := range pages {
			f.api.DDB.Reset()
			p := b.get(t, path)
			require.Equal(t, http.StatusOK, p.Status, p.Body)
			out[path] = f.api.DDB.Counts()
		}
		return out
	}
	seed(3)
	few := counts()
	seed(60)
	many := counts()
	for _, path := range pages {
		t.Logf("%s: %v", path, many[path])
	}
	assert.Equal(t, few, many, "the pages read as much with 63 events and deliveries as with 3")
	assert.Equal(t, map[string]int{"GetItem": 2, "Query": 1}, many["/ui/events"], "the session and its key; one page of the log")
	assert.Equal(t, map[string]int{"GetItem": 4, "Query": 1}, many["/ui/webhooks/"+hook.ID],
		"the session and its key; the webhook (GET it, and again by its deliveries route) and a page of deliveries")
	assert.Equal(t, map[string]int{"GetItem": 3}, many["/ui/monitors/"+m.ID], "the session and its key; the monitor, its history inside")
	p := b.get(t, "/ui/events")
	assert.Equal(t, 50, strings.Count(p.Body, `data-testid="event-row"`))
	assert.Contains(t, p.Body, `data-testid="events-next"`)
	next := regexpFind(t, `href="([^"]+)" rel="next"`, p.Body)
	p = b.get(t, strings.ReplaceAll(next, "&amp;", "&"))
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Equal(t, 13, strings.Count(p.Body, `data-testid="event-row"`), "the rest of the 63 versions' events")
	p = b.get(t, "/ui/webhooks/"+hook.ID)
	assert.Equal(t, 50, strings.Count(p.Body, `data-testid="delivery-row"`))
}
