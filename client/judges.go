package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/plumehq/plume/api"
)

// SendFeedback records a person's feedback on a completion of prompt slug (spec §2.4): thumbs
// up or down, a reason, the expected output, and for a judge's verdict the calibration fields.
// Feedback is one record per person and completion: sending it again replaces it, so it is
// retried like a read.
func (c *Client) SendFeedback(ctx context.Context, slug, completionID string, req api.FeedbackRequest) (api.Feedback, error) {
	var out api.Feedback
	err := c.do(ctx, call{method: http.MethodPost, path: "/v1/prompts/" + url.PathEscape(slug) + "/completions/" + url.PathEscape(completionID) + "/feedback",
		body: req, idempotent: true}, &out)
	return out, err
}

// UnifiedFeedback reads every feedback and evaluation of a span, trace or session
// (entityType "span", "trace" or "session"), following the next offsets of an answer the
// server cut to stay within api.MaxAnswerBytes.
func (c *Client) UnifiedFeedback(ctx context.Context, entityType, entityID string) (api.UnifiedFeedback, error) {
	path, err := c.projectPath("/feedback/%s/%s", url.PathEscape(entityType), url.PathEscape(entityID))
	if err != nil {
		return api.UnifiedFeedback{}, err
	}
	out, items, err := whole(ctx, c, path, func(u *api.UnifiedFeedback) []api.FeedbackItem { return u.Items })
	if items == nil {
		items = []api.FeedbackItem{} // always an array, as the server answers it
	}
	out.Items = items
	return out, err
}

// CompletionsOptions select a page of a prompt's completions (PromptCompletions).
type CompletionsOptions struct {
	// Limit is the page size (1-50); 0 is the server's default, 20.
	Limit int
	// Cursor is the NextCursor of the previous page; empty for the first.
	Cursor string
	// Version keeps one version's completions; 0 keeps all.
	Version int
}

// PromptCompletions reads a page of a prompt's completions, newest first, each with its
// feedback and judge evaluations. The next page is read with Cursor set to the page's
// NextCursor, until it is nil.
func (c *Client) PromptCompletions(ctx context.Context, slug string, opts CompletionsOptions) (api.CompletionList, error) {
	path, err := c.projectPath("/prompts/%s/completions", url.PathEscape(slug))
	if err != nil {
		return api.CompletionList{}, err
	}
	v := url.Values{}
	if opts.Limit > 0 {
		v.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.Cursor != "" {
		v.Set("cursor", opts.Cursor)
	}
	if opts.Version > 0 {
		v.Set("version", strconv.Itoa(opts.Version))
	}
	var out api.CompletionList
	err = c.do(ctx, call{method: http.MethodGet, path: path, query: v}, &out)
	return out, err
}

// CreateJudge creates a judge (name and template are required).
func (c *Client) CreateJudge(ctx context.Context, req api.JudgeRequest) (api.Judge, error) {
	path, err := c.projectPath("/judges")
	if err != nil {
		return api.Judge{}, err
	}
	var out api.Judge
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: req}, &out)
	return out, err
}

// Judges lists the project's judges, oldest first.
func (c *Client) Judges(ctx context.Context) ([]api.Judge, error) {
	path, err := c.projectPath("/judges")
	if err != nil {
		return nil, err
	}
	_, out, err := whole(ctx, c, path, func(p *api.JudgeList) []api.Judge { return p.Judges })
	return out, err
}

// Judge reads a judge.
func (c *Client) Judge(ctx context.Context, judgeID string) (api.Judge, error) {
	path, err := c.projectPath("/judges/%s", url.PathEscape(judgeID))
	if err != nil {
		return api.Judge{}, err
	}
	var out api.Judge
	err = c.do(ctx, call{method: http.MethodGet, path: path}, &out)
	return out, err
}

// UpdateJudge changes the fields of req that are set.
func (c *Client) UpdateJudge(ctx context.Context, judgeID string, req api.JudgeRequest) (api.Judge, error) {
	path, err := c.projectPath("/judges/%s", url.PathEscape(judgeID))
	if err != nil {
		return api.Judge{}, err
	}
	var out api.Judge
	err = c.do(ctx, call{method: http.MethodPatch, path: path, body: req, idempotent: true}, &out)
	return out, err
}

// LinkJudge links (or, with link false, unlinks) a judge and prompt slug.
func (c *Client) LinkJudge(ctx context.Context, slug, judgeID string, link bool) (api.Judge, error) {
	path, err := c.projectPath("/prompts/%s/judges/%s", url.PathEscape(slug), url.PathEscape(judgeID))
	if err != nil {
		return api.Judge{}, err
	}
	method := http.MethodPut
	if !link {
		method = http.MethodDelete
	}
	var out api.Judge
	err = c.do(ctx, call{method: method, path: path}, &out)
	return out, err
}

// RecordEvaluations stores verdicts computed elsewhere (1 to 100); writing one again replaces
// it, so it is retried like a read. Its Count is how many were stored; its Evaluations, as many
// of them as fit one answer (api.MaxAnswerBytes).
func (c *Client) RecordEvaluations(ctx context.Context, judgeID string, evs []api.EvaluationRequest) (api.RecordEvaluationsResult, error) {
	path, err := c.projectPath("/judges/%s/evaluations", url.PathEscape(judgeID))
	if err != nil {
		return api.RecordEvaluationsResult{}, err
	}
	var out api.RecordEvaluationsResult
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: evs, idempotent: true}, &out)
	return out, err
}

