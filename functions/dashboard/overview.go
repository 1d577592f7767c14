package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/trace"
)

// overviewRange is a choice of the overview's ?range=.
type overviewRange struct {
	Key, Label string
	Buckets    int
	Step       time.Duration
}

var overviewRanges = []overviewRange{
	{"24h", "Last 24 hours", 24, time.Hour},
	{"7d", "Last 7 days", 7, 24 * time.Hour},
	{"30d", "Last 30 days", 30, 24 * time.Hour},
}

// Bounds of the overview's reads.
const (
	// overviewJudges is how many judges' evaluations the overview counts (two API calls each).
	overviewJudges = 10
	// overviewFeedbackPrompts is how many prompts' feedback the overview reads (one feedback
	// index query each, the busiest prompts first), overviewFeedbackScan how many completions'
	// feedback of each (newest first).
	overviewFeedbackPrompts = 20
	overviewFeedbackScan    = 500
	overviewTop             = 5
)

// PromptFeedback reads the feedback people gave on a prompt's completions.
type PromptFeedback interface {
	// CompletionFeedback returns people's feedback on completions of prompt slug, newest
	// first, going back until it covers limit completions.
	CompletionFeedback(ctx context.Context, projectID, slug string, limit int) ([]feedback.Feedback, error)
}

type overviewData struct {
	Range          overviewRange
	Ranges         []overviewRange
	Traces, Spans  int
	Errors         int
	Cost           float64
	ErrorRate      string
	P50, P95       *float64
	Truncated      bool
	SpansTruncated bool
	Charts         []chart
	Latency        chart
	Prompts        []promptVolume
	Disliked       []promptFeedback
	DislikedCut    bool
	Judges         []judgeFailures
	JudgesCut      bool
	Recent         []trace.Trace
	Empty          bool
	BaseURL        string
}

type promptVolume struct {
	Slug          string
	Calls, Errors int
}

type promptFeedback struct {
	Slug            string
	Negative, Total int
	Share           string
}

type judgeFailures struct {
	ID, Name      string
	Total, Failed int
	PassRate      string
}

