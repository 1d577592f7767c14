package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// Bounds of get-project-summary: it is computed from the REST reads an agent could make, so
// these bound its calls (at most 4 + 1 + 2×25 + 50 + 50 = 155) and its time.
const (
	defaultWindowHours = 24
	maxWindowHours     = 720 // the traces' lookback: 30 days
	summaryTracePage   = 500 // GET /traces' largest page
	maxSummaryTraces   = 4 * summaryTracePage
	maxSummaryJudges   = 25
	maxFeedbackTraces  = 50
	maxFeedbackSpans   = 50
	summaryTop         = 5
	summaryConcurrency = 8
)

// summaryDescription is get-project-summary's description: what it reads and its limits.
var summaryDescription = fmt.Sprintf("Summarize the project over the last window_hours (default %d, up to %d): "+
	"trace and span counts, cost (USD), error rates, the judges with the most failing evaluations and the prompts with the most negative feedback. "+
	"It is computed from REST reads: GET /traces created in the window (newest %d at most: coverage.traces_truncated says when the window has more, or when the API stopped at its scan bound of 10,000 traces); "+
	"the judges (the %d with the most evaluations) and, for each, the number of its evaluations and failing evaluations made in the window; "+
	"the human feedback on the newest %d traces of the window, attributed to prompts by the prompt link of the span it is about (at most %d spans looked up). "+
	"At most %d API calls; coverage says what was read and notes what was left out.",
	defaultWindowHours, maxWindowHours, maxSummaryTraces, maxSummaryJudges, maxFeedbackTraces, maxFeedbackSpans,
	maxSummaryTraces/summaryTracePage+1+2*maxSummaryJudges+maxFeedbackTraces+maxFeedbackSpans)

// ProjectSummaryInput is get-project-summary's window.
type ProjectSummaryInput struct {
	WindowHours int `json:"window_hours,omitempty" jsonschema:"the window in hours back from now: 1 to 720 (30 days), default 24"`
}

// ProjectSummaryOutput is get-project-summary's answer.
type ProjectSummaryOutput struct {
	WindowHours     int       `json:"window_hours" jsonschema:"the window used, in hours"`
	From            time.Time `json:"from" jsonschema:"the window's start"`
	To              time.Time `json:"to" jsonschema:"the window's end (now)"`
	TraceCount      int       `json:"trace_count" jsonschema:"traces created in the window (of those read: see coverage)"`
	SpanCount       int       `json:"span_count" jsonschema:"spans of those traces"`
	ErrorTraceCount int       `json:"error_trace_count" jsonschema:"traces with a failed span"`
	ErrorSpanCount  int       `json:"error_span_count" jsonschema:"failed spans"`
	TraceErrorRate  *float64  `json:"trace_error_rate" jsonschema:"error_trace_count / trace_count; null without traces"`
	SpanErrorRate   *float64  `json:"span_error_rate" jsonschema:"error_span_count / span_count; null without spans"`
	CostUSD         float64   `json:"cost_usd" jsonschema:"the traces' cost in USD"`
	// TopFailingJudges holds judges with failing evaluations only.
	TopFailingJudges             []JudgeFailures  `json:"top_failing_judges" jsonschema:"up to 5 judges with the most failing evaluations made in the window, most first"`
	TopPromptsByNegativeFeedback []PromptFeedback `json:"top_prompts_by_negative_feedback" jsonschema:"up to 5 prompts with the most negative (thumbs down) human feedback on the traces read, most first"`
	Coverage                     SummaryCoverage  `json:"coverage" jsonschema:"what the summary read, and what it left out"`
}

// JudgeFailures is a judge's failing evaluations in the window.
type JudgeFailures struct {
	JudgeID            string   `json:"judge_id" jsonschema:"the judge's id"`
	Name               string   `json:"name" jsonschema:"the judge's name"`
	FailingEvaluations int      `json:"failing_evaluations" jsonschema:"its evaluations in the window whose verdict is fail"`
	Evaluations        int      `json:"evaluations" jsonschema:"all its evaluations in the window"`
	FailureRate        *float64 `json:"failure_rate" jsonschema:"failing_evaluations / evaluations"`
	LinkedPrompts      []string `json:"linked_prompts" jsonschema:"the prompts it evaluates"`
}

// PromptFeedback is the human feedback on a prompt's completions.
type PromptFeedback struct {
	PromptSlug       string `json:"prompt_slug" jsonschema:"the prompt's slug"`
	NegativeFeedback int    `json:"negative_feedback" jsonschema:"thumbs-down feedback on its completions"`
	Feedback         int    `json:"feedback" jsonschema:"all human feedback on its completions"`
}

