package mcpserver

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// Bounds of list-optimization-runs.
const (
	defaultRunLimit = 20
	maxRunLimit     = 100
)

// ListOptimizationRunsInput names the target of the runs: a prompt or a judge.
type ListOptimizationRunsInput struct {
	PromptSlug string `json:"prompt_slug,omitempty" jsonschema:"the runs of this prompt (give prompt_slug or judge_id, not both)"`
	JudgeID    string `json:"judge_id,omitempty" jsonschema:"the runs of this judge's template (give prompt_slug or judge_id, not both)"`
	Limit      int    `json:"limit,omitempty" jsonschema:"runs per page: 1 to 100, default 20"`
	Offset     int    `json:"offset,omitempty" jsonschema:"runs to skip: next_offset of the previous page"`
}

// ListOptimizationRunsOutput is list-optimization-runs' answer.
type ListOptimizationRunsOutput struct {
	Runs       []RunSummary `json:"runs" jsonschema:"this page of runs, newest first, in summary (get-optimization-run answers a run whole)"`
	Limit      int          `json:"limit" jsonschema:"the page size used"`
	Offset     int          `json:"offset" jsonschema:"the runs skipped"`
	NextOffset *int         `json:"next_offset" jsonschema:"offset of the next page; null when this is the last page"`
}

// RunSummary is an optimization run without its contents: what an agent needs to pick one.
type RunSummary struct {
	ID                string                   `json:"id" jsonschema:"the run's id (run_id of the other tools)"`
	PromptSlug        *string                  `json:"prompt_slug" jsonschema:"the prompt optimized; null for a judge's run"`
	JudgeID           *string                  `json:"judge_id" jsonschema:"the judge whose template is optimized; null for a prompt's run"`
	Status            string                   `json:"status" jsonschema:"queued, running, succeeded, failed or cancelled"`
	OptimizerType     string                   `json:"optimizer_type" jsonschema:"the optimizer that runs (auto resolved)"`
	BaselineVersion   int                      `json:"baseline_version" jsonschema:"the prompt version improved on (0 for a judge's run)"`
	BaselineScore     *float64                 `json:"baseline_score" jsonschema:"the baseline's overall score on the holdout (0 to 1); null before the run reports"`
	CandidateScore    *float64                 `json:"candidate_score" jsonschema:"the candidate's overall score on the holdout (0 to 1); null before the run reports"`
	Recommendation    *string                  `json:"recommendation" jsonschema:"the run's recommendation once it succeeded; null before"`
	Progress          api.OptimizationProgress `json:"progress" jsonschema:"model calls, cost in USD and iterations so far"`
	Error             *string                  `json:"error" jsonschema:"why the run failed; null otherwise"`
	DeployedVersionID *string                  `json:"deployed_version_id" jsonschema:"the version the run's candidate was deployed as; null when not deployed"`
	CreatedAt         time.Time                `json:"created_at" jsonschema:"when the run was started"`
	FinishedAt        *time.Time               `json:"finished_at" jsonschema:"when the run ended; null while it is queued or running"`
}

// GetOptimizationRunInput names a run.
type GetOptimizationRunInput struct {
	RunID string `json:"run_id" jsonschema:"the run's id, as list-optimization-runs answers it"`
}

// GetOptimizationRunOutput is get-optimization-run's answer.
type GetOptimizationRunOutput struct {
	Run      api.OptimizationRun `json:"run" jsonschema:"the run whole: its config, progress, baseline, candidate (content and demonstrations), metrics against the baseline, recommendation, simulations and error"`
	NextStep string              `json:"next_step" jsonschema:"what can be done with the run now, by tool name"`
}

// runTools are the read tools of optimization runs.
func (s *server) runTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "list-optimization-runs",
			Description: "List the optimization runs of a prompt (prompt_slug) or of a judge's template (judge_id), newest first, in summary: " +
				"status, optimizer, baseline and candidate scores, recommendation, cost. Paged: limit up to 100, next_offset.",
			Annotations: readOnly("List optimization runs")},
			listRuns),
		newTool(s, &mcp.Tool{Name: "get-optimization-run",
			Description: "Read an optimization run whole (config, progress, baseline, candidate, metrics, recommendation, simulations, error) " +
				"and the next step it allows.",
			Annotations: readOnly("Get an optimization run")},
			withEmptyMaps(func(ctx context.Context, c *client.Client, in GetOptimizationRunInput) (GetOptimizationRunOutput, error) {
				if err := requireID("run_id", in.RunID, "list-optimization-runs"); err != nil {
					return GetOptimizationRunOutput{}, err
				}
				run, err := c.OptimizationRun(ctx, in.RunID)
				if err != nil {
					return GetOptimizationRunOutput{}, err
				}
				return GetOptimizationRunOutput{Run: run, NextStep: runNextStep(run)}, nil
			})),
	}
}

