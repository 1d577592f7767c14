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
)

// nameSession names the session id of tenant's project and sets its tags, through POST
// /sessions.
func (f *fixture) nameSession(t *testing.T, tenant apitest.Tenant, id, name string, tags map[string]string) {
	t.Helper()
	f.api.MustDo(t, "POST", "/sessions", tenant.Key,
		[]any{map[string]any{"project_id": tenant.ProjectID, "id": id, "name": name, "tags": tags}})
}

func TestSessionsFilters(t *testing.T) {
	f := newFixture(t)
	now := time.Now().UTC()
	prod, dev, untagged, private := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	// prod chat: one trace of 1 s, $0.10.
	f.seedTraces(t, f.api.A, seeded{name: "turn", start: now.Add(-2 * time.Hour), duration: time.Second, cost: 0.1, session: prod})
	f.nameSession(t, f.api.A, prod, "prod chat", map[string]string{"env": "prod", "user": "alice"})
	mid := time.Now().UTC() // between the creation of prod chat and of the others
	// dev chat: two traces over 5 s, $0.30, one failed; untagged chat: one trace of 6 s, $0.20.
	f.seedTraces(t, f.api.A,
		seeded{name: "turn", start: now.Add(-time.Hour), duration: time.Second, cost: 0.1, failed: true, session: dev},
		seeded{name: "turn", start: now.Add(-time.Hour + 2*time.Second), duration: 3 * time.Second, cost: 0.2, session: dev},
		seeded{name: "turn", start: now.Add(-30 * time.Minute), duration: 6 * time.Second, cost: 0.2, session: untagged},
	)
	f.nameSession(t, f.api.A, dev, "dev chat", map[string]string{"env": "dev", "user": "alice"})
	f.nameSession(t, f.api.A, untagged, "untagged chat", nil)
	f.seedTraces(t, f.api.B, seeded{name: "turn", start: now, duration: time.Second, failed: true, session: private})
	f.nameSession(t, f.api.B, private, "B's chat", map[string]string{"env": "prod", "user": "alice"})
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	midISO := mid.Format(time.RFC3339Nano)

	checkList(t, b, "/ui/sessions", sessionRowNames, []string{private, "B&#39;s chat"}, []listCase{
		{"no filter", nil, []string{"dev chat", "untagged chat", "prod chat"}, true},
		{"name", url.Values{"name": {"dev chat"}}, []string{"dev chat"}, false},
		{"with errors", url.Values{"has_error": {"true"}}, []string{"dev chat"}, false},
		{"without errors", url.Values{"has_error": {"false"}}, []string{"untagged chat", "prod chat"}, true},
		{"any errors", url.Values{"has_error": {""}}, []string{"dev chat", "untagged chat", "prod chat"}, true},
		{"one tag", url.Values{"tag": {"env=prod"}}, []string{"prod chat"}, false},
		{"a tag two sessions share", url.Values{"tag": {"user=alice"}}, []string{"dev chat", "prod chat"}, true},
		{"two tags", url.Values{"tag": {"user=alice", "env=dev"}}, []string{"dev chat"}, false},
		{"a tag no session has", url.Values{"tag": {"user=bob"}}, nil, false},
		{"an empty tag field is no filter", url.Values{"tag": {""}, "name": {"prod chat"}}, []string{"prod chat"}, false},
		{"tag and without errors", url.Values{"tag": {"user=alice"}, "has_error": {"false"}}, []string{"prod chat"}, false},
		{"from", url.Values{"from": {midISO}}, []string{"dev chat", "untagged chat"}, true},
		{"to", url.Values{"to": {midISO}}, []string{"prod chat"}, false},
		{"most traces first", url.Values{"sort": {"traces"}}, []string{"dev chat", "untagged chat", "prod chat"}, false},
		{"most expensive first", url.Values{"sort": {"cost"}}, []string{"dev chat", "untagged chat", "prod chat"}, false},
		{"longest first", url.Values{"sort": {"duration"}}, []string{"untagged chat", "dev chat", "prod chat"}, false},
		{"oldest first, tagged", url.Values{"sort": {"oldest"}, "tag": {"user=alice"}}, []string{"prod chat", "dev chat"}, false},
		{"newest first, tagged", url.Values{"sort": {"newest"}, "tag": {"user=alice"}}, []string{"dev chat", "prod chat"}, false},
		{"name A to Z", url.Values{"sort": {"name"}}, []string{"dev chat", "prod chat", "untagged chat"}, false},
		{"at least 3 s", url.Values{"duration_min": {"3000"}}, []string{"dev chat", "untagged chat"}, true},
		{"at most 5 s", url.Values{"duration_max": {"5000"}}, []string{"dev chat", "prod chat"}, true},
		{"from 2 to 5.5 s", url.Values{"duration_min": {"2000"}, "duration_max": {"5500"}}, []string{"dev chat"}, false},
		{"at least $0.25", url.Values{"cost_min": {"0.25"}}, []string{"dev chat"}, false},
		{"at most $0.2, cheapest last", url.Values{"cost_max": {"0.2"}, "sort": {"cost"}}, []string{"untagged chat", "prod chat"}, false},
		{"a range and a tag", url.Values{"cost_min": {"0.05"}, "tag": {"user=alice"}, "duration_max": {"2000"}}, []string{"prod chat"}, false},
	})

	t.Run("the caption says what is shown", func(t *testing.T) {
		p := b.get(t, "/ui/sessions?sort=cost&has_error=true&tag=user%3Dalice")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, "<caption>Sessions 1–1, most expensive first, with errors, tagged user=alice</caption>")
		assert.Contains(t, p.Body, `data-testid="sessions-errors">1<`, "the totals of the filtered page")
		p = b.get(t, "/ui/sessions")
		assert.Contains(t, p.Body, "<caption>Sessions 1–3, newest first</caption>")
		assert.NotContains(t, p.Body, `<a href="/ui/sessions">Clear</a>`, "nothing to clear")
	})

	t.Run("the filter is kept in the form and the links", func(t *testing.T) {
		p := b.get(t, "/ui/sessions?tag=env%3Dprod&tag=user%3Dalice&sort=cost&has_error=false&from=2026-01-02T03:04&offset=50&cost_min=0.01&duration_max=+900+&name=+prod+chat+")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, `action="/ui/sessions"`)
		assert.Contains(t, p.Body, `name="name" value="prod chat"`)
		assert.Contains(t, p.Body, `name="cost_min" value="0.01"`)
		assert.Contains(t, p.Body, `name="duration_max" value="900"`)
		assert.Contains(t, p.Body, `name="duration_min" value=""`)
		assert.Contains(t, p.Body, `name="tag" value="env=prod"`)
		assert.Contains(t, p.Body, `name="tag" value="user=alice"`)
		assert.Equal(t, 3, strings.Count(p.Body, `name="tag"`), "one empty field to add a tag")
		assert.Contains(t, p.Body, `<option value="cost" selected>Most expensive first</option>`)
		assert.Contains(t, p.Body, `<option value="false" selected>Without errors</option>`)
		assert.Contains(t, p.Body, `name="from" type="datetime-local" step="1" value="2026-01-02T03:04:00"`)
		assert.Contains(t, p.Body, `<a href="/ui/sessions">Clear</a>`)
		assert.Contains(t, p.Body, "No sessions match this filter.")
		first := regexpFind(t, `<a href="([^"]+)" rel="first">`, p.Body)
		assert.Equal(t, "/ui/sessions?cost_min=0.01&amp;duration_max=900&amp;from=2026-01-02T03%3A04&amp;has_error=false&amp;name=prod&#43;chat&amp;sort=cost&amp;tag=env%3Dprod&amp;tag=user%3Dalice", first)

		p = b.get(t, "/ui/sessions?sort=name&tag=user%3Dalice")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		names := sessionRowNames(p.Body)
		require.Len(t, names, 2)
		p = b.get(t, "/ui/sessions?sort=name&tag=user%3Dalice&offset=1")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Equal(t, names[1:], sessionRowNames(p.Body), "a link made before cursors still opens its page")
		assert.Contains(t, p.Body, `<a href="/ui/sessions?sort=name&amp;tag=user%3Dalice" rel="first">First page</a>`)
		assert.NotContains(t, p.Body, `rel="next"`)
	})

	t.Run("bad filters", func(t *testing.T) {
		checkBadFilters(t, b, "/ui/sessions", "session-row", []badFilter{
			{"has_error not a boolean", "has_error=maybe", "Errors must be true or false."},
			{"a sort it does not have", "sort=spans", "Sort must be one of newest, oldest, traces, cost, duration or name."},
			{"a long name", "name=" + strings.Repeat("n", 1025), "The name filter is longer than"},
			{"a tag without a value", "tag=env", "A tag filter is key=value"},
			{"a tag twice", "tag=env%3Da&tag=env%3Db", "filtered on twice"},
			{"too many tags", "tag=a%3D1&tag=b%3D1&tag=c%3D1&tag=d%3D1&tag=e%3D1&tag=f%3D1&tag=g%3D1&tag=h%3D1&tag=i%3D1&tag=j%3D1&tag=k%3D1", "At most 10 tag filters."},
			{"from not a time", "from=yesterday", "From must be a date and time"},
			{"from after to", "from=2026-01-02T00:00&to=2026-01-01T00:00", "From must be before To."},
			{"a duration not a number", "duration_max=long", "Duration at most (ms) must be a number from 0, not &#34;long&#34;."},
			{"a negative cost", "cost_min=-1", "Cost at least (USD) must be a number from 0"},
			{"a range upside down", "cost_min=2&cost_max=1", "Cost at least must not be more than cost at most."},
			{"a negative offset", "offset=-5", "The page offset must be a whole number"},
			{"a cursor it did not give", "cursor=xyz", "cursor: not a cursor of this list (send the cursor an answer gave, unchanged)"},
			{"a cursor and an offset", "cursor=o1&offset=1", "A page starts at a cursor or at an offset, not both."},
			{"a row that is no number", "cursor=o1&row=first", "The page&#39;s row must be a whole number"},
		})
	})
}
