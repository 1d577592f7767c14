package dashboard_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// seeded is a trace to seed with seedTraces: a root span and one child, the child carrying the
// cost, the error, the prompt linkage, the session and the tags.
type seeded struct {
	name     string
	start    time.Time
	duration time.Duration
	cost     float64
	failed   bool
	prompt   string // the child is an llm span of this prompt
	session  string // session id
	tags     map[string]string
	steps    int // more child spans, beside the one every trace has
}

// seedTraces posts the traces to tenant's project and returns their ids and their child spans'
// ids, in order.
func (f *fixture) seedTraces(t *testing.T, tenant apitest.Tenant, traces ...seeded) (traceIDs, childIDs []string) {
	t.Helper()
	var spans []any
	for _, s := range traces {
		traceID, rootID, childID := uuid.NewString(), uuid.NewString(), uuid.NewString()
		traceIDs, childIDs = append(traceIDs, traceID), append(childIDs, childID)
		root := span(rootID, traceID, "", s.name, s.start, s.duration)
		child := span(childID, traceID, rootID, "step", s.start, s.duration/2)
		if s.cost > 0 {
			child["cost"] = s.cost
		}
		if s.failed {
			child["status"] = "error"
			child["error_message"] = "boom"
		}
		if s.prompt != "" {
			child["kind"] = "llm"
			child["attributes"] = map[string]any{"zeroeval": map[string]any{"prompt_slug": s.prompt}}
		}
		if s.session != "" {
			root["session_id"], child["session_id"] = s.session, s.session
		}
		if s.tags != nil {
			root["tags"], child["tags"] = s.tags, s.tags
			root["trace_tags"] = s.tags
		}
		spans = append(spans, root, child)
		for range s.steps {
			spans = append(spans, span(uuid.NewString(), traceID, rootID, "more", s.start, s.duration/4))
		}
	}
	f.api.MustDo(t, "POST", "/spans", tenant.Key, spans)
	return traceIDs, childIDs
}

// createJudge creates a judge in tenant's project and records verdicts of it on spans
// (true: pass).
func (f *fixture) createJudge(t *testing.T, tenant apitest.Tenant, name string, verdicts map[string]bool) string {
	t.Helper()
	res := f.api.Do(t, "POST", "/projects/"+tenant.ProjectID+"/judges", tenant.Key,
		map[string]any{"name": name, "template": "Is it right?\n{{input}}\n{{output}}"})
	require.Less(t, res.Status, 300, string(res.Body))
	id := res.Map(t)["id"].(string)
	var evs []any
	for spanID, pass := range verdicts {
		evs = append(evs, map[string]any{"span_id": spanID, "evaluation_result": pass, "evaluation_reason": "seeded"})
	}
	if len(evs) > 0 {
		res = f.api.Do(t, "POST", "/projects/"+tenant.ProjectID+"/judges/"+id+"/evaluations", tenant.Key, evs)
		require.Less(t, res.Status, 300, string(res.Body))
	}
	return id
}

// between is the text of s from the element carrying data-testid="id" to the end of the
// element named end.
func between(t *testing.T, s, id, end string) string {
	t.Helper()
	return regexpFind(t, `(?s)(data-testid="`+regexp.QuoteMeta(id)+`".*?</`+end+`>)`, s)
}

