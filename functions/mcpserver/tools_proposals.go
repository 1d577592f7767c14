package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// The proposal tools read what people and judges said and propose what to do: the
// investigate tools group the failures by reason, the prepare tools tell whether an
// optimization has enough to learn from and write the call that starts it. They change
// nothing. Each is one read of the optimization area's proposals (GET .../issues and
// .../optimization-preview, computed on the server, bounded, their Notes saying where), and
// for a judge one of its performance; the tools add the call to make next.

// NextCall is a call of one of this server's tools, as an agent makes it.
type NextCall struct {
	Tool      string         `json:"tool" jsonschema:"the tool's name"`
	Arguments map[string]any `json:"arguments" jsonschema:"its arguments"`
}

// InvestigatePromptInput selects a prompt and a window.
type InvestigatePromptInput struct {
	PromptSlug  string `json:"prompt_slug" jsonschema:"the prompt's slug"`
	WindowHours int    `json:"window_hours,omitempty" jsonschema:"how far back to look, in hours (default 168, a week; at most 2160)"`
}

// InvestigatePromptOutput is investigate-prompt-issues' answer: GET
// .../prompts/{slug}/issues (api.PromptIssues) and the call to make next.
type InvestigatePromptOutput struct {
	api.PromptIssues
	Next NextCall `json:"next" jsonschema:"a call to make next"`
}

// InvestigateJudgeInput selects a judge and a window.
type InvestigateJudgeInput struct {
	JudgeID     string `json:"judge_id" jsonschema:"the judge's id"`
	WindowHours int    `json:"window_hours,omitempty" jsonschema:"how far back to look at evaluations and performance, in hours (default 168; at most 2160)"`
}

// InvestigateJudgeOutput is investigate-judge-issues' answer: GET
// .../judges/{judge_id}/issues (api.JudgeIssues), the judge's performance in the window, and
// the call to make next.
type InvestigateJudgeOutput struct {
	api.JudgeIssues
	Performance api.JudgePerformance `json:"performance" jsonschema:"the judge's agreement with the calibrations submitted in the window"`
	Next        NextCall             `json:"next" jsonschema:"a call to make next"`
}

// PreparePromptInput is the optimization of a prompt to prepare.
type PreparePromptInput struct {
	PromptSlug    string `json:"prompt_slug" jsonschema:"the prompt's slug"`
	OptimizerType string `json:"optimizer_type,omitempty" jsonschema:"auto (the default), quick_refine, dspy_bootstrap or dspy_gepa"`
	MaxModelCalls int    `json:"max_model_calls,omitempty" jsonschema:"the budget's model calls; omit for the type's default"`
	Seed          *int64 `json:"seed,omitempty" jsonschema:"the split's seed; omit to pin 1"`
}

// PreparePromptOutput is prepare-prompt-optimization's answer: GET
// .../prompts/{slug}/optimization-preview (api.PromptOptimizationPreview) and the call that
// starts the run, for a person to confirm.
type PreparePromptOutput struct {
	api.PromptOptimizationPreview
	Next NextCall `json:"next" jsonschema:"the call that starts the run, for a person to confirm"`
}

// PrepareJudgeInput is the optimization of a judge to prepare.
type PrepareJudgeInput struct {
	JudgeID       string `json:"judge_id" jsonschema:"the judge's id"`
	MaxModelCalls int    `json:"max_model_calls,omitempty" jsonschema:"the budget's model calls; omit for the default (200)"`
	Seed          *int64 `json:"seed,omitempty" jsonschema:"the split's seed (default 1)"`
}

// PrepareJudgeOutput is prepare-judge-optimization's answer: GET
// .../judges/{judge_id}/optimization-preview (api.JudgeOptimizationPreview), the judge's
// agreement with people over the last 30 days, and the call that starts the run.
type PrepareJudgeOutput struct {
	api.JudgeOptimizationPreview
	Agreement api.VerdictAgreement `json:"agreement" jsonschema:"the judge's agreement with people over the last 30 days"`
	Next      NextCall             `json:"next" jsonschema:"the call that starts the run, for a person to confirm"`
}

