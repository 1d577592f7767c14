package dashboard_test

import (
	"encoding/json"
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

// postSpan posts one span to tenant's project, in a request of its own: spans posted one after
// another are created (received) in that order.
func (f *fixture) postSpan(t *testing.T, tenant apitest.Tenant, s map[string]any) {
	t.Helper()
	f.api.MustDo(t, "POST", "/spans", tenant.Key, []any{s})
}

func TestSpansFilters(t *testing.T) {
	f := newFixture(t)
	now := time.Now().UTC()
	t1, t2 := uuid.NewString(), uuid.NewString()
	planID, askID, searchID, fetchID := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()

	plan := span(planID, t1, "", "plan", now.Add(-time.Hour), time.Second)
	plan["tags"] = map[string]string{"env": "prod"}
	f.postSpan(t, f.api.A, plan)
	mid := time.Now().UTC() // between the creation of plan and of the others
	ask := span(askID, t1, planID, "ask", now.Add(-50*time.Minute), 3*time.Second)
	ask["kind"], ask["cost"] = "llm", 0.3
	ask["attributes"] = map[string]any{"zeroeval": map[string]any{"prompt_slug": "greeter"}}
	ask["tags"] = map[string]string{"integration": "gateway"}
	f.postSpan(t, f.api.A, ask)
	search := span(searchID, t1, planID, "search", now.Add(-40*time.Minute), 500*time.Millisecond)
	search["kind"], search["status"], search["error_code"], search["error_message"] = "tool", "error", "TIMEOUT", "boom"
	search["tags"] = map[string]string{"env": "prod"}
	f.postSpan(t, f.api.A, search)
	fetch := span(fetchID, t2, "", "fetch", now.Add(-30*time.Minute), 2*time.Second)
	fetch["kind"], fetch["cost"] = "http", 0.1
	fetch["tags"] = map[string]string{"integration": "gateway"}
	f.postSpan(t, f.api.A, fetch)
	f.seedTraces(t, f.api.B, seeded{name: "B's span", start: now, duration: time.Second, cost: 0.5,
		tags: map[string]string{"integration": "gateway", "env": "prod"}})

	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	midISO := mid.Format(time.RFC3339Nano)

	checkList(t, b, "/ui/spans", spanRowNames, []string{"B&#39;s span", ">step<"}, []listCase{
		{"no filter, newest first", nil, []string{"fetch", "search", "ask", "plan"}, false},
		{"oldest first", url.Values{"sort": {"oldest"}}, []string{"plan", "ask", "search", "fetch"}, false},
		{"name", url.Values{"name": {"ask"}}, []string{"ask"}, false},
		{"kind llm", url.Values{"kind": {"llm"}}, []string{"ask"}, false},
		{"kind tool", url.Values{"kind": {"tool"}}, []string{"search"}, false},
		{"kind generic", url.Values{"kind": {"generic"}}, []string{"plan"}, false},
		{"a kind no span has", url.Values{"kind": {"tts"}}, nil, false},
		{"with errors", url.Values{"has_error": {"true"}}, []string{"search"}, false},
		{"without errors", url.Values{"has_error": {"false"}}, []string{"fetch", "ask", "plan"}, false},
		{"the gateway's calls", url.Values{"tag": {"integration=gateway"}}, []string{"fetch", "ask"}, false},
		{"a tag and errors", url.Values{"tag": {"env=prod"}, "has_error": {"true"}}, []string{"search"}, false},
		{"a tag and a kind", url.Values{"tag": {"integration=gateway"}, "kind": {"llm"}}, []string{"ask"}, false},
		{"a tag no span has", url.Values{"tag": {"user=bob"}}, nil, false},
		{"from", url.Values{"from": {midISO}}, []string{"fetch", "search", "ask"}, false},
		{"to", url.Values{"to": {midISO}}, []string{"plan"}, false},
		{"longest first", url.Values{"sort": {"duration"}}, []string{"ask", "fetch", "plan", "search"}, false},
		{"most expensive first, costed", url.Values{"sort": {"cost"}, "cost_min": {"0"}}, []string{"ask", "fetch"}, false},
		{"name A to Z", url.Values{"sort": {"name"}}, []string{"ask", "fetch", "plan", "search"}, false},
		{"kind A to Z", url.Values{"sort": {"kind"}}, []string{"plan", "fetch", "ask", "search"}, false},
		{"from 1 to 2.5 s", url.Values{"duration_min": {"1000"}, "duration_max": {"2500"}}, []string{"fetch", "plan"}, false},
		{"at most $0.2", url.Values{"cost_max": {"0.2"}}, []string{"fetch"}, false},
	})

	t.Run("the rows", func(t *testing.T) {
		p := b.get(t, "/ui/spans")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, `<a href="/ui/spans" aria-current="page">Spans</a>`)
		assert.Contains(t, p.Body, "<h1>Spans</h1>")
		assert.Contains(t, p.Body, `<a href="/ui/traces/`+t1+`/spans/`+askID+`">ask</a>`)
		assert.Contains(t, p.Body, `href="/ui/prompts/greeter" data-testid="span-prompt"`, "an llm span's prompt")
		assert.Contains(t, p.Body, `<a href="/ui/traces/`+t2+`" data-testid="span-trace">`)
		row := regexpFind(t, `(?s)(<tr data-testid="span-row" class="err">.*?</tr>)`, p.Body)
		assert.Contains(t, row, ">search<", "the failed span is highlighted")
		assert.Contains(t, row, `<span class="status s-error">error</span> <span class="help">TIMEOUT</span>`)
		assert.Equal(t, 1, strings.Count(p.Body, `class="err"`))
		assert.Contains(t, p.Body, "$0.300000")
		assert.Contains(t, p.Body, "3.00 s")
		assert.Contains(t, p.Body, "Spans 1–4, newest first</caption>")
	})

	t.Run("the filter is kept in the form, the caption and the links", func(t *testing.T) {
		p := b.get(t, "/ui/spans?kind=llm&has_error=false&tag=integration%3Dgateway&sort=cost&name=+ask+&offset=50&duration_max=9000")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, `name="name" value="ask"`)
		assert.Contains(t, p.Body, `<option value="llm" selected>llm</option>`)
		assert.Contains(t, p.Body, `<option value="false" selected>Without errors</option>`)
		assert.Contains(t, p.Body, `<option value="cost" selected>Most expensive first</option>`)
		assert.Contains(t, p.Body, `name="tag" value="integration=gateway"`)
		assert.Contains(t, p.Body, `name="duration_max" value="9000"`)
		first := regexpFind(t, `<a href="([^"]+)" rel="first">`, p.Body)
		assert.Equal(t, "/ui/spans?duration_max=9000&amp;has_error=false&amp;kind=llm&amp;name=ask&amp;sort=cost&amp;tag=integration%3Dgateway", first)

		p = b.get(t, "/ui/spans?kind=llm&has_error=false&tag=integration%3Dgateway&sort=cost")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, "Spans 1–1, most expensive first, of kind llm, without errors, tagged integration=gateway</caption>")
	})

	t.Run("pages of 50", func(t *testing.T) {
		traceID, _ := f.seedTrace(t, f.api.A.Key, "many", 60, nil)
		p := b.get(t, "/ui/spans?tag=&name=step+7")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Equal(t, []string{"step 7"}, spanRowNames(p.Body))
		assert.Contains(t, p.Body, `<a href="/ui/traces/`+traceID+`" data-testid="span-trace">`)

		p = b.get(t, "/ui/spans?sort=oldest")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		first := spanRowIDs(p.Body)
		assert.Len(t, first, 50)
		assert.Contains(t, p.Body, "Spans 1–50, oldest first</caption>")
		next := html.UnescapeString(regexpFind(t, `<a href="([^"]+)" rel="next">`, p.Body))
		u, err := url.Parse(next)
		require.NoError(t, err)
		assert.Equal(t, "/ui/spans", u.Path)
		assert.NotEmpty(t, u.Query().Get("cursor"), "the next page is read from a cursor")
		assert.False(t, u.Query().Has("offset"))
		assert.Equal(t, url.Values{"sort": {"oldest"}, "row": {"51"}, "cursor": {u.Query().Get("cursor")}}, u.Query())
		assert.NotContains(t, p.Body, `rel="first"`)
		p = b.get(t, next)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		rest := spanRowIDs(p.Body)
		assert.Len(t, rest, 4+61-50, "the rest")
		assert.Contains(t, p.Body, "Spans 51–65, oldest first</caption>")
		assert.NotContains(t, p.Body, `rel="next"`)
		assert.Equal(t, "/ui/spans?sort=oldest", html.UnescapeString(regexpFind(t, `<a href="([^"]+)" rel="first">`, p.Body)))
		var whole []struct{ ID string }
		require.NoError(t, json.Unmarshal(f.api.MustDo(t, "GET", "/spans?sort_order=asc&limit=100", f.api.A.Key, nil).Body, &whole))
		var want []string
		for _, s := range whole {
			want = append(want, s.ID)
		}
		assert.Equal(t, want, append(first, rest...), "each span once, in order")
	})

	t.Run("bad filters", func(t *testing.T) {
		checkBadFilters(t, b, "/ui/spans", "span-row", []badFilter{
			{"a kind it does not know", "kind=agent", "Kind must be one of llm, generic, tool, http, database, vector_store or tts."},
			{"errors neither true nor false", "has_error=yes", "Errors must be true or false."},
			{"a tag without a value", "tag=integration", "A tag filter is key=value"},
			{"a sort it does not have", "sort=spans", "Sort must be one of newest, oldest, duration, cost, name or kind."},
			{"from not a time", "from=yesterday", "From must be a date and time"},
			{"a range upside down", "cost_min=2&cost_max=1", "Cost at least must not be more than cost at most."},
			{"a long name", "name=" + strings.Repeat("n", 1025), "The name filter is longer than"},
			{"a negative offset", "offset=-1", "The page offset must be a whole number"},
		})
	})

	t.Run("another project sees its own spans only", func(t *testing.T) {
		other := f.browser(t)
		other.signIn(t, f.api.B.Key)
		p := other.get(t, "/ui/spans?tag=integration%3Dgateway")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.ElementsMatch(t, []string{"B's span", "step"}, spanRowNames(p.Body))
		for _, name := range []string{">ask<", ">fetch<", askID, fetchID} {
			assert.NotContains(t, p.Body, name)
		}
	})
}