func TestOverview(t *testing.T) {
	f := newStreamFixture(t)
	now := time.Now().UTC()
	hourAgo, threeHoursAgo := now.Add(-time.Hour), now.Add(-3*time.Hour)
	_, children := f.seedTraces(t, f.api.A,
		seeded{name: "alpha", start: threeHoursAgo, duration: time.Second, cost: 0.5, prompt: "greeter"},
		seeded{name: "beta", start: hourAgo, duration: 2 * time.Second, cost: 0.25, failed: true, prompt: "greeter"},
		seeded{name: "gamma", start: hourAgo, duration: 10 * time.Second, prompt: "summarizer"},
	)
	f.api.EnsurePrompt(t, f.api.A, "greeter", "Greet {{name}}.")
	f.api.EnsurePrompt(t, f.api.A, "summarizer", "Summarize.")
	f.api.EnsurePrompt(t, f.api.A, "quiet", "Never used.")
	other := f.api.KeyFor(t, f.api.A, "second-user")
	for _, fb := range []struct {
		key, slug, span string
		up              bool
	}{
		{f.api.A.Key, "greeter", children[0], false},
		{f.api.A.Key, "greeter", children[1], true},
		{other, "greeter", children[1], false},
		{f.api.A.Key, "summarizer", children[2], false},
	} {
		f.api.MustDo(t, "POST", "/v1/prompts/"+fb.slug+"/completions/"+fb.span+"/feedback", fb.key, map[string]any{"thumbs_up": fb.up})
	}
	strict := f.createJudge(t, f.api.A, "strict <b>judge</b>", map[string]bool{children[0]: false, children[1]: false, children[2]: true})
	f.createJudge(t, f.api.A, "lenient", map[string]bool{children[0]: true})
	f.createJudge(t, f.api.A, "idle", nil)
	f.api.DrainStream(t)

	b := f.browser(t)
	b.signIn(t, f.api.A.Key)

	t.Run("last 24 hours", func(t *testing.T) {
		p := b.get(t, "/ui/")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		figures := map[string]string{
			"trace-count": "3", "span-count": "6", "error-count": "1", "error-rate": "33.3%", "cost": "$0.750000",
		}
		for id, want := range figures {
			assert.Contains(t, p.Body, `data-testid="`+id+`">`+want+`<`, id)
		}
		// The metrics' percentiles are within api.MetricsRelativeError of the durations.
		assertSeconds(t, 2, regexpFind(t, `data-testid="p50">([0-9.]+ s)<`, p.Body))
		assertSeconds(t, 10, regexpFind(t, `data-testid="p95">([0-9.]+ s)<`, p.Body))
		assert.Contains(t, p.Body, `data-testid="range-24h" aria-current="page"`)

		// One bar per hour in each bar chart, one point per hour with traces in each latency line.
		for _, id := range []string{"chart-traces", "chart-spans", "chart-cost", "chart-errors"} {
			chart := between(t, p.Body, id, "figure")
			assert.Equal(t, 24, strings.Count(chart, `data-testid="bar"`), id)
			assert.Contains(t, chart, `role="img"`)
			assert.Contains(t, chart, "<desc id=")
		}
		latency := between(t, p.Body, "chart-latency", "figure")
		assert.Equal(t, 4, strings.Count(latency, `data-testid="point"`), "p50 and p95 in two hours")
		assert.Zero(t, strings.Count(latency, "<polyline"), "no line across the empty hours between")

		// The charts' tables: the hour of beta and gamma, and the hour of alpha.
		label := func(at time.Time) string { return at.Truncate(time.Hour).Format("Jan 2 15:04") }
		row := func(at, value string) string {
			return `<th scope="row">` + at + `</th><td class="num">` + value + `</td>`
		}
		traces := between(t, p.Body, "chart-traces", "figure")
		assert.Contains(t, traces, row(label(hourAgo), "2"))
		assert.Contains(t, traces, row(label(threeHoursAgo), "1"))
		assert.Contains(t, between(t, p.Body, "chart-spans", "figure"), row(label(hourAgo), "4"))
		assert.Contains(t, between(t, p.Body, "chart-cost", "figure"), row(label(threeHoursAgo), "$0.5"))
		assert.Contains(t, between(t, p.Body, "chart-errors", "figure"), row(label(hourAgo), "50%"))
		hour := regexp.MustCompile(`<th scope="row">` + label(hourAgo) + `</th><td class="num">([0-9.]+ s)</td><td class="num">([0-9.]+ s)</td>`).FindStringSubmatch(latency)
		require.NotNil(t, hour, "the latency of the hour of beta and gamma")
		assertSeconds(t, 2, hour[1])
		assertSeconds(t, 10, hour[2])
		assert.Contains(t, traces, "Highest: 2 at "+label(hourAgo))

		prompts := between(t, p.Body, "top-prompts", "table")
		assert.Regexp(t, `(?s)greeter</a></td><td class="num">2</td><td class="num">1</td>.*summarizer</a></td><td class="num">1</td><td class="num">0</td>`, prompts)

		disliked := between(t, p.Body, "disliked-prompts", "table")
		assert.Regexp(t, `(?s)greeter</a></td><td class="num">2</td><td class="num">3</td><td class="num">67%</td>.*summarizer</a></td><td class="num">1</td><td class="num">1</td><td class="num">100%</td>`, disliked)
		assert.NotContains(t, disliked, "quiet", "a prompt without thumbs down")

		judges := between(t, p.Body, "failing-judges", "table")
		assert.Regexp(t, `(?s)/ui/judges/`+strict+`">strict &lt;b&gt;judge&lt;/b&gt;</a></td><td class="num">2</td><td class="num">3</td><td class="num">33%</td>.*lenient</a></td><td class="num">0</td><td class="num">1</td><td class="num">100%</td>`, judges)
		assert.NotContains(t, judges, "idle", "a judge without evaluations in the range")
		assert.NotContains(t, p.Body, `data-testid="empty-project"`)
	})

	t.Run("last 7 days", func(t *testing.T) {
		p := b.get(t, "/ui/?range=7d")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Equal(t, 7, strings.Count(between(t, p.Body, "chart-traces", "figure"), `data-testid="bar"`))
		assert.Contains(t, between(t, p.Body, "chart-traces", "figure"),
			`<th scope="row">`+hourAgo.Truncate(24*time.Hour).Format("Jan 2")+`</th>`)
		assert.Contains(t, p.Body, `data-testid="trace-count">3<`)
		assert.Contains(t, p.Body, `data-testid="range-7d" aria-current="page"`)
	})

	t.Run("a range it does not have", func(t *testing.T) {
		p := b.get(t, "/ui/?range=1y")
		assert.Equal(t, http.StatusBadRequest, p.Status)
		assertPage(t, p)
		assert.Contains(t, p.Body, "The range must be one of 24h, 7d or 30d.")
	})

	t.Run("a project without spans", func(t *testing.T) {
		other := f.browser(t)
		other.signIn(t, f.api.B.Key)
		p := other.get(t, "/ui/")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		empty := between(t, p.Body, "empty-project", "section")
		assert.Contains(t, empty, "ZEROEVAL_API_URL="+f.srv.URL)
		assert.Contains(t, empty, "OTEL_EXPORTER_OTLP_ENDPOINT="+f.srv.URL)
		assert.NotContains(t, p.Body, "greeter", "nothing of another project")
		assert.NotContains(t, p.Body, "strict")
		assert.NotContains(t, p.Body, `data-testid="chart-traces"`)
	})
}

