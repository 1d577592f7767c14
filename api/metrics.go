package api

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// MetricsBucketSize is the ?bucket= of GET /projects/{project_id}/metrics.
type MetricsBucketSize string

const (
	BucketMinute MetricsBucketSize = "minute"
	BucketHour   MetricsBucketSize = "hour"
	BucketDay    MetricsBucketSize = "day"
)

// Step is the length of a bucket.
func (b MetricsBucketSize) Step() time.Duration {
	switch b {
	case BucketMinute:
		return time.Minute
	case BucketDay:
		return 24 * time.Hour
	}
	return time.Hour
}

// MaxMetricsBuckets bounds the buckets of one metrics answer, per bucket size: a day of
// minutes, 90 days of hours, 400 days.
var MaxMetricsBuckets = map[MetricsBucketSize]int{BucketMinute: 1440, BucketHour: 2160, BucketDay: 400}

// DefaultMetricsWindow is the window of a metrics query without from: the 24 hours to to.
const DefaultMetricsWindow = 24 * time.Hour

// MetricsQuery is the query of GET /projects/{project_id}/metrics: the buckets of [From, To)
// (From rounded down and To up to the bucket size, in UTC), and at most one span filter.
type MetricsQuery struct {
	From, To time.Time
	Bucket   MetricsBucketSize
	// The span filters: the spans of one kind, one name, one model, one prompt (its slug) or
	// one tag (TagKey=TagValue). Under a filter only the span counters are answered.
	SpanKind, SpanName, Model, Prompt string
	TagKey, TagValue                  string
}

// Metrics query parameters.
const (
	MetricsFrom        = "from"
	MetricsTo          = "to"
	MetricsBucketParam = "bucket"
	MetricsSpanKind    = "span_kind"
	MetricsSpanName    = "span_name"
	MetricsModel       = "model"
	MetricsPrompt      = "prompt"
	// MetricsTag is key:value (the first colon separates them).
	MetricsTag = "tag"
)

// ParseMetricsQuery reads a metrics query; now is the default of to. Its errors are messages
// for the caller (the shared error shape's invalid_request).
func ParseMetricsQuery(v url.Values, now time.Time) (MetricsQuery, error) {
	for name := range v {
		switch name {
		case MetricsFrom, MetricsTo, MetricsBucketParam, MetricsSpanKind, MetricsSpanName, MetricsModel, MetricsPrompt, MetricsTag:
		default:
			return MetricsQuery{}, fmt.Errorf("unknown parameter %q: the metrics take from, to, bucket and one of span_kind, span_name, model, prompt, tag", name)
		}
	}
	q := MetricsQuery{Bucket: MetricsBucketSize(v.Get(MetricsBucketParam)), SpanKind: v.Get(MetricsSpanKind),
		SpanName: v.Get(MetricsSpanName), Model: v.Get(MetricsModel), Prompt: v.Get(MetricsPrompt)}
	switch q.Bucket {
	case "":
		q.Bucket = BucketHour
	case BucketMinute, BucketHour, BucketDay:
	default:
		return MetricsQuery{}, fmt.Errorf("bucket must be minute, hour or day, not %q", q.Bucket)
	}
	if tag := v.Get(MetricsTag); tag != "" {
		key, value, ok := strings.Cut(tag, ":")
		if !ok || key == "" {
			return MetricsQuery{}, fmt.Errorf("tag must be key:value, not %q", tag)
		}
		q.TagKey, q.TagValue = key, value
	}
	filters := 0
	for _, f := range []string{q.SpanKind, q.SpanName, q.Model, q.Prompt, q.TagKey} {
		if f != "" {
			filters++
		}
	}
	if filters > 1 {
		return MetricsQuery{}, errors.New("give at most one of span_kind, span_name, model, prompt and tag")
	}
	if q.Bucket == BucketMinute && filters > 0 {
		return MetricsQuery{}, errors.New("minute buckets are kept for the whole project only: use bucket=hour or day with a filter")
	}
	step := q.Bucket.Step()
	var err error
	if q.To, err = timeParam(v, MetricsTo, now); err != nil {
		return MetricsQuery{}, err
	}
	if q.From, err = timeParam(v, MetricsFrom, q.To.Add(-DefaultMetricsWindow)); err != nil {
		return MetricsQuery{}, err
	}
	q = q.Aligned()
	if !q.From.Before(q.To) {
		return MetricsQuery{}, errors.New("from must be before to")
	}
	if n, most := int(q.To.Sub(q.From)/step), MaxMetricsBuckets[q.Bucket]; n > most {
		return MetricsQuery{}, fmt.Errorf("%d %s buckets asked: at most %d per query", n, q.Bucket, most)
	}
	return q, nil
}

func timeParam(v url.Values, name string, def time.Time) (time.Time, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", name, s)
	}
	return t, nil
}

// Aligned is q with From rounded down and To up to its bucket size, in UTC.
func (q MetricsQuery) Aligned() MetricsQuery {
	step := q.Bucket.Step()
	q.From, q.To = q.From.UTC().Truncate(step), ceil(q.To.UTC(), step)
	return q
}

// ceil rounds t up to a multiple of step.
func ceil(t time.Time, step time.Duration) time.Time {
	if f := t.Truncate(step); !f.Equal(t) {
		return f.Add(step)
	}
	return t
}

