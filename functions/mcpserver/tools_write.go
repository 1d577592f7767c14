package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// The write tools change the project, so each one is gated: without confirm: true it makes no
// call that changes anything, and its error result says exactly what the call would do (it may
// read, to name the records it would touch and to refuse early what the API would refuse).
// With confirm: true it makes the one REST call of the operation.

// notConfirmed is the refusal of a write tool called without confirm: true; would says what
// the call would do, as "create judge ...".
func notConfirmed(would string) error {
	return fmt.Errorf("not confirmed, nothing changed: would %s; call again with confirm: true", would)
}

// CreateJudgeInput defines a judge (POST /projects/{project_id}/judges).
type CreateJudgeInput struct {
	Name           string          `json:"name" jsonschema:"the judge's name, e.g. concise"`
	Template       string          `json:"template" jsonschema:"the judge prompt: what a completion must do to pass, with {{input}} and {{output}} where the completion's input and output go"`
	EvaluationType string          `json:"evaluation_type,omitempty" jsonschema:"binary (pass or fail, the default) or scored"`
	ScoreMin       *float64        `json:"score_min,omitempty" jsonschema:"a scored judge's lowest score (default 0)"`
	ScoreMax       *float64        `json:"score_max,omitempty" jsonschema:"a scored judge's highest score (default 10)"`
	PassThreshold  *float64        `json:"pass_threshold,omitempty" jsonschema:"the score a scored judge passes at (default min + 0.7 x range)"`
	SampleRate     *float64        `json:"sample_rate,omitempty" jsonschema:"the share of its completions the judge evaluates, 0 to 1 (default 1)"`
	Temperature    *float64        `json:"temperature,omitempty" jsonschema:"the judge model's temperature (default 0)"`
	Model          string          `json:"model,omitempty" jsonschema:"the judge model, e.g. openai/gpt-4o-mini; omit for the deployment's default"`
	TargetPrompt   string          `json:"target_prompt,omitempty" jsonschema:"the slug of the prompt whose completions the judge evaluates"`
	Criteria       []api.Criterion `json:"criteria,omitempty" jsonschema:"aspects the judge scores separately; omit to infer them from the template's headings"`
	Backfill       *int            `json:"backfill,omitempty" jsonschema:"how many recent completions a backfill evaluates"`
	Confirm        bool            `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// LinkJudgeInput names a judge and a prompt.
type LinkJudgeInput struct {
	JudgeID    string `json:"judge_id" jsonschema:"the judge's id (list-judges)"`
	PromptSlug string `json:"prompt_slug" jsonschema:"the prompt's slug, e.g. support-bot"`
	Confirm    bool   `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// JudgeFeedbackInput is a person's calibration feedback on a judge's verdict on a completion.
type JudgeFeedbackInput struct {
	JudgeID          string                           `json:"judge_id" jsonschema:"the judge whose verdict the feedback is about"`
	PromptSlug       string                           `json:"prompt_slug,omitempty" jsonschema:"the completion's prompt; omit to take the one the completion's span is linked to"`
	CompletionID     string                           `json:"completion_id" jsonschema:"the completion's span id"`
	ThumbsUp         *bool                            `json:"thumbs_up" jsonschema:"true when the judge's verdict is right, false when it is wrong"`
	Reason           string                           `json:"reason,omitempty" jsonschema:"why the verdict is right or wrong"`
	ExpectedScore    *float64                         `json:"expected_score,omitempty" jsonschema:"the score the judge should have given (scored judges)"`
	ScoreDirection   string                           `json:"score_direction,omitempty" jsonschema:"too_high or too_low: which way the judge's score is off"`
	CriteriaFeedback map[string]api.CriterionFeedback `json:"criteria_feedback,omitempty" jsonschema:"corrections per criterion key: expected_score and reason"`
	Confirm          bool                             `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// PromptFeedbackInput is a person's feedback on a completion of a prompt.
type PromptFeedbackInput struct {
	PromptSlug     string `json:"prompt_slug" jsonschema:"the prompt's slug"`
	CompletionID   string `json:"completion_id" jsonschema:"the completion's span id"`
	ThumbsUp       *bool  `json:"thumbs_up" jsonschema:"true for a good completion, false for a bad one"`
	Reason         string `json:"reason,omitempty" jsonschema:"why: what the optimizer learns from"`
	ExpectedOutput string `json:"expected_output,omitempty" jsonschema:"the output that was wanted"`
	Confirm        bool   `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// IntentInput is one judge that scores an optimization's candidates.
type IntentInput struct {
	JudgeID      string   `json:"judge_id" jsonschema:"the judge's id"`
	Weight       float64  `json:"weight,omitempty" jsonschema:"its weight in the overall score (default 1)"`
	MinThreshold *float64 `json:"min_threshold,omitempty" jsonschema:"the least mean score (0 to 1) a candidate may have on it"`
}

// BudgetInput bounds what an optimization run spends.
type BudgetInput struct {
	MaxModelCalls int     `json:"max_model_calls,omitempty" jsonschema:"model calls of every kind (default per optimizer type: quick_refine 200, dspy_bootstrap 1000, dspy_gepa 3000)"`
	MaxCostUSD    float64 `json:"max_cost_usd,omitempty" jsonschema:"their cost in USD (default per type: 2, 10, 30)"`
}

// StartPromptOptimizationInput starts an optimization run of a prompt.
type StartPromptOptimizationInput struct {
	PromptSlug    string        `json:"prompt_slug" jsonschema:"the prompt's slug"`
	OptimizerType string        `json:"optimizer_type,omitempty" jsonschema:"auto (the default: picked from the data and budget), quick_refine, dspy_bootstrap or dspy_gepa"`
	Intents       []IntentInput `json:"intents,omitempty" jsonschema:"the judges that score candidates; omit for the prompt's linked judges, each weighted 1"`
	Budget        *BudgetInput  `json:"budget,omitempty" jsonschema:"the run's budget; omit for the type's default"`
	Models        []string      `json:"models,omitempty" jsonschema:"models to simulate the candidate on once the run succeeds (at most 5)"`
	Seed          *int64        `json:"seed,omitempty" jsonschema:"the seed of the train/validation/holdout split; omit for a random one"`
	Dataset       *DatasetInput `json:"dataset,omitempty" jsonschema:"take the examples from a dataset version's rows (the first 200); omit for the prompt's feedback"`
	Confirm       bool          `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// DatasetInput names the dataset version a prompt optimization takes its examples from.
type DatasetInput struct {
	Name                 string   `json:"name,omitempty" jsonschema:"the dataset's name (with version, or alone for the latest version)"`
	Version              int      `json:"version,omitempty" jsonschema:"the version number; omit for the latest"`
	VersionID            string   `json:"version_id,omitempty" jsonschema:"the version's id, instead of name and version"`
	InputColumns         []string `json:"input_columns" jsonschema:"the columns whose values are the prompt's input (several: a JSON object of them); the other columns fill the prompt's variables"`
	ExpectedOutputColumn string   `json:"expected_output_column,omitempty" jsonschema:"the column whose values are the outputs wanted; with it, no judge is needed to score candidates"`
	WithFeedback         bool     `json:"with_feedback,omitempty" jsonschema:"add the prompt's completions that have feedback to the dataset's rows"`
}

// StartJudgeOptimizationInput starts an optimization run of a judge's template.
type StartJudgeOptimizationInput struct {
	JudgeID       string       `json:"judge_id" jsonschema:"the judge's id"`
	OptimizerType string       `json:"optimizer_type,omitempty" jsonschema:"quick_refine, the only type for judges (auto means it too)"`
	Budget        *BudgetInput `json:"budget,omitempty" jsonschema:"the run's budget; omit for the default (200 model calls, 2 USD)"`
	Seed          *int64       `json:"seed,omitempty" jsonschema:"the seed of the split of the calibrations (default 1)"`
	Confirm       bool         `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// CancelRunInput names an optimization run.
type CancelRunInput struct {
	RunID   string `json:"run_id" jsonschema:"the run's id (list-optimization-runs)"`
	Confirm bool   `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// writeTools are the confirm-gated tools that change the project.
func (s *server) writeTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "create-judge", Description: "Create a judge: an LLM that evaluates a prompt's completions (binary pass/fail or scored). " +
			"Requires confirm: true; without it, says what it would create.",
			Annotations: destructive("Create a judge", false)}, createJudge),
		newTool(s, &mcp.Tool{Name: "link-judge-to-prompt", Description: "Link a judge to a prompt: the judge evaluates the prompt's completions and is an intent of its optimizations. " +
			"Requires confirm: true.",
			Annotations: destructive("Link a judge to a prompt", true)},
			func(ctx context.Context, c *client.Client, in LinkJudgeInput) (api.Judge, error) {
				return setLink(ctx, c, in, true)
			}),
		newTool(s, &mcp.Tool{Name: "unlink-judge-from-prompt", Description: "Unlink a judge from a prompt: it stops evaluating the prompt's completions. Requires confirm: true.",
			Annotations: destructive("Unlink a judge from a prompt", true)},
			func(ctx context.Context, c *client.Client, in LinkJudgeInput) (api.Judge, error) {
				return setLink(ctx, c, in, false)
			}),
		newTool(s, &mcp.Tool{Name: "create-judge-feedback", Description: "Calibrate a judge: say whether its verdict on a completion is right, and why " +
			"(for scored judges the expected score or direction). Replaces this key's earlier feedback on the same verdict. Requires confirm: true.",
			Annotations: destructive("Give feedback on a judge's verdict", true)}, createJudgeFeedback),
		newTool(s, &mcp.Tool{Name: "create-prompt-feedback", Description: "Give feedback on a prompt's completion: thumbs up or down, why, and the output wanted. " +
			"Replaces this key's earlier feedback on the completion. Requires confirm: true.",
			Annotations: destructive("Give feedback on a completion", true)}, createPromptFeedback),
		newTool(s, &mcp.Tool{Name: "start-prompt-optimization", Description: "Start an optimization run of a prompt (it spends model calls up to its budget and publishes nothing; " +
			"deploy its candidate with preview-optimization-deploy then deploy-optimization-run). prepare-prompt-optimization proposes the arguments. Requires confirm: true.",
			Annotations: destructive("Start a prompt optimization", false)}, startPromptOptimization),
		newTool(s, &mcp.Tool{Name: "start-judge-optimization", Description: "Start an optimization run of a judge's template from its calibration feedback (quick_refine; publishes nothing). " +
			"prepare-judge-optimization proposes the arguments. Requires confirm: true.",
			Annotations: destructive("Start a judge optimization", false)}, startJudgeOptimization),
		newTool(s, &mcp.Tool{Name: "cancel-optimization-run", Description: "Cancel a queued or running optimization run: it stops before its next model call. Requires confirm: true.",
			Annotations: destructive("Cancel an optimization run", true)}, cancelRun),
	}
}

func createJudge(ctx context.Context, c *client.Client, in CreateJudgeInput) (api.Judge, error) {
	name, tpl := strings.TrimSpace(in.Name), strings.TrimSpace(in.Template)
	switch {
	case name == "":
		return api.Judge{}, errInput("name is required")
	case tpl == "":
		return api.Judge{}, errInput("template is required: the judge prompt")
	case in.EvaluationType != "" && in.EvaluationType != api.EvaluationBinary && in.EvaluationType != api.EvaluationScored:
		return api.Judge{}, errInput("evaluation_type must be binary or scored, not %q", in.EvaluationType)
	}
	if !in.Confirm {
		typ := cmp.Or(in.EvaluationType, api.EvaluationBinary)
		target := "with no target prompt"
		if in.TargetPrompt != "" {
			target = "targeting prompt " + in.TargetPrompt
		}
		what := fmt.Sprintf("create judge %q (%s) %s", in.Name, typ, target)
		if in.SampleRate != nil && *in.SampleRate < 1 {
			what += fmt.Sprintf(", evaluating %g%% of its completions", *in.SampleRate*100)
		}
		return api.Judge{}, notConfirmed(what)
	}
	req := api.JudgeRequest{Name: &in.Name, Template: &in.Template, ScoreMin: in.ScoreMin, ScoreMax: in.ScoreMax,
		PassThreshold: in.PassThreshold, SampleRate: in.SampleRate, Temperature: in.Temperature, Backfill: in.Backfill}
	if in.EvaluationType != "" {
		req.EvaluationType = &in.EvaluationType
	}
	if in.Model != "" {
		req.Model = api.Some(in.Model)
	}
	if in.TargetPrompt != "" {
		req.TargetPrompt = api.Some(in.TargetPrompt)
	}
	if in.Criteria != nil {
		req.Criteria = api.Some(in.Criteria)
	}
	return c.CreateJudge(ctx, req)
}

// setLink links (link true) or unlinks a judge and a prompt.
func setLink(ctx context.Context, c *client.Client, in LinkJudgeInput, link bool) (api.Judge, error) {
	if in.JudgeID == "" || in.PromptSlug == "" {
		return api.Judge{}, errInput("judge_id and prompt_slug are required")
	}
	if in.Confirm {
		return c.LinkJudge(ctx, in.PromptSlug, in.JudgeID, link)
	}
	j, err := c.Judge(ctx, in.JudgeID)
	if err != nil {
		return api.Judge{}, err
	}
	linked := slices.Contains(j.LinkedPrompts, in.PromptSlug)
	switch {
	case link && linked:
		return api.Judge{}, notConfirmed(fmt.Sprintf("link %s to prompt %s, to which it is linked already: nothing would change", judgeName(j), in.PromptSlug))
	case !link && !linked:
		return api.Judge{}, notConfirmed(fmt.Sprintf("unlink %s from prompt %s, to which it is not linked: nothing would change", judgeName(j), in.PromptSlug))
	case !link:
		return api.Judge{}, notConfirmed(fmt.Sprintf("unlink %s from prompt %s: it would stop evaluating the prompt's completions and no longer be an intent of its optimizations", judgeName(j), in.PromptSlug))
	}
	what := fmt.Sprintf("link %s to prompt %s: it would evaluate the prompt's new completions (sample rate %g) and be an intent of its optimizations", judgeName(j), in.PromptSlug, j.SampleRate)
	if _, err := c.PromptVersion(ctx, in.PromptSlug, client.PromptSelector{}); errors.Is(err, client.ErrNotFound) {
		what += fmt.Sprintf(" (prompt %s has no version yet)", in.PromptSlug)
	} else if err != nil {
		return api.Judge{}, err
	}
	return api.Judge{}, notConfirmed(what)
}

func createJudgeFeedback(ctx context.Context, c *client.Client, in JudgeFeedbackInput) (api.Feedback, error) {
	switch {
	case in.JudgeID == "" || in.CompletionID == "":
		return api.Feedback{}, errInput("judge_id and completion_id are required")
	case in.ThumbsUp == nil:
		return api.Feedback{}, errInput("thumbs_up is required: true when the judge's verdict is right, false when it is wrong")
	case in.ScoreDirection != "" && in.ScoreDirection != api.TooHigh && in.ScoreDirection != api.TooLow:
		return api.Feedback{}, errInput("score_direction must be too_high or too_low, not %q", in.ScoreDirection)
	}
	slug := in.PromptSlug
	if slug == "" {
		var err error
		if slug, err = completionPrompt(ctx, c, in.CompletionID); err != nil {
			return api.Feedback{}, err
		}
	}
	req := api.FeedbackRequest{ThumbsUp: in.ThumbsUp, JudgeID: &in.JudgeID, ExpectedScore: in.ExpectedScore, CriteriaFeedback: in.CriteriaFeedback}
	if in.Reason != "" {
		req.Reason = &in.Reason
	}
	if in.ScoreDirection != "" {
		req.ScoreDirection = &in.ScoreDirection
	}
	if in.Confirm {
		return c.SendFeedback(ctx, slug, in.CompletionID, req)
	}
	j, err := c.Judge(ctx, in.JudgeID)
	if err != nil {
		return api.Feedback{}, err
	}
	verdict := "its verdict (it has not evaluated this completion yet)"
	evs, err := c.SpanEvaluations(ctx, in.CompletionID)
	if err != nil && !errors.Is(err, client.ErrNotFound) {
		return api.Feedback{}, err
	}
	for _, e := range evs {
		if e.JudgeID == j.ID {
			verdict = fmt.Sprintf("its verdict %s (%q)", verdictText(e), shorten(e.EvaluationReason, 120))
			break
		}
	}
	agree := "is right"
	if !*in.ThumbsUp {
		agree = "is wrong"
	}
	what := fmt.Sprintf("record for this key's user that %s's %s on completion %s of prompt %s %s", judgeName(j), verdict, in.CompletionID, slug, agree)
	if in.Reason != "" {
		what += fmt.Sprintf(", because %q", shorten(in.Reason, 200))
	}
	if in.ExpectedScore != nil {
		what += fmt.Sprintf(", expected score %g", *in.ExpectedScore)
	}
	if in.ScoreDirection != "" {
		what += ", score " + strings.ReplaceAll(in.ScoreDirection, "_", " ")
	}
	if len(in.CriteriaFeedback) > 0 {
		what += fmt.Sprintf(", with corrections on %d criteria", len(in.CriteriaFeedback))
	}
	return api.Feedback{}, notConfirmed(what + " (replacing that user's earlier feedback on this verdict)")
}

func createPromptFeedback(ctx context.Context, c *client.Client, in PromptFeedbackInput) (api.Feedback, error) {
	switch {
	case in.PromptSlug == "" || in.CompletionID == "":
		return api.Feedback{}, errInput("prompt_slug and completion_id are required")
	case in.ThumbsUp == nil:
		return api.Feedback{}, errInput("thumbs_up is required: true for a good completion, false for a bad one")
	}
	if in.Confirm {
		req := api.FeedbackRequest{ThumbsUp: in.ThumbsUp}
		if in.Reason != "" {
			req.Reason = &in.Reason
		}
		if in.ExpectedOutput != "" {
			req.ExpectedOutput = &in.ExpectedOutput
		}
		return c.SendFeedback(ctx, in.PromptSlug, in.CompletionID, req)
	}
	if _, err := c.PromptVersion(ctx, in.PromptSlug, client.PromptSelector{}); err != nil {
		return api.Feedback{}, err
	}
	thumbs := "a thumbs up"
	if !*in.ThumbsUp {
		thumbs = "a thumbs down"
	}
	what := fmt.Sprintf("record %s from this key's user on completion %s of prompt %s", thumbs, in.CompletionID, in.PromptSlug)
	if in.Reason != "" {
		what += fmt.Sprintf(", because %q", shorten(in.Reason, 200))
	}
	if in.ExpectedOutput != "" {
		what += fmt.Sprintf(", expected output %q", shorten(in.ExpectedOutput, 200))
	}
	return api.Feedback{}, notConfirmed(what + " (replacing that user's earlier feedback on it)")
}

func startPromptOptimization(ctx context.Context, c *client.Client, in StartPromptOptimizationInput) (api.OptimizationRun, error) {
	if in.PromptSlug == "" {
		return api.OptimizationRun{}, errInput("prompt_slug is required")
	}
	req := api.OptimizationRunRequest{OptimizerType: in.OptimizerType,
		Config: api.OptimizationConfig{Budget: budgetOf(in.Budget), Models: in.Models, Seed: in.Seed}}
	for _, it := range in.Intents {
		req.Config.Intents = append(req.Config.Intents, api.OptimizationIntent{JudgeID: it.JudgeID, Weight: it.Weight, MinThreshold: it.MinThreshold})
	}
	if d := in.Dataset; d != nil {
		req.Config.Dataset = &api.OptimizationDataset{Name: d.Name, Version: d.Version, VersionID: d.VersionID, InputColumns: d.InputColumns,
			ExpectedOutputColumn: d.ExpectedOutputColumn, WithFeedback: d.WithFeedback}
	}
	if in.Confirm {
		return c.StartPromptOptimization(ctx, in.PromptSlug, req)
	}
	base, tag, err := baselineOf(ctx, c, in.PromptSlug)
	if err != nil {
		return api.OptimizationRun{}, err
	}
	byExpected := in.Dataset != nil && in.Dataset.ExpectedOutputColumn != ""
	intents, err := intentNames(ctx, c, in.PromptSlug, in.Intents, byExpected)
	if err != nil {
		return api.OptimizationRun{}, err
	}
	what := fmt.Sprintf("start a %s optimization run of prompt %s (baseline: version %d, %s)%s, scored by %s, with %s; it publishes nothing: "+
		"its candidate is deployed only with preview-optimization-deploy then deploy-optimization-run",
		optimizerLabel(in.OptimizerType), in.PromptSlug, base.Version, tag, datasetText(in.Dataset), intents, budgetText(in.Budget))
	return api.OptimizationRun{}, notConfirmed(what)
}

func startJudgeOptimization(ctx context.Context, c *client.Client, in StartJudgeOptimizationInput) (api.OptimizationRun, error) {
	if in.JudgeID == "" {
		return api.OptimizationRun{}, errInput("judge_id is required")
	}
	if t := in.OptimizerType; t != "" && t != "auto" && t != "quick_refine" {
		return api.OptimizationRun{}, errInput("a judge's template is optimized with quick_refine; %q is for prompts", t)
	}
	req := api.OptimizationRunRequest{OptimizerType: in.OptimizerType, Config: api.OptimizationConfig{Budget: budgetOf(in.Budget), Seed: in.Seed}}
	if in.Confirm {
		return c.StartJudgeOptimization(ctx, in.JudgeID, req)
	}
	j, err := c.Judge(ctx, in.JudgeID)
	if err != nil {
		return api.OptimizationRun{}, err
	}
	calibrated, err := c.Evaluations(ctx, j.ID, client.EvaluationQuery{Limit: 1, WithUserFeedback: new(true)})
	if err != nil {
		return api.OptimizationRun{}, err
	}
	what := fmt.Sprintf("start a quick_refine optimization run of %s's template (version %d) from its %d calibrated evaluations, with %s; "+
		"it publishes nothing: the new template is set only with preview-optimization-deploy then deploy-optimization-run",
		judgeName(j), j.TemplateVersion, calibrated.Total, budgetText(in.Budget))
	return api.OptimizationRun{}, notConfirmed(what)
}

func cancelRun(ctx context.Context, c *client.Client, in CancelRunInput) (api.OptimizationRun, error) {
	if in.RunID == "" {
		return api.OptimizationRun{}, errInput("run_id is required")
	}
	if in.Confirm {
		return c.CancelOptimization(ctx, in.RunID)
	}
	r, err := c.OptimizationRun(ctx, in.RunID)
	if err != nil {
		return api.OptimizationRun{}, err
	}
	if r.Status != api.RunQueued && r.Status != api.RunRunning {
		return api.OptimizationRun{}, fmt.Errorf("conflict: optimization run %s is %s: only a queued or running run can be cancelled", r.ID, r.Status)
	}
	return api.OptimizationRun{}, notConfirmed(fmt.Sprintf("cancel optimization run %s (%s of %s, %s, %d model calls and $%.4f spent so far); a cancelled run cannot be resumed",
		r.ID, cmp.Or(r.OptimizerType, r.Requested), runTarget(r), r.Status, r.Progress.ModelCalls, r.Progress.CostUSD))
}

// completionPrompt is the prompt a completion's span is linked to.
func completionPrompt(ctx context.Context, c *client.Client, spanID string) (string, error) {
	sp, ok, err := spanByID(ctx, c, spanID)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "", fmt.Errorf("not_found: completion %s is no span of this project; give prompt_slug to calibrate on a completion not ingested yet", spanID)
	case sp.PromptLink == nil || cmp.Or(sp.PromptLink.PromptSlug, sp.PromptLink.Task) == "":
		return "", errInput("completion %s is linked to no prompt: give prompt_slug", spanID)
	}
	return cmp.Or(sp.PromptLink.PromptSlug, sp.PromptLink.Task), nil
}

// spanByID reads a span; ok is false when the project has none of that id (span ids are
// UUIDs: another id names no span).
func spanByID(ctx context.Context, c *client.Client, id string) (api.Span, bool, error) {
	if _, err := uuid.Parse(id); err != nil {
		return api.Span{}, false, nil
	}
	spans, err := c.Spans(ctx, api.SpanQuery{ID: id, ListQuery: api.ListQuery{Limit: 1}})
	if err != nil || len(spans) == 0 {
		return api.Span{}, false, err
	}
	return spans[0], true, nil
}

// baselineOf is the version an optimization of slug improves on: what production serves,
// else the latest version, and which of the two it is.
func baselineOf(ctx context.Context, c *client.Client, slug string) (api.PromptVersion, string, error) {
	v, err := c.PromptVersion(ctx, slug, client.PromptSelector{Tag: "production"})
	if err == nil {
		return v, "what production serves", nil
	}
	if !errors.Is(err, client.ErrNotFound) {
		return api.PromptVersion{}, "", err
	}
	v, err = c.LatestPromptVersion(ctx, slug)
	return v, "the latest, as production is not pinned", err
}

// intentNames words the intents of a prompt optimization: the given judges, else the prompt's
// linked ones. Like the API, it refuses unknown judges and a prompt without any.
func intentNames(ctx context.Context, c *client.Client, slug string, intents []IntentInput, byExpected bool) (string, error) {
	var names []string
	if len(intents) == 0 {
		judges, err := c.Judges(ctx)
		if err != nil {
			return "", err
		}
		for _, j := range linkedJudges(judges, slug) {
			names = append(names, judgeName(j))
		}
		switch {
		case len(names) == 0 && byExpected:
			return "the dataset's expected outputs", nil
		case len(names) == 0:
			return "", errInput("prompt %s has no linked judge to score candidates: link one (link-judge-to-prompt), give intents, "+
				"or give the dataset an expected_output_column", slug)
		}
		return "its linked judges " + strings.Join(names, ", "), nil
	}
	for _, it := range intents {
		j, err := c.Judge(ctx, it.JudgeID)
		if err != nil {
			return "", err
		}
		n := judgeName(j)
		if it.Weight != 0 {
			n += fmt.Sprintf(" weight %g", it.Weight)
		}
		if it.MinThreshold != nil {
			n += fmt.Sprintf(" at least %g", *it.MinThreshold)
		}
		names = append(names, n)
	}
	return "the judges " + strings.Join(names, ", "), nil
}

// linkedJudges are the judges linked to prompt slug.
func linkedJudges(judges []api.Judge, slug string) []api.Judge {
	var out []api.Judge
	for _, j := range judges {
		if slices.Contains(j.LinkedPrompts, slug) {
			out = append(out, j)
		}
	}
	return out
}

// datasetText words where a prompt optimization's examples come from, when a dataset says.
func datasetText(d *DatasetInput) string {
	if d == nil {
		return ""
	}
	version := "its latest version"
	switch {
	case d.VersionID != "":
		version = "version " + d.VersionID
	case d.Version > 0:
		version = fmt.Sprintf("version %d", d.Version)
	}
	name := fmt.Sprintf("dataset %q", d.Name)
	if d.Name == "" {
		name = "the dataset"
	}
	what := fmt.Sprintf(" on the first %d rows of %s (%s), input %s", api.MaxOptimizationDatasetRows, name, version, strings.Join(d.InputColumns, ", "))
	if d.ExpectedOutputColumn != "" {
		what += ", expected output " + d.ExpectedOutputColumn
	}
	if d.WithFeedback {
		what += ", and the prompt's feedback"
	}
	return what
}

func budgetOf(b *BudgetInput) *api.OptimizationBudget {
	if b == nil || b.MaxModelCalls == 0 && b.MaxCostUSD == 0 {
		return nil
	}
	return &api.OptimizationBudget{MaxModelCalls: b.MaxModelCalls, MaxCostUSD: b.MaxCostUSD}
}

func budgetText(b *BudgetInput) string {
	switch {
	case b == nil || b.MaxModelCalls == 0 && b.MaxCostUSD == 0:
		return "the type's default budget"
	case b.MaxCostUSD == 0:
		return fmt.Sprintf("a budget of %d model calls (the type's default cost)", b.MaxModelCalls)
	case b.MaxModelCalls == 0:
		return fmt.Sprintf("a budget of $%g (the type's default model calls)", b.MaxCostUSD)
	}
	return fmt.Sprintf("a budget of %d model calls and $%g", b.MaxModelCalls, b.MaxCostUSD)
}

func optimizerLabel(t string) string {
	if t == "" || t == "auto" {
		return "auto (the type picked from the data and budget when it starts)"
	}
	return t
}

// judgeName names a judge for a message.
func judgeName(j api.Judge) string { return fmt.Sprintf("judge %q (%s)", j.Name, j.ID) }

// shorten truncates s to n characters, saying how much it left out.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + fmt.Sprintf("… [truncated: %d more characters]", len(r)-n)
}

// verdictText words an evaluation's verdict: pass or fail, and a scored judge's score.
func verdictText(e api.Evaluation) string {
	v := "fail"
	if e.EvaluationResult {
		v = "pass"
	}
	if e.Score != nil {
		v += fmt.Sprintf(", score %g", *e.Score)
	}
	return v
}

// runTarget names what a run optimizes.
func runTarget(r api.OptimizationRun) string {
	switch {
	case r.PromptSlug != nil:
		return "prompt " + *r.PromptSlug
	case r.JudgeID != nil:
		return "judge " + *r.JudgeID
	}
	return "an unknown target"
}
