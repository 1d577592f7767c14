package rollup

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/bound"
)

// Reader reads rollup items.
type Reader interface {
	// Rollups returns the counters of the items of (projectID, d, g) whose buckets start in
	// [from, to), by start; buckets without an item are absent.
	Rollups(ctx context.Context, projectID string, d Dim, g Grain, from, to time.Time) (map[time.Time]*Counters, error)
}

// Metrics answers GET /projects/{project_id}/metrics for q (as api.ParseMetricsQuery read it; its
// window is aligned to its buckets here too)
// with one read of the items of its window: O(buckets), whatever the project's size. Day
// buckets are the sums of their hours.
func Metrics(ctx context.Context, r Reader, projectID string, q api.MetricsQuery) (api.Metrics, error) {
	q = q.Aligned()
	grain := Hour
	if q.Bucket == api.BucketMinute {
		grain = Minute
	}
	stored, err := r.Rollups(ctx, projectID, dimOf(q), grain, q.From, q.To)
	if err != nil {
		return api.Metrics{}, err
	}
	step := q.Bucket.Step()
	n := int(q.To.Sub(q.From) / step)
	buckets := make([]*Counters, n)
	for i := range buckets {
		buckets[i] = NewCounters()
	}
	total := NewCounters()
	for start, c := range stored {
		if i := int(start.Sub(q.From) / step); i >= 0 && i < n {
			buckets[i].Merge(c)
			total.Merge(c)
		}
	}
	out := api.Metrics{From: q.From, To: q.To, Bucket: q.Bucket, Buckets: make([]api.MetricsBucket, n),
		Totals: values(total, q.Filtered())}
	for i, c := range buckets {
		out.Buckets[i] = api.MetricsBucket{Start: q.From.Add(time.Duration(i) * step), MetricsValues: values(c, q.Filtered())}
	}
	return out, nil
}

// dimOf is the dimension a query reads.
func dimOf(q api.MetricsQuery) Dim {
	switch {
	case q.SpanKind != "":
		return Dim{Kind, q.SpanKind}
	case q.SpanName != "":
		return Dim{Name, q.SpanName}
	case q.Model != "":
		return Dim{Model, q.Model}
	case q.Prompt != "":
		return Dim{Prompt, q.Prompt}
	case q.TagKey != "":
		return Dim{Tag, TagValue(q.TagKey, q.TagValue)}
	}
	return Dim{}
}

// values is c as answered; filtered leaves out what is not about spans.
func values(c *Counters, filtered bool) api.MetricsValues {
	v := api.MetricsValues{
		Spans: c.Spans, ErrorSpans: c.ErrorSpans, Cost: bound.Round(c.Cost, bound.CostGrid),
		InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, LLMCalls: c.LLMCalls,
		SpanLatencyMS: percentiles(c.SpanLatency), Models: []api.ModelMetrics{},
	}
	for m, mc := range c.Models {
		if mc.Calls != 0 {
			v.Models = append(v.Models, api.ModelMetrics{Model: m, Calls: mc.Calls, Cost: bound.Round(mc.Cost, bound.CostGrid),
				InputTokens: mc.InputTokens, OutputTokens: mc.OutputTokens})
		}
	}
	slices.SortFunc(v.Models, func(a, b api.ModelMetrics) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Model, b.Model))
	})
	v.Prompts = []api.PromptMetrics{}
	for p, pc := range c.Prompts {
		if *pc != (PromptCounters{}) {
			v.Prompts = append(v.Prompts, api.PromptMetrics{Prompt: p, Spans: pc.Spans, ErrorSpans: pc.ErrorSpans,
				Cost: bound.Round(pc.Cost, bound.CostGrid), FeedbackUp: pc.FeedbackUp, FeedbackDown: pc.FeedbackDown})
		}
	}
	slices.SortFunc(v.Prompts, func(a, b api.PromptMetrics) int {
		return cmp.Or(cmp.Compare(b.Spans, a.Spans), cmp.Compare(a.Prompt, b.Prompt))
	})
	if filtered {
		return v
	}
	v.Traces, v.ErrorTraces = &c.Traces, &c.ErrorTraces
	v.LatencyMS = percentiles(c.TraceLatency)
	v.Judges = []api.JudgeMetrics{}
	for id, jc := range c.Judges {
		if jc.Evaluations != 0 {
			v.Judges = append(v.Judges, api.JudgeMetrics{JudgeID: id, Evaluations: jc.Evaluations, Passed: jc.Passed,
				PassRate: float64(jc.Passed) / float64(jc.Evaluations)})
		}
	}
	slices.SortFunc(v.Judges, func(a, b api.JudgeMetrics) int { return cmp.Compare(a.JudgeID, b.JudgeID) })
	v.Feedback = &api.FeedbackMetrics{Up: c.FeedbackUp, Down: c.FeedbackDown}
	return v
}

func percentiles(s Sketch) *api.Percentiles {
	p50, ok := s.Quantile(0.50)
	if !ok {
		return nil
	}
	p95, _ := s.Quantile(0.95)
	p99, _ := s.Quantile(0.99)
	return &api.Percentiles{P50: p50, P95: p95, P99: p99, Count: s.Count()}
}