// overview serves GET /ui/ (?range=24h|7d|30d): the project's traces of the range counted per
// hour or UTC day into charts, its busiest and most disliked prompts and its failing judges.
//
// Reads, bounded whatever the project's size: the traces of the range through the query GET
// /traces answers (at most trace.MaxAggregateScan traces: index pages and batch reads of trace
// items, no span bodies); the span summaries of the range for the prompts (at most
// trace.MaxAggregateScan summaries, no span bodies); the project's prompt list and one query
// of the feedback index for each of at most overviewFeedbackPrompts prompts (pages up to
// overviewFeedbackScan completions); GET judges, then two GET evaluations per judge for at
// most overviewJudges judges; and, only when the range has no trace, one more trace query of
// one trace to tell an empty project (the SDK snippet) from a quiet range. That is two index
// walks (three for an empty range) and at most 1 + 20 + 1 + 20 other requests.
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
	sess := sessionOf(r)
	end := s.d.Now().UTC().Truncate(rg.Step).Add(rg.Step)
	since := end.Add(-time.Duration(rg.Buckets) * rg.Step)
	ts, info, err := s.d.Queries.Traces(r.Context(), sess.ProjectID, trace.TraceQuery{
		Common: trace.Common{CreatedAfter: &since, Limit: trace.MaxAggregateScan},
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := overviewData{Range: rg, Ranges: overviewRanges, Traces: len(ts), Truncated: info.Truncated,
		BaseURL: s.baseURL(r)}
	d.charts(ts, since)
	volumes, truncated, err := s.promptVolumes(r, since)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Prompts, d.SpansTruncated = volumes[:min(len(volumes), overviewTop)], truncated
	if d.Disliked, d.DislikedCut, err = s.dislikedPrompts(r, since, volumes); err != nil {
		s.fail(w, r, err)
		return
	}
	if d.Judges, d.JudgesCut, err = s.failingJudges(r, since); err != nil {
		s.fail(w, r, err)
		return
	}
	if len(ts) == 0 {
		one, _, err := s.d.Queries.Traces(r.Context(), sess.ProjectID, trace.TraceQuery{Common: trace.Common{Limit: 1}})
		if err != nil {
			s.fail(w, r, err)
			return
		}
		d.Empty = len(one) == 0
	}
	d.Recent = ts[:min(len(ts), 10)]
	s.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", Data: d})
}

// charts counts ts into the range's buckets by the time each trace started (its creation time
// when it has no start). A trace of the range (created in it) that started earlier counts in
// the first bucket, one whose clock ran ahead in the last: every trace of the totals is in a
// bucket.
func (d *overviewData) charts(ts []trace.Trace, since time.Time) {
	n, step := d.Range.Buckets, d.Range.Step
	traces, spans, cost, errRate := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	errCount := make([]float64, n)
	durations := make([][]float64, n)
	var all []float64
	for _, t := range ts {
		at := t.CreatedAt
		if t.StartedAt != nil {
			at = *t.StartedAt
		}
		i := min(max(int(at.Sub(since)/step), 0), n-1)
		traces[i]++
		spans[i] += float64(t.SpanCount)
		cost[i] += t.Cost
		d.Spans += t.SpanCount
		d.Cost += t.Cost
		if t.ErrorCount > 0 {
			errCount[i]++
			d.Errors++
		}
		if t.DurationMS != nil {
			durations[i] = append(durations[i], *t.DurationMS)
			all = append(all, *t.DurationMS)
		}
	}
	a := axis{labels: make([]string, n), ticks: make([]string, n), every: max(1, n/6)}
	for i := range n {
		at := since.Add(time.Duration(i) * step)
		a.labels[i], a.ticks[i] = at.Format("Jan 2"), at.Format("Jan 2")
		if step < 24*time.Hour {
			a.labels[i], a.ticks[i] = at.Format("Jan 2 15:04"), at.Format("15:04")
		}
	}
	for i := range errRate {
		if traces[i] > 0 {
			errRate[i] = 100 * errCount[i] / traces[i]
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
	p50, p95 := make([]float64, n), make([]float64, n)
	for i, ds := range durations {
		p50[i], p95[i] = percentile(ds, 50), percentile(ds, 95)
	}
	d.Latency = lineChart("chart-latency", "Latency", "trace duration", a, []string{"p50", "p95"}, [][]float64{p50, p95},
		func(v float64) string { return formatMS(&v) })
	if len(all) > 0 {
		p50, p95 := percentile(all, 50), percentile(all, 95)
		d.P50, d.P95 = &p50, &p95
	}
	d.ErrorRate = "–"
	if d.Traces > 0 {
		d.ErrorRate = fmt.Sprintf("%.1f%%", 100*float64(d.Errors)/float64(d.Traces))
	}
}

// percentile is the nearest-rank p-th percentile of vs (NaN when empty).
func percentile(vs []float64, p float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(vs))
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(rank, 1)-1]
}

// promptVolumes counts the llm spans of the range by the prompt they used (their prompt
// linkage), from span summaries only, at most trace.MaxAggregateScan of them (newest first).
func (s *server) promptVolumes(r *http.Request, since time.Time) ([]promptVolume, bool, error) {
	projectID := sessionOf(r).ProjectID
	by := map[string]*promptVolume{}
	scanned, truncated := 0, false
	err := s.d.Reader.WalkIndex(r.Context(), projectID, trace.IndexSpans, trace.TimeRange{From: since, MaxDays: trace.LookbackDays},
		func(ids []string) (bool, error) {
			sums, err := s.d.Reader.Summaries(r.Context(), projectID, ids)
			if err != nil {
				return false, err
			}
			for _, sum := range sums {
				if sum.PromptSlug == "" {
					continue
				}
				p := by[sum.PromptSlug]
				if p == nil {
					p = &promptVolume{Slug: sum.PromptSlug}
					by[sum.PromptSlug] = p
				}
				p.Calls++
				if sum.HasError {
					p.Errors++
				}
			}
			scanned += len(ids)
			truncated = scanned >= trace.MaxAggregateScan
			return !truncated, nil
		})
	if err != nil {
		return nil, false, err
	}
	out := make([]promptVolume, 0, len(by))
	for _, p := range by {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b promptVolume) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Slug, b.Slug))
	})
	return out, truncated, nil
}

