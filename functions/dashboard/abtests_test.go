package dashboard_test

import (
	"fmt"
	"html"
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
)

// seedABTest records a test of ze.choose in tenant's project: control and treat, four
// entities each, each with a "score" signal (control 1 to 4, treat 3 to 6) and a "converted"
// boolean; it returns the entities' ids, control's first.
func (f *fixture) seedABTest(t *testing.T, tenant apitest.Tenant, name string) []string {
	t.Helper()
	var ids []string
	var sigs []any
	for i := range 8 {
		id := uuid.NewString()
		ids = append(ids, id)
		variant := "control"
		if i >= 4 {
			variant = "treat"
		}
		f.api.MustDo(t, "POST", "/ab-choices", tenant.Key, map[string]any{"entity_type": "span", "entity_id": id, "choice_name": name,
			"variant_key": variant, "variant_value": "model-" + variant, "variants": map[string]any{"control": "model-control", "treat": "model-treat"},
			"weights": map[string]any{"control": 0.5, "treat": 0.5}, "duration_days": 14})
		score := i%4 + 1
		if variant == "treat" {
			score += 2
		}
		sigs = append(sigs, map[string]any{"entity_type": "span", "entity_id": id, "name": "score", "value": score},
			map[string]any{"entity_type": "span", "entity_id": id, "name": "converted", "value": i%2 == 0})
	}
	f.api.MustDo(t, "POST", "/signals/bulk", tenant.Key, map[string]any{"signals": sigs})
	return ids
}

// TestABTestPages: the A/B tests list shows the project's tests (a ze.choose test and a prompt
// split, with their variants, shares, prompt and tag), not another project's; the report shows
// each variant's choices, each signal's mean and 95% interval as the API computes them, the
// comparisons by Welch's t-test, "not yet" before the horizon; another project's test is 404,
// a name no test can have 400.
func TestABTestPages(t *testing.T) {
	f := newFixture(t)
	a, b := f.api.A, f.api.B
	f.seedABTest(t, a, "model-test")
	f.seedABTest(t, b, "b-private-test")
	f.api.EnsurePrompt(t, a, "bot", "You are a bot.")
	f.api.EnsurePrompt(t, a, "bot", "You are a kind bot.")
	f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/prompts/bot/tags/production:pin", a.Key, map[string]any{"version": 1})
	f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/prompts/bot/tags/production:split", a.Key,
		map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 0.8}, map[string]any{"version": 2, "weight": 0.2}}, "duration_days": 7, "name": "bot-v2"})
	br := f.browser(t)
	br.signIn(t, a.Key)

	p := br.get(t, "/ui/ab-tests")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	body := html.UnescapeString(p.Body)
	assert.Contains(t, body, `<a href="/ui/ab-tests" aria-current="page">A/B tests</a>`)
	assert.Equal(t, 2, strings.Count(body, `data-testid="ab-test-row"`))
	assert.Contains(t, body, `<a href="/ui/ab-tests/model-test" data-testid="ab-test-name">model-test</a>`)
	assert.Contains(t, body, "control = model-control (50%), control<br>treat = model-treat (50%)")
	assert.Contains(t, body, `<a href="/ui/prompts/bot">bot</a> <span class="help">tag</span> <code>production</code>`)
	assert.Contains(t, body, "v1 = ")
	assert.Contains(t, body, "(80%), control<br>v2 = ")
	assert.NotContains(t, body, "b-private-test", "another project's test")

	p = br.get(t, "/ui/ab-tests/model-test")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	body = html.UnescapeString(p.Body)
	assert.Contains(t, body, "<h1>A/B test model-test</h1>")
	assert.Contains(t, body, "Welch's t-test of each variant against the control, alpha 0.025")
	assert.Contains(t, body, "Not decided until ")
	assert.Equal(t, 2, strings.Count(body, `data-testid="ab-variant-row"`))
	assert.Equal(t, 2, strings.Count(body, `<td class="num" data-testid="ab-choices">4</td>`))
	// score: control 1..4 (mean 2.5, s 1.290994, t(0.975; 3) 3.182446), treat 3..6 (mean 4.5).
	assert.Contains(t, body, `<td class="num" data-testid="ab-mean">2.5</td><td class="num" data-testid="ab-interval">[0.4457, 4.554]</td>`)
	assert.Contains(t, body, `<td class="num" data-testid="ab-mean">4.5</td><td class="num" data-testid="ab-interval">[2.446, 6.554]</td>`)
	assert.Equal(t, 2, strings.Count(body, `data-testid="ab-comparison-row"`))
	assert.Equal(t, 2, strings.Count(body, `<td data-testid="ab-significant">not yet</td>`))
	assert.NotContains(t, body, "ab-test-prompt", "no prompt for a test of ze.choose")

	p = br.get(t, "/ui/ab-tests/bot-v2")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, html.UnescapeString(p.Body), `<dd data-testid="ab-test-prompt"><a href="/ui/prompts/bot">bot</a>, tag <code>production</code></dd>`)
	assert.Contains(t, p.Body, `data-testid="no-ab-signals"`)

	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/ui/ab-tests/b-private-test", http.StatusNotFound},
		{"/ui/ab-tests/no-such-test", http.StatusNotFound},
		{"/ui/ab-tests/" + strings.Repeat("n", 129), http.StatusBadRequest},
		{"/ui/ab-tests/a%01b", http.StatusBadRequest},
		{"/ui/ab-tests/a%FFb", http.StatusBadRequest},
	} {
		p := br.get(t, tt.path)
		assert.Equal(t, tt.status, p.Status, "%s: %.300s", tt.path, p.Body)
		assert.NotContains(t, p.Body, "model-b", tt.path)
	}

	t.Run("empty", func(t *testing.T) {
		other := f.browser(t)
		project := uuid.NewString()
		require.NoError(t, f.api.Auth.CreateProject(t.Context(), auth.Project{ID: project, CreatedAt: time.Now()}))
		key, _ := f.issueKey(t, project, auth.RoleMember)
		other.signIn(t, key)
		p := other.get(t, "/ui/ab-tests")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, `data-testid="no-ab-tests"`)
	})
}