// SummaryCoverage is what get-project-summary read.
type SummaryCoverage struct {
	TracesRead         int      `json:"traces_read" jsonschema:"traces of the window read for the counts"`
	TracesTruncated    bool     `json:"traces_truncated" jsonschema:"true when the window has more traces than were read (the API's scan bound or the summary's): the counts are of the newest only"`
	JudgesRead         int      `json:"judges_read" jsonschema:"judges whose evaluations in the window were counted"`
	JudgesTotal        int      `json:"judges_total" jsonschema:"the project's judges"`
	FeedbackTracesRead int      `json:"feedback_traces_read" jsonschema:"traces whose human feedback was read"`
	FeedbackSpansRead  int      `json:"feedback_spans_read" jsonschema:"spans looked up to attribute feedback to prompts"`
	APICalls           int      `json:"api_calls" jsonschema:"REST calls made"`
	Notes              []string `json:"notes" jsonschema:"what was left out, when anything was"`
}

// summaryTools is get-project-summary.
func (s *server) summaryTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "get-project-summary", Description: summaryDescription,
			Annotations: readOnly("Summarize the project")},
			func(ctx context.Context, c *client.Client, in ProjectSummaryInput) (ProjectSummaryOutput, error) {
				hours := cmp.Or(in.WindowHours, defaultWindowHours)
				if hours < 1 || hours > maxWindowHours {
					return ProjectSummaryOutput{}, errInput("window_hours must be from 1 to %d, not %d", maxWindowHours, in.WindowHours)
				}
				to := time.Now().UTC()
				sm := &summarizer{c: c, out: ProjectSummaryOutput{WindowHours: hours, From: to.Add(-time.Duration(hours) * time.Hour), To: to}}
				return sm.run(ctx)
			}),
	}
}

// summarizer computes a project summary, counting its API calls.
type summarizer struct {
	c     *client.Client
	calls atomic.Int32
	out   ProjectSummaryOutput
}

func (sm *summarizer) run(ctx context.Context) (ProjectSummaryOutput, error) {
	sm.out.Coverage.Notes = []string{}
	traces, err := sm.traces(ctx)
	if err != nil {
		return ProjectSummaryOutput{}, err
	}
	out := &sm.out
	for _, t := range traces {
		out.TraceCount++
		out.SpanCount += t.SpanCount
		out.ErrorSpanCount += t.ErrorCount
		out.CostUSD += t.Cost
		if t.ErrorCount > 0 || t.Status == "error" {
			out.ErrorTraceCount++
		}
	}
	if out.TraceCount > 0 {
		out.TraceErrorRate = new(float64(out.ErrorTraceCount) / float64(out.TraceCount))
	}
	if out.SpanCount > 0 {
		out.SpanErrorRate = new(float64(out.ErrorSpanCount) / float64(out.SpanCount))
	}
	out.Coverage.TracesRead = len(traces)
	if out.TopFailingJudges, err = sm.failingJudges(ctx); err != nil {
		return ProjectSummaryOutput{}, err
	}
	if out.TopPromptsByNegativeFeedback, err = sm.negativeFeedback(ctx, traces); err != nil {
		return ProjectSummaryOutput{}, err
	}
	out.Coverage.APICalls = int(sm.calls.Load())
	return *out, nil
}

// traces reads the window's traces, newest first, up to maxSummaryTraces in at most
// maxSummaryTraces/summaryTracePage calls. An answer the API cut by size goes on from its next
// offset; one its scan bound cut ends the reading, as no offset reaches what it left out.
func (sm *summarizer) traces(ctx context.Context) ([]api.Trace, error) {
	var all []api.Trace
	offset := 0
	for range maxSummaryTraces / summaryTracePage {
		sm.calls.Add(1)
		page, info, err := sm.c.TracesPage(ctx, api.TraceQuery{ListQuery: api.ListQuery{CreatedAfter: api.TimeOf(sm.out.From),
			Limit: min(summaryTracePage, maxSummaryTraces-offset), Offset: offset}})
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if info.Truncated {
			sm.out.Coverage.TracesTruncated = true
			sm.out.Coverage.Notes = append(sm.out.Coverage.Notes, fmt.Sprintf("the API stopped at its scan bound after examining %d traces "+
				"of the window: the counts, cost and feedback are of the newest traces only", info.Scanned))
			return all, nil
		}
		switch {
		case info.NextOffset > 0:
			offset = info.NextOffset
		case len(page) < summaryTracePage:
			return all, nil
		default:
			offset += len(page)
		}
		if offset >= maxSummaryTraces {
			break
		}
	}
	sm.out.Coverage.TracesTruncated = true
	sm.out.Coverage.Notes = append(sm.out.Coverage.Notes, fmt.Sprintf("the window has more than the %d traces read: "+
		"the counts, cost and feedback are of the newest %d", len(all), len(all)))
	return all, nil
}

