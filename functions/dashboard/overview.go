package dashboard

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// overviewRange is a choice of the overview's ?range=: Buckets of the metrics' bucket size.
type overviewRange struct {
	Key, Label string
	Buckets    int
	Bucket     api.MetricsBucketSize
}

var overviewRanges = []overviewRange{
	{"24h", "Last 24 hours", 24, api.BucketHour},
	{"7d", "Last 7 days", 7, api.BucketDay},
	{"30d", "Last 30 days", 30, api.BucketDay},
}

// Bounds of the overview's lists.
const (
	overviewTop    = 5
	overviewRecent = 10
)

type overviewData struct {
	Range         overviewRange
	Ranges        []overviewRange
	Traces, Spans int64
	Errors        int64
	Cost          float64
	ErrorRate     string
	P50, P95      *float64
	Charts        []chart
	Latency       chart
	Prompts       []promptVolume
	Disliked      []promptFeedback
	Judges        []judgeFailures
	Recent        []api.Trace
	Empty         bool
	BaseURL       string
}

type promptVolume struct {
	Slug          string
	Calls, Errors int64
}

type promptFeedback struct {
	Slug            string
	Negative, Total int64
	Share           string
}

type judgeFailures struct {
	ID, Name      string
	Total, Failed int64
	PassRate      string
}

// overview serves GET /ui/ (?range=24h|7d|30d): the project's counters of the range per hour
// or UTC day in charts, its busiest and most disliked prompts and its failing judges, and its
// newest traces.
//
// Three REST calls whatever the project's size, each exact: GET metrics of the range (the
// counters the rollups keep per bucket as spans, evaluations and feedback arrive), GET judges
// (to name the judges the metrics count by id; left out when none has evaluations in the range)
// and GET /traces of the newest overviewRecent traces, which also tells an empty project (the
// SDK snippet) from a quiet range.
func (s *server) overview(w http.ResponseWriter, r *http.Request) {
	rg, ok := overviewRanges[0], true
	if k := r.URL.Query().Get("range"); k != "" {
		i := slices.IndexFunc(overviewRanges, func(o overviewRange) bool { return o.Key == k })
		if ok = i >= 0; ok {
			rg = overviewRanges[i]
		}
	}
	if !ok {
		s.fail(w, r, errs.Invalid("The range must be one of 24h, 7d or 30d."))
		return
	}
	c, ctx := s.api(r)
	step := rg.Bucket.Step()
	end := s.d.Now().UTC().Truncate(step).Add(step)
	m, err := c.Metrics(ctx, api.MetricsQuery{From: end.Add(-time.Duration(rg.Buckets) * step), To: end, Bucket: rg.Bucket})
	if err != nil {
		s.fail(w, r, apiError(err))
		return
	}
	recent, err := c.Traces(ctx, api.TraceQuery{ListQuery: api.ListQuery{Limit: overviewRecent}})
	if err != nil {
		s.fail(w, r, apiError(err))
		return
	}
	var judges []api.Judge
	if len(m.Totals.Judges) > 0 {
		if judges, err = c.Judges(ctx); err != nil {
			s.fail(w, r, apiError(err))
			return
		}
	}
	t := m.Totals
	d := overviewData{Range: rg, Ranges: overviewRanges, Traces: deref(t.Traces), Errors: deref(t.ErrorTraces),
		Spans: t.Spans, Cost: t.Cost, Recent: recent, BaseURL: s.baseURL(r),
		Prompts: busiestPrompts(t.Prompts), Disliked: dislikedPrompts(t.Prompts), Judges: failingJudges(t.Judges, judges)}
	d.Empty = d.Traces == 0 && len(recent) == 0
	d.ErrorRate = "–"
	if d.Traces > 0 {
		d.ErrorRate = fmt.Sprintf("%.1f%%", 100*float64(d.Errors)/float64(d.Traces))
	}
	if l := t.LatencyMS; l != nil {
		d.P50, d.P95 = &l.P50, &l.P95
	}
	d.charts(m)
	s.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", Data: d})
}