// proposalTools are the read-only tools that investigate and prepare.
func (s *server) proposalTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "investigate-prompt-issues", Description: "Find what goes wrong with a prompt: recent thumbs down and failing evaluations of its linked judges, " +
			"grouped by reason, with examples. Changes nothing.",
			Annotations: readOnly("Investigate a prompt's issues")}, investigatePrompt),
		newTool(s, &mcp.Tool{Name: "investigate-judge-issues", Description: "Find where a judge goes wrong: the verdicts people's calibration feedback disagreed with, " +
			"its failing evaluations grouped by reason, and its agreement with people. Changes nothing.",
			Annotations: readOnly("Investigate a judge's issues")}, investigateJudge),
		newTool(s, &mcp.Tool{Name: "prepare-prompt-optimization", Description: "Tell whether a prompt has enough feedback and evaluations to optimize, which type auto would pick, " +
			"and the exact start-prompt-optimization call to confirm. Changes nothing.",
			Annotations: readOnly("Prepare a prompt optimization")}, preparePrompt),
		newTool(s, &mcp.Tool{Name: "prepare-judge-optimization", Description: "Tell whether a judge has enough calibration feedback to optimize its template, " +
			"and the exact start-judge-optimization call to confirm. Changes nothing.",
			Annotations: readOnly("Prepare a judge optimization")}, prepareJudge),
	}
}

func investigatePrompt(ctx context.Context, c *client.Client, in InvestigatePromptInput) (InvestigatePromptOutput, error) {
	if in.PromptSlug == "" {
		return InvestigatePromptOutput{}, errInput("prompt_slug is required")
	}
	issues, err := c.PromptIssues(ctx, in.PromptSlug, api.IssueQuery{WindowHours: in.WindowHours})
	return InvestigatePromptOutput{PromptIssues: issues,
		Next: NextCall{Tool: "prepare-prompt-optimization", Arguments: map[string]any{"prompt_slug": in.PromptSlug}}}, err
}

func investigateJudge(ctx context.Context, c *client.Client, in InvestigateJudgeInput) (InvestigateJudgeOutput, error) {
	if in.JudgeID == "" {
		return InvestigateJudgeOutput{}, errInput("judge_id is required")
	}
	issues, err := c.JudgeIssues(ctx, in.JudgeID, api.IssueQuery{WindowHours: in.WindowHours})
	if err != nil {
		return InvestigateJudgeOutput{}, err
	}
	out := InvestigateJudgeOutput{JudgeIssues: issues,
		Next: NextCall{Tool: "prepare-judge-optimization", Arguments: map[string]any{"judge_id": issues.JudgeID}}}
	out.Performance, err = c.JudgePerformance(ctx, issues.JudgeID, issues.Since, time.Time{})
	return out, err
}

func preparePrompt(ctx context.Context, c *client.Client, in PreparePromptInput) (PreparePromptOutput, error) {
	if in.PromptSlug == "" {
		return PreparePromptOutput{}, errInput("prompt_slug is required")
	}
	p, err := c.PromptOptimizationPreview(ctx, in.PromptSlug, api.PreviewQuery{OptimizerType: in.OptimizerType, MaxModelCalls: in.MaxModelCalls, Seed: in.Seed})
	if err != nil {
		return PreparePromptOutput{}, err
	}
	args := startArguments(p.Start)
	args["prompt_slug"], args["optimizer_type"] = in.PromptSlug, p.Start.OptimizerType
	return PreparePromptOutput{PromptOptimizationPreview: p, Next: NextCall{Tool: "start-prompt-optimization", Arguments: args}}, nil
}

func prepareJudge(ctx context.Context, c *client.Client, in PrepareJudgeInput) (PrepareJudgeOutput, error) {
	if in.JudgeID == "" {
		return PrepareJudgeOutput{}, errInput("judge_id is required")
	}
	p, err := c.JudgeOptimizationPreview(ctx, in.JudgeID, api.PreviewQuery{MaxModelCalls: in.MaxModelCalls, Seed: in.Seed})
	if err != nil {
		return PrepareJudgeOutput{}, err
	}
	perf, err := c.JudgePerformance(ctx, p.JudgeID, time.Time{}, time.Time{})
	if err != nil {
		return PrepareJudgeOutput{}, err
	}
	args := startArguments(p.Start)
	args["judge_id"] = p.JudgeID
	return PrepareJudgeOutput{JudgeOptimizationPreview: p, Agreement: perf.Verdict, Next: NextCall{Tool: "start-judge-optimization", Arguments: args}}, nil
}

// startArguments are the start tools' arguments of a preview's start: its seed and budget,
// confirmed.
func startArguments(start api.OptimizationStart) map[string]any {
	args := map[string]any{"confirm": true}
	if start.Config.Seed != nil {
		args["seed"] = *start.Config.Seed
	}
	if b := start.Config.Budget; b != nil {
		args["budget"] = map[string]any{"max_model_calls": b.MaxModelCalls}
	}
	return args
}