// TestSpansPageEmptyAndEscaped: an empty project's page says how to send spans; a span name
// carrying markup is shown as text.
func TestSpansPageEmptyAndEscaped(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	p := b.get(t, "/ui/spans")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `No spans. Send spans from an SDK: the <a href="/ui/">overview</a> shows how.`)
	assert.NotContains(t, p.Body, "Clear the filter")

	f.postSpan(t, f.api.A, span(uuid.NewString(), uuid.NewString(), "", `<script>alert(1)</script>`, time.Now().Add(-time.Minute), time.Second))
	p = b.get(t, "/ui/spans")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.NotContains(t, p.Body, "<script>alert")
}

// TestSpansPageRequests counts the AWS requests of a spans page (our users' bill), sorted or
// filtered or not: the session and its key, one Query of the list index's partitions of the
// window, the day's run of index entries (an S3 object, as its 150 entries are too many to keep
// in the table), and the page's 50 summaries in one BatchGetItem; no span body. (A process's
// first page also checks once that the index holds the project's older records.)
func TestSpansPageRequests(t *testing.T) {
	f := newFixture(t)
	f.seedTrace(t, f.api.A.Key, "many", 149, nil)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	require.Equal(t, http.StatusOK, b.get(t, "/ui/spans").Status)

	want := map[string]int{"GetItem": 2, "Query": 1, "BatchGetItem": 1}
	for _, query := range []string{"", "?sort=duration&kind=generic&tag=", "?has_error=false&sort=name"} {
		f.api.DDB.Reset()
		f.api.S3.Reset()
		p := b.get(t, "/ui/spans"+query)
		require.Equal(t, http.StatusOK, p.Status)
		require.Len(t, spanRowNames(p.Body), 50)
		t.Logf("spans page %q: DynamoDB %v, S3 GET %v", query, f.api.DDB.Counts(), f.api.S3.Keys("GetObject"))
		assert.Equal(t, want, f.api.DDB.Counts(), query)
		if gets := f.api.S3.Keys("GetObject"); assert.Len(t, gets, 1, query) {
			assert.True(t, strings.HasPrefix(gets[0], "index/"), "the index's run, no span body: %s", gets[0])
		}
	}
}

// spanRowIDs reads the ids of the spans page's rows, in order, from their links.
func spanRowIDs(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?s)data-testid="span-row".*?<a href="/ui/traces/[^"/]+/spans/([^"]+)">`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}
