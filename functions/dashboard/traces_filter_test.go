package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTracesFilters(t *testing.T) {
	f := newFixture(t)
	now := time.Now().UTC()
	f.seedTraces(t, f.api.A, seeded{name: "prod", start: now.Add(-2 * time.Hour), duration: time.Second, cost: 0.1,
		tags: map[string]string{"env": "prod", "user": "alice"}})
	mid := time.Now().UTC() // between the creation of prod and of the others
	f.seedTraces(t, f.api.A,
		seeded{name: "dev", start: now.Add(-time.Hour), duration: 5 * time.Second, cost: 0.3, failed: true,
			tags: map[string]string{"env": "dev", "user": "alice"}, steps: 3},
		seeded{name: "untagged", start: now.Add(-30 * time.Minute), duration: 3 * time.Second, cost: 0.2, steps: 1},
	)
	f.seedTraces(t, f.api.B, seeded{name: "B's prod", start: now, duration: time.Second, tags: map[string]string{"env": "prod"}})
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	midISO := mid.Format(time.RFC3339Nano)

	checkList(t, b, "/ui/traces", rowNames, []string{"B&#39;s prod"}, []listCase{
		{"no filter", nil, []string{"dev", "untagged", "prod"}, true},
		{"one tag", url.Values{"tag": {"env=prod"}}, []string{"prod"}, false},
		{"a tag two traces share", url.Values{"tag": {"user=alice"}}, []string{"dev", "prod"}, true},
		{"two tags", url.Values{"tag": {"user=alice", "env=dev"}}, []string{"dev"}, false},
		{"a tag no trace has", url.Values{"tag": {"user=bob"}}, nil, false},
		{"an empty tag field is no filter", url.Values{"tag": {""}, "name": {"prod"}}, []string{"prod"}, false},
		{"tag and name", url.Values{"tag": {"user=alice"}, "name": {"dev"}}, []string{"dev"}, false},
		{"tag and status", url.Values{"tag": {"user=alice"}, "status": {"error"}}, []string{"dev"}, false},
		{"from", url.Values{"from": {midISO}}, []string{"dev", "untagged"}, true},
		{"to", url.Values{"to": {midISO}}, []string{"prod"}, false},
		{"from and to", url.Values{"from": {now.Add(-time.Hour).Format("2006-01-02T15:04")}, "to": {midISO}}, []string{"prod"}, false},
		{"longest first", url.Values{"sort": {"duration"}}, []string{"dev", "untagged", "prod"}, false},
		{"most expensive first", url.Values{"sort": {"cost"}}, []string{"dev", "untagged", "prod"}, false},
		{"oldest first, tagged", url.Values{"sort": {"oldest"}, "tag": {"user=alice"}}, []string{"prod", "dev"}, false},
		{"most spans first", url.Values{"sort": {"spans"}}, []string{"dev", "untagged", "prod"}, false},
		{"name A to Z", url.Values{"sort": {"name"}}, []string{"dev", "prod", "untagged"}, false},
		{"at least 3 s", url.Values{"duration_min": {"3000"}}, []string{"dev", "untagged"}, true},
		{"at most 3 s", url.Values{"duration_max": {"3000"}}, []string{"untagged", "prod"}, true},
		{"from 2 to 4 s", url.Values{"duration_min": {"2000"}, "duration_max": {"4000"}}, []string{"untagged"}, false},
		{"at least $0.25", url.Values{"cost_min": {"0.25"}}, []string{"dev"}, false},
		{"at most $0.2, cheapest last", url.Values{"cost_max": {"0.2"}, "sort": {"cost"}}, []string{"untagged", "prod"}, false},
		{"a range and a tag", url.Values{"cost_min": {"0.05"}, "tag": {"user=alice"}, "duration_max": {"2000"}}, []string{"prod"}, false},
	})

	t.Run("the filter is kept in the form and the links", func(t *testing.T) {
		p := b.get(t, "/ui/traces?tag=env%3Dprod&tag=user%3Dalice&sort=cost&from=2026-01-02T03:04&offset=50&cost_min=0.01&duration_max=+900+")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, `name="cost_min" value="0.01"`)
		assert.Contains(t, p.Body, `name="duration_max" value="900"`)
		assert.Contains(t, p.Body, `name="duration_min" value=""`)
		assert.Contains(t, p.Body, `name="tag" value="env=prod"`)
		assert.Contains(t, p.Body, `name="tag" value="user=alice"`)
		assert.Equal(t, 3, strings.Count(p.Body, `name="tag"`), "one empty field to add a tag")
		assert.Contains(t, p.Body, `<option value="cost" selected>`)
		assert.Contains(t, p.Body, `name="from" type="datetime-local" step="1" value="2026-01-02T03:04:00"`)
		first := regexpFind(t, `<a href="([^"]+)" rel="first">`, p.Body)
		assert.Equal(t, "/ui/traces?cost_min=0.01&amp;duration_max=900&amp;from=2026-01-02T03%3A04&amp;sort=cost&amp;tag=env%3Dprod&amp;tag=user%3Dalice", first)
	})

	t.Run("bad filters", func(t *testing.T) {
		checkBadFilters(t, b, "/ui/traces", "trace-row", []badFilter{
			{"a tag without a value", "tag=env", "A tag filter is key=value"},
			{"a tag without a key", "tag=%3Dprod", "A tag filter is key=value"},
			{"a tag twice", "tag=env%3Da&tag=env%3Db", "filtered on twice"},
			{"too many tags", "tag=a%3D1&tag=b%3D1&tag=c%3D1&tag=d%3D1&tag=e%3D1&tag=f%3D1&tag=g%3D1&tag=h%3D1&tag=i%3D1&tag=j%3D1&tag=k%3D1", "At most 10 tag filters."},
			{"a long tag key", "tag=" + strings.Repeat("k", 129) + "%3Dv", "at most 128 bytes"},
			{"from not a time", "from=yesterday", "From must be a date and time"},
			{"to not a time", "to=2026-13-01T00:00", "To must be a date and time"},
			{"from after to", "from=2026-01-02T00:00&to=2026-01-01T00:00", "From must be before To."},
			{"a sort it does not have", "sort=status", "Sort must be one of newest, oldest, duration, cost, spans or name."},
			{"a duration not a number", "duration_min=slow", "Duration at least (ms) must be a number from 0, not &#34;slow&#34;."},
			{"a negative cost", "cost_max=-1", "Cost at most (USD) must be a number from 0"},
			{"a cost that is not finite", "cost_min=NaN", "Cost at least (USD) must be a number from 0"},
			{"a range upside down", "duration_min=500&duration_max=100", "Duration at least must not be more than duration at most."},
			{"a status it does not have", "status=failed", "Status must be one of ok, error or unset."},
			{"a negative offset", "offset=-5", "The page offset must be a whole number"},
		})
	})
}