// Values is q as query parameters (ParseMetricsQuery reads them back).
func (q MetricsQuery) Values() url.Values {
	v := url.Values{}
	set := func(name, value string) {
		if value != "" {
			v.Set(name, value)
		}
	}
	if !q.From.IsZero() {
		v.Set(MetricsFrom, q.From.UTC().Format(time.RFC3339Nano))
	}
	if !q.To.IsZero() {
		v.Set(MetricsTo, q.To.UTC().Format(time.RFC3339Nano))
	}
	set(MetricsBucketParam, string(q.Bucket))
	set(MetricsSpanKind, q.SpanKind)
	set(MetricsSpanName, q.SpanName)
	set(MetricsModel, q.Model)
	set(MetricsPrompt, q.Prompt)
	if q.TagKey != "" {
		v.Set(MetricsTag, q.TagKey+":"+q.TagValue)
	}
	return v
}

// Filtered reports whether q selects spans by one of their attributes.
func (q MetricsQuery) Filtered() bool {
	return q.SpanKind != "" || q.SpanName != "" || q.Model != "" || q.Prompt != "" || q.TagKey != ""
}

// Metrics is the answer of GET /projects/{project_id}/metrics: the counters of each bucket of
// [from, to), oldest first, every bucket present, and their totals.
type Metrics struct {
	From    time.Time         `json:"from"`
	To      time.Time         `json:"to"`
	Bucket  MetricsBucketSize `json:"bucket"`
	Buckets []MetricsBucket   `json:"buckets"`
	Totals  MetricsValues     `json:"totals"`
	// ListsCut, when present, is how many entries each list of models, prompts and judges holds
	// at most, in the buckets and the totals alike: their first, in each list's order (models by
	// calls, prompts by spans, judges by id). An answer with every bucket's lists whole would
	// pass MaxAnswerBytes (hundreds of models or prompts over 2,160 hourly buckets), so the lists
	// are cut to the most entries that fit; every counter outside the lists is whole. A query of
	// fewer buckets, or with a span filter (model=, prompt=), reads the rest. Absent when every
	// list is whole.
	ListsCut *int `json:"lists_cut,omitempty"`
}

// MetricsBucket is the counters of the bucket that starts at Start.
type MetricsBucket struct {
	Start time.Time `json:"start"`
	MetricsValues
}

// MetricsValues are the counters of a bucket or of the window. Traces are counted in the
// bucket of their start, spans in that of theirs, judge evaluations and feedback in that of
// their creation. Under a span filter the trace, judge and feedback counters are null: they
// are not about one span's attributes.
type MetricsValues struct {
	Traces      *int64 `json:"traces"`
	ErrorTraces *int64 `json:"error_traces"`
	Spans       int64  `json:"spans"`
	ErrorSpans  int64  `json:"error_spans"`
	// Cost is in US dollars.
	Cost         float64 `json:"cost"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	// LatencyMS is of the traces' durations, SpanLatencyMS of the spans'; null without any.
	LatencyMS     *Percentiles `json:"latency_ms"`
	SpanLatencyMS *Percentiles `json:"span_latency_ms"`
	// LLMCalls are the spans that name a model; Models splits them by model, most calls first.
	LLMCalls int64          `json:"llm_calls"`
	Models   []ModelMetrics `json:"models"`
	// Prompts are the prompts with linked spans or feedback, most spans first.
	Prompts []PromptMetrics `json:"prompts"`
	// Judges are the judges with evaluations, by id.
	Judges   []JudgeMetrics   `json:"judges"`
	Feedback *FeedbackMetrics `json:"feedback"`
}

// Percentiles of durations in milliseconds, each within MetricsRelativeError of the true
// nearest-rank percentile; Count is how many durations they are of.
type Percentiles struct {
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Count int64   `json:"count"`
}

// MetricsRelativeError bounds the relative error of every percentile of a metrics answer.
const MetricsRelativeError = 0.02

// ModelMetrics are the llm calls of one model.
type ModelMetrics struct {
	Model        string  `json:"model"`
	Calls        int64   `json:"calls"`
	Cost         float64 `json:"cost"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
}

// PromptMetrics are the spans linked to one prompt (llm spans naming it in their linkage) and
// people's feedback on its completions; FeedbackUp and FeedbackDown are 0 under a span filter.
type PromptMetrics struct {
	Prompt       string  `json:"prompt"`
	Spans        int64   `json:"spans"`
	ErrorSpans   int64   `json:"error_spans"`
	Cost         float64 `json:"cost"`
	FeedbackUp   int64   `json:"feedback_up"`
	FeedbackDown int64   `json:"feedback_down"`
}

// JudgeMetrics are the evaluations of one judge.
type JudgeMetrics struct {
	JudgeID     string `json:"judge_id"`
	Evaluations int64  `json:"evaluations"`
	Passed      int64  `json:"passed"`
	// PassRate is Passed / Evaluations.
	PassRate float64 `json:"pass_rate"`
}

// FeedbackMetrics counts people's thumbs up and down.
type FeedbackMetrics struct {
	Up   int64 `json:"up"`
	Down int64 `json:"down"`
}