func listRuns(ctx context.Context, c *client.Client, in ListOptimizationRunsInput) (ListOptimizationRunsOutput, error) {
	if (in.PromptSlug == "") == (in.JudgeID == "") {
		return ListOptimizationRunsOutput{}, errInput("give exactly one of prompt_slug (a prompt's runs) and judge_id (a judge's runs)")
	}
	limit, err := pageSize("limit", in.Limit, defaultRunLimit, maxRunLimit)
	if err != nil {
		return ListOptimizationRunsOutput{}, err
	}
	if in.Offset < 0 {
		return ListOptimizationRunsOutput{}, errInput("offset must be 0 or more, not %d", in.Offset)
	}
	// One more than the page tells whether there is a next page (the API bounds limit at 100).
	fetch := min(limit+1, maxRunLimit)
	var runs []api.OptimizationRun
	if in.PromptSlug != "" {
		runs, err = c.PromptOptimizationRuns(ctx, in.PromptSlug, fetch, in.Offset)
	} else {
		runs, err = c.JudgeOptimizationRuns(ctx, in.JudgeID, fetch, in.Offset)
	}
	if err != nil {
		return ListOptimizationRunsOutput{}, err
	}
	if len(runs) == 0 && in.Offset == 0 {
		// The API lists no runs of a target it does not have: tell a wrong id from no runs.
		if err := targetExists(ctx, c, in); err != nil {
			return ListOptimizationRunsOutput{}, err
		}
	}
	out := ListOptimizationRunsOutput{Runs: make([]RunSummary, 0, len(runs)), Limit: limit, Offset: in.Offset}
	if len(runs) > limit {
		runs, out.NextOffset = runs[:limit], new(in.Offset+limit)
	} else if fetch == limit {
		out.NextOffset = nextPage(in.Offset, limit, len(runs))
	}
	for _, r := range runs {
		out.Runs = append(out.Runs, summarizeRun(r))
	}
	return out, nil
}

// targetExists answers a not-found error when the key's project has no such prompt or judge.
func targetExists(ctx context.Context, c *client.Client, in ListOptimizationRunsInput) error {
	if in.JudgeID != "" {
		_, err := c.Judge(ctx, in.JudgeID)
		return err
	}
	_, err := c.PromptVersion(ctx, in.PromptSlug, client.PromptSelector{})
	if errors.Is(err, client.ErrNotFound) {
		return errNotFound("prompt %q not found", in.PromptSlug)
	}
	return err
}

func summarizeRun(r api.OptimizationRun) RunSummary {
	s := RunSummary{ID: r.ID, PromptSlug: r.PromptSlug, JudgeID: r.JudgeID, Status: r.Status, OptimizerType: r.OptimizerType,
		BaselineVersion: r.Baseline.Version, Recommendation: r.Recommendation, Progress: r.Progress, Error: r.Error,
		DeployedVersionID: r.DeployedVersionID, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt}
	if r.Metrics != nil {
		s.BaselineScore, s.CandidateScore = new(r.Metrics.Baseline.Overall), new(r.Metrics.Candidate.Overall)
	}
	return s
}

// runNextStep tells what a run allows now, by the tools that do it.
func runNextStep(r api.OptimizationRun) string {
	switch r.Status {
	case api.RunQueued, api.RunRunning:
		return "the run is " + r.Status + ": read it again with get-optimization-run later, or stop it with cancel-optimization-run"
	case api.RunSucceeded:
		if r.DeployedVersionID != nil {
			return "the run's candidate is deployed (deployed_version_id)"
		}
		return "review metrics and recommendation; to deploy the candidate, call preview-optimization-deploy, then deploy-optimization-run with its receipt"
	case api.RunFailed:
		return "the run failed (see error); start another with start-prompt-optimization or start-judge-optimization"
	}
	return "the run is over (" + r.Status + "); start another with start-prompt-optimization or start-judge-optimization"
}