// dislikedPrompts counts the thumbs down of the range on the project's prompts, at most
// overviewFeedbackPrompts of them (the busiest in volumes first, then by name), the prompts
// with any coming most thumbs down first. cut reports prompts left unread.
func (s *server) dislikedPrompts(r *http.Request, since time.Time, volumes []promptVolume) (_ []promptFeedback, cut bool, _ error) {
	if s.d.PromptFeedback == nil {
		return nil, false, nil
	}
	projectID := sessionOf(r).ProjectID
	prompts, err := s.d.Prompts.List(r.Context(), projectID)
	if err != nil {
		return nil, false, err
	}
	rank := make(map[string]int, len(volumes))
	for i, v := range volumes {
		rank[v.Slug] = len(volumes) - i
	}
	slugs := make([]string, 0, len(prompts))
	for _, p := range prompts {
		slugs = append(slugs, p.Slug)
	}
	slices.SortFunc(slugs, func(a, b string) int { return cmp.Or(cmp.Compare(rank[b], rank[a]), cmp.Compare(a, b)) })
	cut = len(slugs) > overviewFeedbackPrompts
	var out []promptFeedback
	for _, slug := range slugs[:min(len(slugs), overviewFeedbackPrompts)] {
		fs, err := s.d.PromptFeedback.CompletionFeedback(r.Context(), projectID, slug, overviewFeedbackScan)
		if err != nil {
			return nil, false, err
		}
		p := promptFeedback{Slug: slug}
		for _, f := range fs {
			if f.CreatedAt.Before(since) {
				continue
			}
			p.Total++
			if !f.ThumbsUp {
				p.Negative++
			}
		}
		if p.Negative > 0 {
			p.Share = fmt.Sprintf("%.0f%%", 100*float64(p.Negative)/float64(p.Total))
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b promptFeedback) int {
		return cmp.Or(cmp.Compare(b.Negative, a.Negative), cmp.Compare(a.Slug, b.Slug))
	})
	return out[:min(len(out), overviewTop)], cut, nil
}

// failingJudges counts the evaluations of the range of the first overviewJudges judges, and
// their failures, through the API; the judges with evaluations come most failures first.
func (s *server) failingJudges(r *http.Request, since time.Time) ([]judgeFailures, bool, error) {
	c, ctx := s.api(r)
	judges, err := c.Judges(ctx)
	if err != nil {
		return nil, false, apiError(err)
	}
	cut := len(judges) > overviewJudges
	fail := false
	var out []judgeFailures
	for _, j := range judges[:min(len(judges), overviewJudges)] {
		all, err := c.Evaluations(ctx, j.ID, client.EvaluationQuery{Limit: 1, Start: since})
		if err != nil {
			return nil, false, apiError(err)
		}
		if all.Total == 0 {
			continue
		}
		failed, err := c.Evaluations(ctx, j.ID, client.EvaluationQuery{Limit: 1, Start: since, Result: &fail})
		if err != nil {
			return nil, false, apiError(err)
		}
		out = append(out, judgeFailures{ID: j.ID, Name: j.Name, Total: all.Total, Failed: failed.Total,
			PassRate: fmt.Sprintf("%.0f%%", 100*float64(all.Total-failed.Total)/float64(all.Total))})
	}
	slices.SortStableFunc(out, func(a, b judgeFailures) int {
		return cmp.Or(cmp.Compare(b.Failed*a.Total, a.Failed*b.Total), cmp.Compare(b.Failed, a.Failed))
	})
	return out, cut, nil
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
