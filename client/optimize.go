package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/plumehq/plume/api"
)

// StartPromptOptimization starts an optimization run of prompt slug (queued; the worker runs
// it). A start is not idempotent: it is sent once.
func (c *Client) StartPromptOptimization(ctx context.Context, slug string, req api.OptimizationRunRequest) (api.OptimizationRun, error) {
	path, err := c.projectPath("/prompts/%s/optimization-runs", url.PathEscape(slug))
	if err != nil {
		return api.OptimizationRun{}, err
	}
	var out api.OptimizationRun
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: req}, &out)
	return out, err
}

// StartJudgeOptimization starts an optimization run of a judge's template.
func (c *Client) StartJudgeOptimization(ctx context.Context, judgeID string, req api.OptimizationRunRequest) (api.OptimizationRun, error) {
	path, err := c.projectPath("/judges/%s/optimization-runs", url.PathEscape(judgeID))
	if err != nil {
		return api.OptimizationRun{}, err
	}
	var out api.OptimizationRun
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: req}, &out)
	return out, err
}

// PromptOptimizationRuns lists the runs of prompt slug, newest first.
func (c *Client) PromptOptimizationRuns(ctx context.Context, slug string, limit, offset int) ([]api.OptimizationRun, error) {
	path, err := c.projectPath("/prompts/%s/optimization-runs", url.PathEscape(slug))
	if err != nil {
		return nil, err
	}
	return c.optimizationRuns(ctx, path, limit, offset)
}

// JudgeOptimizationRuns lists the runs of a judge's template, newest first.
func (c *Client) JudgeOptimizationRuns(ctx context.Context, judgeID string, limit, offset int) ([]api.OptimizationRun, error) {
	path, err := c.projectPath("/judges/%s/optimization-runs", url.PathEscape(judgeID))
	if err != nil {
		return nil, err
	}
	return c.optimizationRuns(ctx, path, limit, offset)
}

// optimizationRuns reads a page of the run list at path: limit runs unless the list ends (a
// page the server cut by size is filled from its next offset).
func (c *Client) optimizationRuns(ctx context.Context, path string, limit, offset int) ([]api.OptimizationRun, error) {
	return filled(limit, offset, func(limit, offset int, h *http.Header) ([]api.OptimizationRun, error) {
		q := url.Values{}
		if limit > 0 {
			q.Set("limit", strconv.Itoa(limit))
		}
		if offset > 0 {
			q.Set("offset", strconv.Itoa(offset))
		}
		var out api.OptimizationRunList
		err := c.do(ctx, call{method: http.MethodGet, path: path, query: q, header: h}, &out)
		return out.Runs, err
	})
}

// OptimizationRun reads a run.
func (c *Client) OptimizationRun(ctx context.Context, runID string) (api.OptimizationRun, error) {
	path, err := c.projectPath("/optimization-runs/%s", url.PathEscape(runID))
	if err != nil {
		return api.OptimizationRun{}, err
	}
	var out api.OptimizationRun
	err = c.do(ctx, call{method: http.MethodGet, path: path}, &out)
	return out, err
}

// CancelOptimization cancels a queued or running run (ErrConflict for one that is over).
func (c *Client) CancelOptimization(ctx context.Context, runID string) (api.OptimizationRun, error) {
	path, err := c.projectPath("/optimization-runs/%s:cancel", url.PathEscape(runID))
	if err != nil {
		return api.OptimizationRun{}, err
	}
	var out api.OptimizationRun
	err = c.do(ctx, call{method: http.MethodPost, path: path, idempotent: true}, &out)
	return out, err
}

// PreviewDeploy reads what deploying a succeeded run would change, and the receipt (valid 10
// minutes) that Deploy needs. It changes nothing.
func (c *Client) PreviewDeploy(ctx context.Context, runID string) (api.DeployPreview, error) {
	path, err := c.projectPath("/optimization-runs/%s:preview-deploy", url.PathEscape(runID))
	if err != nil {
		return api.DeployPreview{}, err
	}
	var out api.DeployPreview
	err = c.do(ctx, call{method: http.MethodPost, path: path}, &out)
	return out, err
}

// Deploy publishes a run's candidate as receipt allows (ErrConflict when anything moved since
// the preview). Deploying again with the same receipt changes nothing, so it is retried.
func (c *Client) Deploy(ctx context.Context, runID, receipt string) (api.DeployResult, error) {
	path, err := c.projectPath("/optimization-runs/%s:deploy", url.PathEscape(runID))
	if err != nil {
		return api.DeployResult{}, err
	}
	var out api.DeployResult
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: api.DeployRequest{Receipt: receipt, Confirm: true}, idempotent: true}, &out)
	return out, err
}

// PromptIssues reads what goes wrong with prompt slug: the thumbs down on its completions and
// the failing evaluations of its linked judges in q's window, grouped by reason.
func (c *Client) PromptIssues(ctx context.Context, slug string, q api.IssueQuery) (api.PromptIssues, error) {
	var out api.PromptIssues
	return out, c.getProposal(ctx, "/prompts/%s/issues", slug, q.Values(), &out)
}

// JudgeIssues reads where a judge goes wrong: the verdicts people's calibrations said were
// wrong, and its failing evaluations in q's window, grouped by reason.
func (c *Client) JudgeIssues(ctx context.Context, judgeID string, q api.IssueQuery) (api.JudgeIssues, error) {
	var out api.JudgeIssues
	return out, c.getProposal(ctx, "/judges/%s/issues", judgeID, q.Values(), &out)
}

// PromptOptimizationPreview tells whether the run q describes would succeed on prompt slug and
// learn, and the request that starts it (StartPromptOptimization). It changes nothing.
func (c *Client) PromptOptimizationPreview(ctx context.Context, slug string, q api.PreviewQuery) (api.PromptOptimizationPreview, error) {
	var out api.PromptOptimizationPreview
	return out, c.getProposal(ctx, "/prompts/%s/optimization-preview", slug, q.Values(), &out)
}

// JudgeOptimizationPreview tells whether a run on a judge's calibrations would succeed and
// learn, and the request that starts it (StartJudgeOptimization). It changes nothing.
func (c *Client) JudgeOptimizationPreview(ctx context.Context, judgeID string, q api.PreviewQuery) (api.JudgeOptimizationPreview, error) {
	var out api.JudgeOptimizationPreview
	return out, c.getProposal(ctx, "/judges/%s/optimization-preview", judgeID, q.Values(), &out)
}

// getProposal reads the proposal at the project path format names for target.
func (c *Client) getProposal(ctx context.Context, format, target string, q url.Values, out any) error {
	path, err := c.projectPath(format, url.PathEscape(target))
	if err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodGet, path: path, query: q}, out)
}