// failingJudges counts the evaluations in the window of the judges with the most evaluations.
func (sm *summarizer) failingJudges(ctx context.Context) ([]JudgeFailures, error) {
	sm.calls.Add(1)
	judges, err := sm.c.Judges(ctx)
	if err != nil {
		return nil, err
	}
	sm.out.Coverage.JudgesTotal = len(judges)
	judges = slices.DeleteFunc(judges, func(j api.Judge) bool { return j.EvaluationCount == 0 })
	slices.SortStableFunc(judges, func(a, b api.Judge) int { return cmp.Compare(b.EvaluationCount, a.EvaluationCount) })
	if len(judges) > maxSummaryJudges {
		sm.out.Coverage.Notes = append(sm.out.Coverage.Notes, fmt.Sprintf("%d judges have evaluations: those of the %d with the most were counted", len(judges), maxSummaryJudges))
		judges = judges[:maxSummaryJudges]
	}
	sm.out.Coverage.JudgesRead = len(judges)
	counts := make([]JudgeFailures, len(judges))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(summaryConcurrency)
	for i, j := range judges {
		counts[i] = JudgeFailures{JudgeID: j.ID, Name: j.Name, LinkedPrompts: j.LinkedPrompts}
		g.Go(func() error {
			sm.calls.Add(1)
			failing, err := sm.c.Evaluations(gctx, j.ID, client.EvaluationQuery{Limit: 1, Start: sm.out.From, Result: new(false)})
			if err != nil || failing.Total == 0 {
				return err
			}
			sm.calls.Add(1)
			all, err := sm.c.Evaluations(gctx, j.ID, client.EvaluationQuery{Limit: 1, Start: sm.out.From})
			counts[i].FailingEvaluations, counts[i].Evaluations = failing.Total, all.Total
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	counts = slices.DeleteFunc(counts, func(f JudgeFailures) bool { return f.FailingEvaluations == 0 })
	for i := range counts {
		if counts[i].Evaluations > 0 {
			counts[i].FailureRate = new(float64(counts[i].FailingEvaluations) / float64(counts[i].Evaluations))
		}
	}
	slices.SortStableFunc(counts, func(a, b JudgeFailures) int { return cmp.Compare(b.FailingEvaluations, a.FailingEvaluations) })
	return counts[:min(len(counts), summaryTop)], nil
}

// negativeFeedback counts the human feedback on the newest traces, by the prompt of the span
// each is about.
func (sm *summarizer) negativeFeedback(ctx context.Context, traces []api.Trace) ([]PromptFeedback, error) {
	if len(traces) > maxFeedbackTraces {
		sm.out.Coverage.Notes = append(sm.out.Coverage.Notes, fmt.Sprintf("feedback was read on the newest %d of the %d traces read", maxFeedbackTraces, len(traces)))
		traces = traces[:maxFeedbackTraces]
	}
	sm.out.Coverage.FeedbackTracesRead = len(traces)
	// The human feedback of each span: how much, how much negative.
	type tally struct{ all, negative int }
	var mu sync.Mutex
	bySpan := map[string]*tally{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(summaryConcurrency)
	for _, t := range traces {
		g.Go(func() error {
			sm.calls.Add(1)
			fb, err := sm.c.UnifiedFeedback(gctx, api.EntityTrace, t.ID)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, it := range fb.Items {
				if it.Human == nil || it.Human.SourceType != api.SourceHuman {
					continue // a judge's evaluation, or calibration feedback about a judge
				}
				n := bySpan[it.Human.SpanID]
				if n == nil {
					n = &tally{}
					bySpan[it.Human.SpanID] = n
				}
				n.all++
				if !it.Human.ThumbsUp {
					n.negative++
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Look up the spans, those with negative feedback first, to read their prompt.
	spans := make([]string, 0, len(bySpan))
	for id := range bySpan {
		spans = append(spans, id)
	}
	slices.SortFunc(spans, func(a, b string) int {
		return cmp.Or(cmp.Compare(bySpan[b].negative, bySpan[a].negative), cmp.Compare(a, b))
	})
	if len(spans) > maxFeedbackSpans {
		sm.out.Coverage.Notes = append(sm.out.Coverage.Notes, fmt.Sprintf("%d spans have feedback: the %d with the most negative feedback were attributed to prompts", len(spans), maxFeedbackSpans))
		spans = spans[:maxFeedbackSpans]
	}
	sm.out.Coverage.FeedbackSpansRead = len(spans)
	byPrompt := map[string]*PromptFeedback{}
	unlinked := 0
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(summaryConcurrency)
	for _, id := range spans {
		g.Go(func() error {
			sm.calls.Add(1)
			found, err := sm.c.Spans(gctx, api.SpanQuery{ID: id})
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if len(found) == 0 || found[0].PromptLink == nil || found[0].PromptLink.PromptSlug == "" {
				unlinked++
				return nil
			}
			slug := found[0].PromptLink.PromptSlug
			p := byPrompt[slug]
			if p == nil {
				p = &PromptFeedback{PromptSlug: slug}
				byPrompt[slug] = p
			}
			p.Feedback += bySpan[id].all
			p.NegativeFeedback += bySpan[id].negative
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if unlinked > 0 {
		sm.out.Coverage.Notes = append(sm.out.Coverage.Notes, fmt.Sprintf("%d spans with feedback name no prompt: their feedback is not counted", unlinked))
	}
	out := make([]PromptFeedback, 0, len(byPrompt))
	for _, p := range byPrompt {
		if p.NegativeFeedback > 0 {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b PromptFeedback) int {
		return cmp.Or(cmp.Compare(b.NegativeFeedback, a.NegativeFeedback), cmp.Compare(a.PromptSlug, b.PromptSlug))
	})
	return out[:min(len(out), summaryTop)], nil
}