// TestOverviewRequests: the overview costs the same DynamoDB requests whatever the project's
// size (it read up to trace.MaxAggregateScan traces and span summaries and a feedback query per
// prompt before): the session and its key, then GET metrics of the range, GET /traces of the
// newest ten from the list index (its day's manifest and runs, then the ten traces) and GET
// judges, 7 requests in all. A Lambda instance's first list of a project also checks once that
// the index holds the whole window (trace.Queries' coverage): that page is not counted.
func TestOverviewRequests(t *testing.T) {
	f := newStreamFixture(t)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	now, seededSoFar := time.Now().UTC(), 0
	var counts []map[string]int
	for _, n := range []int{5, 50} {
		var traces []seeded
		for i := seededSoFar; i < n; i++ {
			traces = append(traces, seeded{name: fmt.Sprint("t", i), start: now.Add(-time.Duration(i%20) * time.Hour),
				duration: time.Second, cost: 0.01, failed: i%3 == 0, prompt: fmt.Sprint("prompt-", i%7)})
		}
		_, children := f.seedTraces(t, f.api.A, traces...)
		f.createJudge(t, f.api.A, fmt.Sprint("judge ", n), map[string]bool{children[0]: false, children[1]: true})
		seededSoFar = n
		f.api.DrainStream(t)
		require.Equal(t, http.StatusOK, b.get(t, "/ui/").Status)
		f.api.DDB.Reset()
		p := b.get(t, "/ui/")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, fmt.Sprintf(`data-testid="trace-count">%d<`, n))
		assert.Equal(t, min(n, 10), strings.Count(p.Body, `<li><a href="/ui/traces/`), "the newest ten traces")
		counts = append(counts, f.api.DDB.Counts())
	}
	assert.Equal(t, map[string]int{"GetItem": 2, "Query": 3, "BatchGetItem": 2}, counts[0])
	assert.Equal(t, counts[0], counts[1], "the same requests for 5 and 50 traces")
}

// assertSeconds checks that shown ("1.96 s") is want seconds within api.MetricsRelativeError.
func assertSeconds(t *testing.T, want float64, shown string) {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSuffix(shown, " s"), 64)
	require.NoError(t, err, shown)
	assert.InEpsilon(t, want, v, api.MetricsRelativeError+0.005, shown)
}