// charts draws m's buckets: traces, spans, cost and the share of traces with an error as bars,
// the traces' latency p50 and p95 as lines over the buckets with traces.
func (d *overviewData) charts(m api.Metrics) {
	n, step := d.Range.Buckets, d.Range.Bucket.Step()
	traces, spans, cost, errRate := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	p50, p95 := make([]float64, n), make([]float64, n)
	for i := range n {
		p50[i], p95[i] = math.NaN(), math.NaN()
	}
	for _, b := range m.Buckets {
		i := int(b.Start.Sub(m.From) / step)
		if i < 0 || i >= n {
			continue
		}
		traces[i], spans[i], cost[i] = float64(deref(b.Traces)), float64(b.Spans), b.Cost
		if traces[i] > 0 {
			errRate[i] = 100 * float64(deref(b.ErrorTraces)) / traces[i]
		}
		if l := b.LatencyMS; l != nil {
			p50[i], p95[i] = l.P50, l.P95
		}
	}
	a := axis{labels: make([]string, n), ticks: make([]string, n), every: max(1, n/6)}
	for i := range n {
		at := m.From.Add(time.Duration(i) * step)
		a.labels[i], a.ticks[i] = at.Format("Jan 2"), at.Format("Jan 2")
		if step < 24*time.Hour {
			a.labels[i], a.ticks[i] = at.Format("Jan 2 15:04"), at.Format("15:04")
		}
	}
	count := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	money := func(v float64) string { return fmt.Sprintf("$%.4g", v) }
	pct := func(v float64) string { return fmt.Sprintf("%.0f%%", v) }
	d.Charts = []chart{
		barChart("chart-traces", "Traces", "traces", a, traces, count),
		barChart("chart-spans", "Spans", "spans", a, spans, count),
		barChart("chart-cost", "Cost", "US dollars", a, cost, money),
		barChart("chart-errors", "Error rate", "share of traces with an error", a, errRate, pct),
	}
	d.Latency = lineChart("chart-latency", "Latency", "trace duration", a, []string{"p50", "p95"}, [][]float64{p50, p95},
		func(v float64) string { return formatMS(&v) })
}

// busiestPrompts are the prompts of ps with linked spans, most first (the metrics' order).
func busiestPrompts(ps []api.PromptMetrics) []promptVolume {
	var out []promptVolume
	for _, p := range ps {
		if p.Spans > 0 {
			out = append(out, promptVolume{Slug: p.Prompt, Calls: p.Spans, Errors: p.ErrorSpans})
		}
	}
	slices.SortStableFunc(out, func(a, b promptVolume) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Slug, b.Slug))
	})
	return out[:min(len(out), overviewTop)]
}

// dislikedPrompts are the prompts of ps with thumbs down, most first.
func dislikedPrompts(ps []api.PromptMetrics) []promptFeedback {
	var out []promptFeedback
	for _, p := range ps {
		if p.FeedbackDown > 0 {
			total := p.FeedbackUp + p.FeedbackDown
			out = append(out, promptFeedback{Slug: p.Prompt, Negative: p.FeedbackDown, Total: total,
				Share: fmt.Sprintf("%.0f%%", 100*float64(p.FeedbackDown)/float64(total))})
		}
	}
	slices.SortFunc(out, func(a, b promptFeedback) int {
		return cmp.Or(cmp.Compare(b.Negative, a.Negative), cmp.Compare(a.Slug, b.Slug))
	})
	return out[:min(len(out), overviewTop)]
}

// failingJudges are the judges of ms with evaluations, lowest pass rate first, named from
// judges (one deleted since by its id).
func failingJudges(ms []api.JudgeMetrics, judges []api.Judge) []judgeFailures {
	var out []judgeFailures
	for _, m := range ms {
		if m.Evaluations <= 0 {
			continue
		}
		j := judgeFailures{ID: m.JudgeID, Name: m.JudgeID, Total: m.Evaluations, Failed: m.Evaluations - m.Passed,
			PassRate: fmt.Sprintf("%.0f%%", 100*float64(m.Passed)/float64(m.Evaluations))}
		if i := slices.IndexFunc(judges, func(x api.Judge) bool { return x.ID == m.JudgeID }); i >= 0 {
			j.Name = judges[i].Name
		}
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b judgeFailures) int {
		return cmp.Or(cmp.Compare(b.Failed*a.Total, a.Failed*b.Total), cmp.Compare(b.Failed, a.Failed), cmp.Compare(a.ID, b.ID))
	})
	return out[:min(len(out), overviewTop)]
}

// baseURL is the address applications send to, for the setup snippets: the deployment's
// public URL (PLUME_PUBLIC_URL) when it has one, else the one the browser reached (behind a CDN
// or another proxy, the Host header may not be it).
func (s *server) baseURL(r *http.Request) string {
	if s.d.PublicURL != "" {
		return s.d.PublicURL
	}
	scheme := "http"
	if secure(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
