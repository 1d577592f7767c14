package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// Deploying a run's candidate takes two calls, so that what a person confirms is what is
// deployed: preview-optimization-deploy reads what the deploy would change and the API issues
// a receipt (valid 10 minutes) bound to the run's candidate and to the version production
// serves then; deploy-optimization-run, with confirm: true and the receipt, deploys only if
// nothing moved since. The API checks the receipt (docs/optimization.md); the tools say what to
// do when it refuses.

// maxDeployContent bounds each content a preview shows.
const maxDeployContent = 8000

// RunInput names an optimization run.
type RunInput struct {
	RunID string `json:"run_id" jsonschema:"the run's id (list-optimization-runs)"`
}

// PreviewDeployOutput is preview-optimization-deploy's answer.
type PreviewDeployOutput struct {
	RunID     string    `json:"run_id" jsonschema:"the run"`
	Receipt   string    `json:"receipt" jsonschema:"what deploy-optimization-run needs; valid until expires_at, and only while production and the candidate stay as they are now"`
	ExpiresAt time.Time `json:"expires_at" jsonschema:"when the receipt expires (10 minutes after the preview)"`
	Changes   string    `json:"changes" jsonschema:"what the deploy would do, in a sentence"`
	// Summary's contents are truncated to maxDeployContent characters each (Notes says so).
	Summary api.DeploySummary `json:"summary" jsonschema:"what production (or the judge) has now against the candidate, with the holdout scores and the run's recommendation"`
	Notes   []string          `json:"notes" jsonschema:"warnings (a run that does not recommend publishing) and truncations"`
	Next    NextCall          `json:"next" jsonschema:"the call that deploys, once a person has reviewed the change"`
}

// DeployInput deploys a run's candidate with a preview's receipt.
type DeployInput struct {
	RunID   string `json:"run_id" jsonschema:"the run's id"`
	Receipt string `json:"receipt" jsonschema:"the receipt of preview-optimization-deploy for this run"`
	Confirm bool   `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// deployTools are the two steps of a deploy.
func (s *server) deployTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "preview-optimization-deploy", Description: "Show what deploying a succeeded optimization run would change " +
			"(the candidate against what production serves now, the holdout scores) and get the receipt deploy-optimization-run needs (valid 10 minutes). Changes nothing.",
			Annotations: readOnly("Preview an optimization deploy")}, previewDeploy),
		newTool(s, &mcp.Tool{Name: "deploy-optimization-run", Description: "Deploy a run's candidate with the receipt of preview-optimization-deploy: " +
			"a prompt run pins production to a version of the candidate, a judge run sets the judge's template. Refused when anything changed since the preview. Requires confirm: true.",
			Annotations: destructive("Deploy an optimization run", true)}, deployRun),
	}
}

func previewDeploy(ctx context.Context, c *client.Client, in RunInput) (PreviewDeployOutput, error) {
	if in.RunID == "" {
		return PreviewDeployOutput{}, errInput("run_id is required")
	}
	p, err := c.PreviewDeploy(ctx, in.RunID)
	if err != nil {
		return PreviewDeployOutput{}, err
	}
	out := PreviewDeployOutput{RunID: in.RunID, Receipt: p.Receipt, ExpiresAt: p.ExpiresAt, Summary: p.Summary, Notes: []string{},
		Next: NextCall{Tool: "deploy-optimization-run", Arguments: map[string]any{"run_id": in.RunID, "receipt": p.Receipt, "confirm": true}}}
	sm := &out.Summary
	if sm.JudgeID != nil {
		out.Changes = fmt.Sprintf("sets judge %s's template to the candidate (agreement with people on the holdout: %.2f now, %.2f with the candidate)",
			*sm.JudgeID, sm.BaselineScore, sm.CandidateScore)
	} else {
		from := "no version (production is not pinned)"
		if sm.ProductionVersion != nil {
			from = fmt.Sprintf("version %d", *sm.ProductionVersion)
		}
		out.Changes = fmt.Sprintf("pins production of prompt %s from %s to a version of the candidate (made unless one has its content; the baseline's model kept); holdout score %.2f now, %.2f with the candidate",
			sm.PromptSlug, from, sm.BaselineScore, sm.CandidateScore)
	}
	if sm.Recommendation != "publish" {
		out.Notes = append(out.Notes, fmt.Sprintf("the run recommends %s, not publish: get-optimization-run has its reason", sm.Recommendation))
	}
	for _, f := range []struct {
		name string
		s    *string
	}{{"candidate_content", &sm.CandidateContent}, {"production_content", sm.ProductionContent}, {"current_template", sm.CurrentTemplate}} {
		if f.s != nil && len([]rune(*f.s)) > maxDeployContent {
			*f.s = shorten(*f.s, maxDeployContent)
			out.Notes = append(out.Notes, fmt.Sprintf("summary.%s is truncated to %d characters: get-optimization-run and get-prompt have it whole", f.name, maxDeployContent))
		}
	}
	return out, nil
}

func deployRun(ctx context.Context, c *client.Client, in DeployInput) (api.DeployResult, error) {
	switch {
	case in.RunID == "":
		return api.DeployResult{}, errInput("run_id is required")
	case in.Receipt == "":
		return api.DeployResult{}, errInput("receipt is required: call preview-optimization-deploy for run %s, review what it would change, then deploy with its receipt", in.RunID)
	}
	if !in.Confirm {
		r, err := c.OptimizationRun(ctx, in.RunID)
		if err != nil {
			return api.DeployResult{}, err
		}
		if r.Status != "succeeded" {
			return api.DeployResult{}, fmt.Errorf("conflict: optimization run %s is %s: only a run that succeeded can be deployed", r.ID, r.Status)
		}
		what := "pin production of " + runTarget(r) + " to a version of the run's candidate"
		if r.JudgeID != nil {
			what = "set the template of " + runTarget(r) + " to the run's candidate"
		}
		return api.DeployResult{}, notConfirmed(fmt.Sprintf("deploy optimization run %s: %s, if the receipt is still valid and nothing changed since the preview", r.ID, what))
	}
	res, err := c.Deploy(ctx, in.RunID, in.Receipt)
	var e *client.Error
	if errors.As(err, &e) && errors.Is(err, client.ErrConflict) {
		return api.DeployResult{}, fmt.Errorf("conflict: %s. Nothing was deployed: call preview-optimization-deploy again, review what it shows now, and deploy with its new receipt", e.Message)
	}
	return res, err
}
