// Package rollup keeps a project's metrics (GET /projects/{project_id}/metrics) as counters per
// time bucket, so that totals and charts cost O(buckets) to read, never O(spans).
//
// The counters are not written by the requests that store spans: a consumer of the table's
// change stream (RollupFunction, or plume-local's poller) reads each change of a span summary,
// a trace, a judge evaluation or a person's feedback, turns it into what the new image counts
// minus what the old one counted, adds up the changes of a window of the stream (a minute of a
// shard's batches) by rollup item, and adds each sum to its item once (the store makes the
// addition idempotent per stream shard: see ddb.RollupStore). So a rollup equals a recount of the stored items it counts, whatever
// failed, once the stream is consumed, and ingestion pays nothing for it on its request path.
//
// Items: every counter at the hour (Hour) for each dimension (all spans, and the spans of one
// kind, name, model, prompt or tag), and at the minute (Minute) for all spans only; days are
// read as the sum of their hours. Trace, judge and feedback counters are kept for all spans only
// (they are not about one span's attributes).
package rollup

import (
	"fmt"
	"time"
)

// Grain is the time bucket of a rollup item.
type Grain string

const (
	Minute Grain = "M"
	Hour   Grain = "H"
)

// Step is the length of g's buckets.
func (g Grain) Step() time.Duration {
	if g == Minute {
		return time.Minute
	}
	return time.Hour
}

// Filter is what a dimension selects spans by.
type Filter string

const (
	All    Filter = ""
	Kind   Filter = "k"
	Name   Filter = "n"
	Model  Filter = "m"
	Prompt Filter = "p"
	Tag    Filter = "t"
)

// Dim is a rollup's dimension: all spans (Filter All), or those whose Filter is Value. A tag's
// value is TagValue(key, value).
type Dim struct {
	Filter Filter
	Value  string
}

// TagValue is the Dim value of the tag key=value: the key's length first, so that no two tags
// share one.
func TagValue(key, value string) string { return fmt.Sprintf("%d:%s=%s", len(key), key, value) }

// Key names one rollup item.
type Key struct {
	ProjectID string
	Dim       Dim
	Grain     Grain
	Start     time.Time // the bucket's start, UTC, truncated to the grain
}

// ModelCounters are the llm calls of one model.
type ModelCounters struct {
	Calls, InputTokens, OutputTokens int64
	Cost                             float64
}

// PromptCounters are the spans linked to one prompt, and people's feedback on them.
type PromptCounters struct {
	Spans, ErrorSpans        int64
	Cost                     float64
	FeedbackUp, FeedbackDown int64
}

func (p *PromptCounters) add(o PromptCounters, sign int64) {
	p.Spans += sign * o.Spans
	p.ErrorSpans += sign * o.ErrorSpans
	p.Cost += float64(sign) * o.Cost
	p.FeedbackUp += sign * o.FeedbackUp
	p.FeedbackDown += sign * o.FeedbackDown
}

// JudgeCounters are the evaluations of one judge; Passed those whose verdict is pass.
type JudgeCounters struct {
	Evaluations, Passed int64
}

// Counters are what a rollup item counts. Traces are counted in the bucket of their start,
// spans in that of theirs, evaluations and feedback in that of their creation.
type Counters struct {
	Traces, ErrorTraces       int64
	Spans, ErrorSpans         int64
	Cost                      float64
	InputTokens, OutputTokens int64
	// LLMCalls are spans that name a model.
	LLMCalls int64
	// TraceLatency sketches the traces' durations, SpanLatency the spans'.
	TraceLatency, SpanLatency Sketch
	Models                    map[string]*ModelCounters
	// Prompts are the spans linked to each prompt (by slug) and the feedback on them.
	Prompts                  map[string]*PromptCounters
	Judges                   map[string]*JudgeCounters
	FeedbackUp, FeedbackDown int64
}

// NewCounters is zero counters.
func NewCounters() *Counters {
	return &Counters{TraceLatency: Sketch{}, SpanLatency: Sketch{}, Models: map[string]*ModelCounters{},
		Prompts: map[string]*PromptCounters{}, Judges: map[string]*JudgeCounters{}}
}

// Merge adds o's counts to c.
func (c *Counters) Merge(o *Counters) {
	c.Traces += o.Traces
	c.ErrorTraces += o.ErrorTraces
	c.Spans += o.Spans
	c.ErrorSpans += o.ErrorSpans
	c.Cost += o.Cost
	c.InputTokens += o.InputTokens
	c.OutputTokens += o.OutputTokens
	c.LLMCalls += o.LLMCalls
	c.TraceLatency.Merge(o.TraceLatency)
	c.SpanLatency.Merge(o.SpanLatency)
	for m, mc := range o.Models {
		c.model(m).add(*mc, 1)
	}
	for p, pc := range o.Prompts {
		c.Prompt(p).add(*pc, 1)
	}
	for j, jc := range o.Judges {
		c.judge(j).add(*jc, 1)
	}
	c.FeedbackUp += o.FeedbackUp
	c.FeedbackDown += o.FeedbackDown
}

func (c *Counters) model(m string) *ModelCounters {
	if c.Models[m] == nil {
		c.Models[m] = &ModelCounters{}
	}
	return c.Models[m]
}

// Prompt is the counters of prompt slug, made on first use.
func (c *Counters) Prompt(slug string) *PromptCounters {
	if c.Prompts[slug] == nil {
		c.Prompts[slug] = &PromptCounters{}
	}
	return c.Prompts[slug]
}

