package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// Bounds of the judge tools' answers.
const (
	defaultEvaluationLimit = 20
	maxEvaluationLimit     = 100
	// listTemplateLimit cuts each template of list-judges; get-judge answers it whole.
	listTemplateLimit = 500
	// reasonLimit cuts each evaluation's reason in list-judge-evaluations.
	reasonLimit = 1000
	// maxPerformanceDays is the longest window of get-judge's performance.
	maxPerformanceDays = 365
)

// ListJudgesOutput is list-judges' answer.
type ListJudgesOutput struct {
	Judges     []api.Judge `json:"judges" jsonschema:"the project's judges, oldest first, from offset, as many as fit the tool's answer limit, each with its linked_prompts, evaluation_count and pass_rate; templates cut at 500 characters (get-judge answers one whole)"`
	Count      int         `json:"count" jsonschema:"the number of judges"`
	Offset     int         `json:"offset" jsonschema:"the judges skipped"`
	NextOffset *int        `json:"next_offset" jsonschema:"offset of the judges left out of this answer; null when it holds the rest"`
}

// ListJudgesInput pages the judges.
type ListJudgesInput struct {
	Offset int `json:"offset,omitempty" jsonschema:"judges to skip: next_offset of the previous answer"`
}

// GetJudgeCriteriaInput names a judge.
type GetJudgeCriteriaInput struct {
	JudgeID string `json:"judge_id" jsonschema:"the judge's id, as list-judges answers it"`
}

// GetJudgeInput names a judge and the window of its performance.
type GetJudgeInput struct {
	JudgeID         string `json:"judge_id" jsonschema:"the judge's id, as list-judges answers it"`
	PerformanceDays int    `json:"performance_days,omitempty" jsonschema:"the performance window in days back from now: 1 to 365, default 30"`
}

// GetJudgeOutput is get-judge's answer.
type GetJudgeOutput struct {
	Judge         api.Judge            `json:"judge" jsonschema:"the judge's whole definition (template, evaluation type, scale, sampling, criteria) and its counts"`
	LinkedPrompts []string             `json:"linked_prompts" jsonschema:"the slugs of the prompts the judge is linked to: it evaluates their completions"`
	Performance   api.JudgePerformance `json:"performance" jsonschema:"how far the judge agrees with the people who calibrated its evaluations over the window: accuracy, kappa, true positive and negative rates (null without data), score error for a scored judge, and per criterion"`
}

// ListJudgeEvaluationsInput selects a page of a judge's evaluations.
type ListJudgeEvaluationsInput struct {
	JudgeID          string `json:"judge_id" jsonschema:"the judge's id, as list-judges answers it"`
	EvaluationResult *bool  `json:"evaluation_result,omitempty" jsonschema:"true: only passing evaluations; false: only failing ones"`
	FeedbackState    string `json:"feedback_state,omitempty" jsonschema:"with_user_feedback or without_user_feedback: only evaluations someone calibrated, or only those nobody did"`
	StartDate        string `json:"start_date,omitempty" jsonschema:"ISO 8601 time or date: only evaluations made at or after it"`
	EndDate          string `json:"end_date,omitempty" jsonschema:"ISO 8601 time or date (a date includes the whole day): only evaluations made up to it"`
	Limit            int    `json:"limit,omitempty" jsonschema:"evaluations per page: 1 to 100, default 20"`
	Offset           int    `json:"offset,omitempty" jsonschema:"evaluations to skip: next_offset of the previous page"`
}

// ListJudgeEvaluationsOutput is list-judge-evaluations' answer.
type ListJudgeEvaluationsOutput struct {
	Evaluations []api.Evaluation `json:"evaluations" jsonschema:"this page of the judge's evaluations, newest first: the span judged, the verdict (evaluation_result), the reason (cut at 1,000 characters), the score and criteria scores"`
	Total       int              `json:"total" jsonschema:"the number of evaluations matching the filters"`
	Limit       int              `json:"limit" jsonschema:"the page size used"`
	Offset      int              `json:"offset" jsonschema:"the evaluations skipped"`
	NextOffset  *int             `json:"next_offset" jsonschema:"offset of the next page; null when this is the last page"`
	Truncated   bool             `json:"truncated" jsonschema:"true when the server stopped at its bound on one request's work (a feedback_state filter over a window of more evaluations than it counts): total and the pages cover the newest evaluations of the window only; narrow start_date and end_date to reach the rest"`
	Note        string           `json:"note,omitempty" jsonschema:"what an agent must know about this answer: set when it is partial"`
}

