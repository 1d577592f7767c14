package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// get-project-summary's window.
const (
	defaultWindowHours = 24
	maxWindowHours     = 720 // 30 days
	summaryTop         = 5
)

// summaryDescription is get-project-summary's description: what it reads.
var summaryDescription = fmt.Sprintf("Summarize the project over the last window_hours (default %d, up to %d): "+
	"trace and span counts, error rates, cost (USD), latency percentiles, llm calls by model, the judges with the most failing evaluations "+
	"and the prompts with the most negative feedback. Exact, whatever the project's size: it reads the project's metrics "+
	"(GET /projects/{project_id}/metrics, counters kept per hour as spans arrive, a second or so behind) and its judges (GET .../judges), two API calls.",
	defaultWindowHours, maxWindowHours)

// ProjectSummaryInput is get-project-summary's window.
type ProjectSummaryInput struct {
	WindowHours int `json:"window_hours,omitempty" jsonschema:"the window in hours back from now: 1 to 720 (30 days), default 24"`
}

// ProjectSummaryOutput is get-project-summary's answer.
type ProjectSummaryOutput struct {
	WindowHours     int       `json:"window_hours" jsonschema:"the window used, in hours"`
	From            time.Time `json:"from" jsonschema:"the window's start (the start of its first hour)"`
	To              time.Time `json:"to" jsonschema:"the window's end (the end of the current hour)"`
	TraceCount      int64     `json:"trace_count" jsonschema:"traces that started in the window"`
	SpanCount       int64     `json:"span_count" jsonschema:"spans that started in the window"`
	ErrorTraceCount int64     `json:"error_trace_count" jsonschema:"traces with a failed span"`
	ErrorSpanCount  int64     `json:"error_span_count" jsonschema:"failed spans"`
	TraceErrorRate  *float64  `json:"trace_error_rate" jsonschema:"error_trace_count / trace_count; null without traces"`
	SpanErrorRate   *float64  `json:"span_error_rate" jsonschema:"error_span_count / span_count; null without spans"`
	CostUSD         float64   `json:"cost_usd" jsonschema:"the spans' cost in USD"`
	// LatencyMS are the traces' durations.
	LatencyMS *api.Percentiles   `json:"latency_ms" jsonschema:"percentiles of the traces' durations in milliseconds (within 2%); null without traces"`
	LLMCalls  int64              `json:"llm_calls" jsonschema:"spans that name a model"`
	Models    []api.ModelMetrics `json:"models" jsonschema:"the llm calls by model, most first"`
	// TopFailingJudges holds judges with failing evaluations only.
	TopFailingJudges             []JudgeFailures  `json:"top_failing_judges" jsonschema:"up to 5 judges with the most failing evaluations made in the window, most first"`
	TopPromptsByNegativeFeedback []PromptFeedback `json:"top_prompts_by_negative_feedback" jsonschema:"up to 5 prompts with the most negative (thumbs down) human feedback given in the window, most first"`
	APICalls                     int              `json:"api_calls" jsonschema:"REST calls made"`
}

// JudgeFailures is a judge's failing evaluations in the window.
type JudgeFailures struct {
	JudgeID            string   `json:"judge_id" jsonschema:"the judge's id"`
	Name               string   `json:"name" jsonschema:"the judge's name"`
	FailingEvaluations int64    `json:"failing_evaluations" jsonschema:"its evaluations in the window whose verdict is fail"`
	Evaluations        int64    `json:"evaluations" jsonschema:"all its evaluations in the window"`
	FailureRate        *float64 `json:"failure_rate" jsonschema:"failing_evaluations / evaluations"`
	LinkedPrompts      []string `json:"linked_prompts" jsonschema:"the prompts it evaluates"`
}

// PromptFeedback is the human feedback on a prompt's completions.
type PromptFeedback struct {
	PromptSlug       string `json:"prompt_slug" jsonschema:"the prompt's slug"`
	NegativeFeedback int64  `json:"negative_feedback" jsonschema:"thumbs-down feedback on its completions"`
	Feedback         int64  `json:"feedback" jsonschema:"all human feedback on its completions"`
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
				return summarize(ctx, c, hours)
			}),
	}
}

// summarize reads the window's metrics and the judges (for their names and prompts).
func summarize(ctx context.Context, c *client.Client, hours int) (ProjectSummaryOutput, error) {
	to := time.Now().UTC()
	m, err := c.Metrics(ctx, api.MetricsQuery{From: to.Add(-time.Duration(hours) * time.Hour), To: to, Bucket: api.BucketHour})
	if err != nil {
		return ProjectSummaryOutput{}, err
	}
	judges, err := c.Judges(ctx)
	if err != nil {
		return ProjectSummaryOutput{}, err
	}
	t := m.Totals
	out := ProjectSummaryOutput{WindowHours: hours, From: m.From, To: m.To,
		TraceCount: *t.Traces, ErrorTraceCount: *t.ErrorTraces, SpanCount: t.Spans, ErrorSpanCount: t.ErrorSpans,
		CostUSD: t.Cost, LatencyMS: t.LatencyMS, LLMCalls: t.LLMCalls, Models: t.Models,
		TopFailingJudges: failingJudges(t.Judges, judges), TopPromptsByNegativeFeedback: dislikedPrompts(t.Prompts), APICalls: 2}
	if out.TraceCount > 0 {
		out.TraceErrorRate = new(float64(out.ErrorTraceCount) / float64(out.TraceCount))
	}
	if out.SpanCount > 0 {
		out.SpanErrorRate = new(float64(out.ErrorSpanCount) / float64(out.SpanCount))
	}
	return out, nil
}

// failingJudges are the judges with failing evaluations in ms, most first, named from judges
// (a judge deleted since is shown by id).
func failingJudges(ms []api.JudgeMetrics, judges []api.Judge) []JudgeFailures {
	out := []JudgeFailures{}
	for _, m := range ms {
		failing := m.Evaluations - m.Passed
		if failing <= 0 {
			continue
		}
		f := JudgeFailures{JudgeID: m.JudgeID, Name: m.JudgeID, FailingEvaluations: failing, Evaluations: m.Evaluations,
			FailureRate: new(float64(failing) / float64(m.Evaluations)), LinkedPrompts: []string{}}
		if i := slices.IndexFunc(judges, func(j api.Judge) bool { return j.ID == m.JudgeID }); i >= 0 {
			f.Name, f.LinkedPrompts = judges[i].Name, judges[i].LinkedPrompts
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b JudgeFailures) int {
		return cmp.Or(cmp.Compare(b.FailingEvaluations, a.FailingEvaluations), cmp.Compare(a.JudgeID, b.JudgeID))
	})
	return out[:min(len(out), summaryTop)]
}

// dislikedPrompts are the prompts with thumbs down in ps, most first.
func dislikedPrompts(ps []api.PromptMetrics) []PromptFeedback {
	out := []PromptFeedback{}
	for _, p := range ps {
		if p.FeedbackDown > 0 {
			out = append(out, PromptFeedback{PromptSlug: p.Prompt, NegativeFeedback: p.FeedbackDown, Feedback: p.FeedbackUp + p.FeedbackDown})
		}
	}
	slices.SortFunc(out, func(a, b PromptFeedback) int {
		return cmp.Or(cmp.Compare(b.NegativeFeedback, a.NegativeFeedback), cmp.Compare(a.PromptSlug, b.PromptSlug))
	})
	return out[:min(len(out), summaryTop)]
}