// TestSignalsOnEntityPages: the span, trace and session pages show the signals recorded on
// that entity, by name, and a note when there are none.
func TestSignalsOnEntityPages(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	session := uuid.NewString()
	traceID, ids := f.seedTrace(t, a.Key, "checkout", 2, func(_ int, s map[string]any) { s["session_id"] = session })
	sig := func(entityType, id, name string, v any) map[string]any {
		return map[string]any{"entity_type": entityType, "entity_id": id, "name": name, "value": v}
	}
	f.api.MustDo(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": []any{
		sig("span", ids[1], "revenue", 12.5), sig("span", ids[1], "converted", true),
		sig("trace", traceID, "trace_ok", false), sig("session", session, "turns", 7),
	}})
	br := f.browser(t)
	br.signIn(t, a.Key)
	row := func(name, value, typ string) string {
		return fmt.Sprintf(`<tr data-testid="signal-row"><td><code>%s</code></td><td class="num" data-testid="signal-value">%s</td><td>%s</td>`, name, value, typ)
	}

	p := br.get(t, "/ui/traces/"+url.PathEscape(traceID)+"/spans/"+ids[1])
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, row("converted", "true", "boolean"))
	assert.Contains(t, p.Body, row("revenue", "12.5", "numerical"))
	assert.Less(t, strings.Index(p.Body, row("converted", "true", "boolean")), strings.Index(p.Body, row("revenue", "12.5", "numerical")), "by name")

	p = br.get(t, "/ui/traces/"+traceID+"/spans/"+ids[0])
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, p.Body, `data-testid="no-signals"`)
	assert.NotContains(t, p.Body, "revenue")

	p = br.get(t, "/ui/traces/"+traceID)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, row("trace_ok", "false", "boolean"))
	assert.NotContains(t, p.Body, "revenue")

	p = br.get(t, "/ui/sessions/"+session)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, row("turns", "7", "numerical"))

	for _, path := range []string{"/ui/traces/" + traceID + "/spans/not-a-span", "/ui/sessions/" + uuid.NewString()} {
		p := br.get(t, path)
		assert.Equal(t, http.StatusNotFound, p.Status, "%s: %.300s", path, p.Body)
	}
}