// EvaluationQuery selects a judge's evaluations (spec §4.7); zero fields are the server's
// defaults.
type EvaluationQuery struct {
	Limit, Offset    int
	Start, End       time.Time
	Result           *bool
	WithUserFeedback *bool
}

// EvaluationList is a page of a judge's evaluations and what the server said of it besides.
type EvaluationList struct {
	api.EvaluationPage
	// Truncated is true when the server stopped at its bound on one request's work
	// (X-Plume-Scan-Truncated: a feedback_state filter counts the window's evaluations up to
	// judge.MaxScan): Total and the pages cover the newest evaluations of the window only.
	// Narrow the window (Start, End) to reach the rest.
	Truncated bool
}

// Evaluations lists a judge's evaluations, newest first: a page of q.Limit unless the list ends
// (a page the server cut by size is filled from its next offset). Truncated says when the
// server's scan bound cut the list.
func (c *Client) Evaluations(ctx context.Context, judgeID string, q EvaluationQuery) (EvaluationList, error) {
	path, err := c.projectPath("/judges/%s/evaluations", url.PathEscape(judgeID))
	if err != nil {
		return EvaluationList{}, err
	}
	v := url.Values{}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	if !q.Start.IsZero() {
		v.Set("start_date", q.Start.UTC().Format(time.RFC3339Nano))
	}
	if !q.End.IsZero() {
		v.Set("end_date", q.End.UTC().Format(time.RFC3339Nano))
	}
	if q.Result != nil {
		v.Set("evaluation_result", strconv.FormatBool(*q.Result))
	}
	if q.WithUserFeedback != nil {
		state := "without_user_feedback"
		if *q.WithUserFeedback {
			state = "with_user_feedback"
		}
		v.Set("feedback_state", state)
	}
	var out EvaluationList
	evs, err := filled(q.Limit, q.Offset, func(limit, offset int, h *http.Header) ([]api.Evaluation, error) {
		page := url.Values{}
		for k, vs := range v {
			page[k] = vs
		}
		if limit > 0 {
			page.Set("limit", strconv.Itoa(limit))
		}
		if offset > 0 {
			page.Set("offset", strconv.Itoa(offset))
		}
		var p api.EvaluationPage
		if err := c.do(ctx, call{method: http.MethodGet, path: path, query: page, header: h}, &p); err != nil {
			return nil, err
		}
		if offset == q.Offset { // the first answer's total and page
			out.EvaluationPage = p
		}
		out.Truncated = out.Truncated || h.Get(api.ScanTruncatedHeader) == "true"
		return p.Evaluations, nil
	})
	if err != nil {
		return EvaluationList{}, err
	}
	out.Evaluations = evs
	if q.Limit > 0 {
		out.Limit = q.Limit
	}
	return out, nil
}

// JudgePerformance reads a judge's agreement with people over [start, end] (zero: the server's
// default window, the last 30 days).
func (c *Client) JudgePerformance(ctx context.Context, judgeID string, start, end time.Time) (api.JudgePerformance, error) {
	path, err := c.projectPath("/judges/%s/performance", url.PathEscape(judgeID))
	if err != nil {
		return api.JudgePerformance{}, err
	}
	v := url.Values{}
	if !start.IsZero() {
		v.Set("start_date", start.UTC().Format(time.RFC3339Nano))
	}
	if !end.IsZero() {
		v.Set("end_date", end.UTC().Format(time.RFC3339Nano))
	}
	var out api.JudgePerformance
	err = c.do(ctx, call{method: http.MethodGet, path: path, query: v}, &out)
	return out, err
}

// BackfillJudge asks for the judge's verdicts on its count most recent spans.
func (c *Client) BackfillJudge(ctx context.Context, judgeID string, count int) (api.Backfill, error) {
	path, err := c.projectPath("/judges/%s/backfill", url.PathEscape(judgeID))
	if err != nil {
		return api.Backfill{}, err
	}
	var out api.Backfill
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: api.BackfillRequest{Count: &count}}, &out)
	return out, err
}

// JudgeCriteria reads a judge's criteria and scale.
func (c *Client) JudgeCriteria(ctx context.Context, judgeID string) (api.JudgeCriteria, error) {
	path, err := c.projectPath("/judges/%s/criteria", url.PathEscape(judgeID))
	if err != nil {
		return api.JudgeCriteria{}, err
	}
	var out api.JudgeCriteria
	err = c.do(ctx, call{method: http.MethodGet, path: path}, &out)
	return out, err
}

// JudgeVersions lists a judge's template versions, newest first.
func (c *Client) JudgeVersions(ctx context.Context, judgeID string) ([]api.JudgeTemplateVersion, error) {
	path, err := c.projectPath("/judges/%s/versions", url.PathEscape(judgeID))
	if err != nil {
		return nil, err
	}
	_, out, err := whole(ctx, c, path, func(p *api.JudgeTemplateVersions) []api.JudgeTemplateVersion { return p.Versions })
	return out, err
}

// SpanEvaluations reads every judge's evaluation of a span.
func (c *Client) SpanEvaluations(ctx context.Context, spanID string) ([]api.Evaluation, error) {
	path, err := c.projectPath("/spans/%s/evaluations", url.PathEscape(spanID))
	if err != nil {
		return nil, err
	}
	_, out, err := whole(ctx, c, path, func(p *api.SpanEvaluations) []api.Evaluation { return p.Evaluations })
	return out, err
}