// judgeTools are the read tools of judges.
func (s *server) judgeTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "list-judges",
			Description: "List the project's judges (oldest first) with the prompts each is linked to, its evaluation count and pass rate. " +
				"Templates are cut at 500 characters; get-judge answers a judge whole.",
			Annotations: readOnly("List judges")},
			withEmptyMaps(func(ctx context.Context, c *client.Client, in ListJudgesInput) (ListJudgesOutput, error) {
				if in.Offset < 0 {
					return ListJudgesOutput{}, errInput("offset must be 0 or more, not %d", in.Offset)
				}
				judges, err := c.Judges(ctx)
				if err != nil {
					return ListJudgesOutput{}, err
				}
				if judges == nil {
					judges = []api.Judge{}
				}
				count := len(judges)
				judges = judges[min(in.Offset, len(judges)):]
				for i := range judges {
					t, _ := cutText(&judges[i].Template, listTemplateLimit)
					judges[i].Template = *t
				}
				return fitPage(len(judges), func(n int) ListJudgesOutput {
					return ListJudgesOutput{Judges: judges[:n], Count: count, Offset: in.Offset, NextOffset: leftOut(in.Offset, n, len(judges))}
				})
			})),
		newTool(s, &mcp.Tool{Name: "get-judge",
			Description: "Read a judge: its whole definition, the prompts it is linked to, and its performance " +
				"(agreement with people's calibration feedback over the last performance_days, default 30).",
			Annotations: readOnly("Get a judge")},
			withEmptyMaps(func(ctx context.Context, c *client.Client, in GetJudgeInput) (GetJudgeOutput, error) {
				if err := requireID("judge_id", in.JudgeID, "list-judges"); err != nil {
					return GetJudgeOutput{}, err
				}
				days := in.PerformanceDays
				if days == 0 {
					days = 30
				}
				if days < 1 || days > maxPerformanceDays {
					return GetJudgeOutput{}, errInput("performance_days must be from 1 to %d, not %d", maxPerformanceDays, in.PerformanceDays)
				}
				j, err := c.Judge(ctx, in.JudgeID)
				if err != nil {
					return GetJudgeOutput{}, err
				}
				end := time.Now().UTC()
				perf, err := c.JudgePerformance(ctx, in.JudgeID, end.AddDate(0, 0, -days), end)
				if err != nil {
					return GetJudgeOutput{}, err
				}
				return GetJudgeOutput{Judge: j, LinkedPrompts: j.LinkedPrompts, Performance: perf}, nil
			})),
		newTool(s, &mcp.Tool{Name: "list-judge-evaluations",
			Description: "List a judge's evaluations, newest first, filtered by verdict (evaluation_result), calibration (feedback_state) " +
				"and time, paged (limit up to 100, next_offset) with the total matching. Reasons are cut at 1,000 characters.",
			Annotations: readOnly("List a judge's evaluations")},
			withEmptyMaps(listEvaluations)),
		newTool(s, &mcp.Tool{Name: "get-judge-criteria",
			Description: "Read a judge's criteria (the aspects it scores separately) and its scale: evaluation type, score range and pass threshold.",
			Annotations: readOnly("Get a judge's criteria")},
			func(ctx context.Context, c *client.Client, in GetJudgeCriteriaInput) (api.JudgeCriteria, error) {
				if err := requireID("judge_id", in.JudgeID, "list-judges"); err != nil {
					return api.JudgeCriteria{}, err
				}
				return c.JudgeCriteria(ctx, in.JudgeID)
			}),
	}
}

func listEvaluations(ctx context.Context, c *client.Client, in ListJudgeEvaluationsInput) (ListJudgeEvaluationsOutput, error) {
	if err := requireID("judge_id", in.JudgeID, "list-judges"); err != nil {
		return ListJudgeEvaluationsOutput{}, err
	}
	limit, err := pageSize("limit", in.Limit, defaultEvaluationLimit, maxEvaluationLimit)
	if err != nil {
		return ListJudgeEvaluationsOutput{}, err
	}
	if in.Offset < 0 {
		return ListJudgeEvaluationsOutput{}, errInput("offset must be 0 or more, not %d", in.Offset)
	}
	q := client.EvaluationQuery{Limit: limit, Offset: in.Offset, Result: in.EvaluationResult}
	switch in.FeedbackState {
	case "":
	case "with_user_feedback":
		q.WithUserFeedback = new(true)
	case "without_user_feedback":
		q.WithUserFeedback = new(false)
	default:
		return ListJudgeEvaluationsOutput{}, errInput("feedback_state must be with_user_feedback or without_user_feedback, not %q", in.FeedbackState)
	}
	if q.Start, err = parseDateInput("start_date", in.StartDate, false); err != nil {
		return ListJudgeEvaluationsOutput{}, err
	}
	if q.End, err = parseDateInput("end_date", in.EndDate, true); err != nil {
		return ListJudgeEvaluationsOutput{}, err
	}
	page, err := c.Evaluations(ctx, in.JudgeID, q)
	if err != nil {
		return ListJudgeEvaluationsOutput{}, err
	}
	if page.Evaluations == nil {
		page.Evaluations = []api.Evaluation{}
	}
	for i := range page.Evaluations {
		r, _ := cutText(&page.Evaluations[i].EvaluationReason, reasonLimit)
		page.Evaluations[i].EvaluationReason = *r
	}
	out := ListJudgeEvaluationsOutput{Evaluations: page.Evaluations, Total: page.Total, Limit: limit, Offset: in.Offset, Truncated: page.Truncated}
	if page.Truncated {
		out.Note = "Partial list: the server stopped at its scan bound, so total and these pages cover the newest evaluations of the window only; narrow start_date and end_date to reach the rest."
	}
	if in.Offset+len(page.Evaluations) < page.Total {
		out.NextOffset = nextPage(in.Offset, limit, len(page.Evaluations))
	}
	evs := out.Evaluations
	return fitPage(len(evs), func(n int) ListJudgeEvaluationsOutput {
		p := out
		p.Evaluations = evs[:n]
		if n < len(evs) {
			p.NextOffset = new(in.Offset + n)
		}
		return p
	})
}

// parseDateInput reads an ISO 8601 time or date of an input (zero when empty): a date is the start
// of that day (UTC), or its last microsecond for an end, as the API reads its date parameters.
func parseDateInput(name, s string, isEnd bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		if isEnd {
			return d.Add(24*time.Hour - time.Microsecond), nil
		}
		return d, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errInput("%s must be an ISO 8601 time (2026-01-02T15:04:05Z) or date (2026-01-02), not %q", name, s)
	}
	return t, nil
}