func (c *Counters) judge(id string) *JudgeCounters {
	if c.Judges[id] == nil {
		c.Judges[id] = &JudgeCounters{}
	}
	return c.Judges[id]
}

func (m *ModelCounters) add(o ModelCounters, sign int64) {
	m.Calls += sign * o.Calls
	m.InputTokens += sign * o.InputTokens
	m.OutputTokens += sign * o.OutputTokens
	m.Cost += float64(sign) * o.Cost
}

func (j *JudgeCounters) add(o JudgeCounters, sign int64) {
	j.Evaluations += sign * o.Evaluations
	j.Passed += sign * o.Passed
}

// Span is what a span summary counts.
type Span struct {
	Start                     time.Time
	Kind, Name, Model, Prompt string
	Tags                      map[string]string
	DurationMS, Cost          *float64
	InputTokens, OutputTokens int64
	Error                     bool
}

// Trace is what a trace item counts.
type Trace struct {
	Start      time.Time
	Error      bool
	DurationMS *float64
}

// Evaluation is what a judge's evaluation counts.
type Evaluation struct {
	At     time.Time
	Judge  string
	Passed bool
}

// Feedback is what a person's thumbs up or down counts; Prompt is the slug of the prompt of
// the completion it is about, when it names one.
type Feedback struct {
	At     time.Time
	Up     bool
	Prompt string
}

// Batch adds up the changes of a batch of stream records by rollup item.
type Batch struct {
	Deltas map[Key]*Counters
}

// NewBatch is an empty Batch.
func NewBatch() *Batch { return &Batch{Deltas: map[Key]*Counters{}} }

// at is the counters of the item of (project, d, g) whose bucket holds t.
func (b *Batch) at(projectID string, d Dim, g Grain, t time.Time) *Counters {
	k := Key{ProjectID: projectID, Dim: d, Grain: g, Start: t.UTC().Truncate(g.Step())}
	if b.Deltas[k] == nil {
		b.Deltas[k] = NewCounters()
	}
	return b.Deltas[k]
}

// all is the counters of the all-spans items (minute and hour) whose buckets hold t.
func (b *Batch) all(projectID string, t time.Time) []*Counters {
	return []*Counters{b.at(projectID, Dim{}, Minute, t), b.at(projectID, Dim{}, Hour, t)}
}

// AddSpan counts s (sign 1) or takes it back (sign -1) in every dimension it is in.
func (b *Batch) AddSpan(projectID string, s Span, sign int64) {
	cs := b.all(projectID, s.Start)
	for _, d := range s.dims() {
		cs = append(cs, b.at(projectID, d, Hour, s.Start))
	}
	for _, c := range cs {
		c.Spans += sign
		if s.Error {
			c.ErrorSpans += sign
		}
		if s.Cost != nil {
			c.Cost += float64(sign) * *s.Cost
		}
		c.InputTokens += sign * s.InputTokens
		c.OutputTokens += sign * s.OutputTokens
		if s.DurationMS != nil {
			c.SpanLatency.Add(Bin(*s.DurationMS), sign)
		}
		if s.Prompt != "" {
			pc := PromptCounters{Spans: 1}
			if s.Error {
				pc.ErrorSpans = 1
			}
			if s.Cost != nil {
				pc.Cost = *s.Cost
			}
			c.Prompt(s.Prompt).add(pc, sign)
		}
		if s.Model != "" {
			c.LLMCalls += sign
			mc := ModelCounters{Calls: 1, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens}
			if s.Cost != nil {
				mc.Cost = *s.Cost
			}
			c.model(s.Model).add(mc, sign)
		}
	}
}

// dims are the dimensions of s other than all spans.
func (s Span) dims() []Dim {
	ds := make([]Dim, 0, 4+len(s.Tags))
	ds = append(ds, Dim{Kind, s.Kind})
	if s.Name != "" {
		ds = append(ds, Dim{Name, s.Name})
	}
	if s.Model != "" {
		ds = append(ds, Dim{Model, s.Model})
	}
	if s.Prompt != "" {
		ds = append(ds, Dim{Prompt, s.Prompt})
	}
	for k, v := range s.Tags {
		ds = append(ds, Dim{Tag, TagValue(k, v)})
	}
	return ds
}

// AddTrace counts t or takes it back.
func (b *Batch) AddTrace(projectID string, t Trace, sign int64) {
	for _, c := range b.all(projectID, t.Start) {
		c.Traces += sign
		if t.Error {
			c.ErrorTraces += sign
		}
		if t.DurationMS != nil {
			c.TraceLatency.Add(Bin(*t.DurationMS), sign)
		}
	}
}

// AddEvaluation counts e or takes it back.
func (b *Batch) AddEvaluation(projectID string, e Evaluation, sign int64) {
	jc := JudgeCounters{Evaluations: 1}
	if e.Passed {
		jc.Passed = 1
	}
	for _, c := range b.all(projectID, e.At) {
		c.judge(e.Judge).add(jc, sign)
	}
}

// AddFeedback counts f or takes it back.
func (b *Batch) AddFeedback(projectID string, f Feedback, sign int64) {
	pc := PromptCounters{FeedbackDown: 1}
	if f.Up {
		pc = PromptCounters{FeedbackUp: 1}
	}
	for _, c := range b.all(projectID, f.At) {
		c.FeedbackUp += sign * pc.FeedbackUp
		c.FeedbackDown += sign * pc.FeedbackDown
		if f.Prompt != "" {
			c.Prompt(f.Prompt).add(pc, sign)
		}
	}
}
