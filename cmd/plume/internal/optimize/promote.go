package optimize

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/errs"
)

// summaryColumns are a deploy preview's fields in text output; the receipt is not shown.
var summaryColumns = []cmdutil.Column{
	{Header: "Run", Path: "summary.run_id"}, {Header: "Prompt", Path: "summary.prompt_slug"}, {Header: "Judge", Path: "summary.judge_id"},
	{Header: "Tag", Path: "summary.tag"}, {Header: "Production version", Path: "summary.production_version"},
	{Header: "Recommendation", Path: "summary.recommendation"}, {Header: "Baseline score", Path: "summary.baseline_score"},
	{Header: "Candidate score", Path: "summary.candidate_score"}, {Header: "Candidate hash", Path: "summary.candidate_hash"},
}

// deployColumns are a deploy's result in text output.
var deployColumns = []cmdutil.Column{
	{Header: "Run", Path: "run_id"}, {Header: "Prompt", Path: "prompt_slug"}, {Header: "Judge", Path: "judge_id"},
	{Header: "Tag", Path: "tag"}, {Header: "Version", Path: "version"}, {Header: "Version ID", Path: "version_id"},
	{Header: "Previous version", Path: "previous_version"},
}

func newCmdPromote(f *cmdutil.Factory, t target) *cobra.Command {
	var yes bool
	what := "point the prompt's production tag at a new version with the candidate's content"
	if t.name == "judge" {
		what = "make the candidate the judge's template (a new template version)"
	}
	cmd := &cobra.Command{
		Use:   "promote <run_id>",
		Short: "Deploy a succeeded run's candidate, after a preview and a confirmation",
		Long: fmt.Sprintf(`Deploy the candidate of a succeeded run: %s.

The command first asks for a preview, which changes nothing, and shows it: what the candidate
replaces (the version production serves, or the judge's template), the candidate, their scores
and the run's recommendation. It then asks "Deploy? [y/N]" on
standard input; any answer but y or yes deploys nothing and exits 2. --yes, and json mode (which
prints the deploy's result only), deploy without asking. The deploy is refused (exit 2) when
anything changed since the preview, when the preview has expired (10 minutes), or for a run that
did not succeed.`, what),
		Example: fmt.Sprintf(`  plume optimize %s promote 0192f5e0-3a4b-7c5d-8e9f-0a1b2c3d4e5f
  plume optimize %s promote 0192f5e0-3a4b-7c5d-8e9f-0a1b2c3d4e5f --yes`, t.name, t.name),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.ProjectClient()
			if err != nil {
				return err
			}
			ctx, cancel := f.Context(cmd.Context())
			preview, err := c.PreviewDeploy(ctx, args[0])
			cancel()
			if err != nil {
				return err
			}
			if !f.IO.JSON() {
				if err := printPreview(f.IO, preview); err != nil {
					return err
				}
			}
			if !yes && !f.IO.JSON() && !confirm(f.IO, preview.Summary) {
				return errs.Invalid("not deployed: the deploy was not confirmed (answer y, or pass --yes)")
			}
			// The deploy has its own --timeout: the wait for an answer is not the server's.
			ctx, cancel = f.Context(cmd.Context())
			defer cancel()
			res, err := c.Deploy(ctx, args[0], preview.Receipt)
			if err != nil {
				return err
			}
			if !f.IO.JSON() {
				fmt.Fprintln(f.IO.Out, "\nDeployed:")
			}
			return f.IO.PrintItem(res, deployColumns)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "deploy without asking")
	return cmd
}

// printPreview writes what a deploy would change: the summary, what production serves now
// (a prompt's production version, none before the first deploy, or a judge's template) and
// the candidate.
func printPreview(s *cmdutil.IOStreams, p api.DeployPreview) error {
	var blocks []cmdutil.Column
	switch {
	case p.Summary.JudgeID != nil:
		blocks = append(blocks, cmdutil.Column{Header: "Current template", Path: "summary.current_template"})
	case p.Summary.ProductionContent != nil:
		blocks = append(blocks, cmdutil.Column{Header: "Production serves", Path: "summary.production_content"})
	}
	blocks = append(blocks, cmdutil.Column{Header: "Candidate", Path: "summary.candidate_content"})
	return s.PrintItem(p, summaryColumns, blocks...)
}

// confirm asks on ErrOut whether to deploy and reads the answer from In: y or yes, in any
// case, is a yes; anything else, or no answer, is a no.
func confirm(s *cmdutil.IOStreams, sum api.DeploySummary) bool {
	question := "Deploy? [y/N] "
	if sum.Recommendation != "publish" {
		question = fmt.Sprintf("The run's recommendation is %s, not publish. Deploy anyway? [y/N] ", sum.Recommendation)
	}
	fmt.Fprintf(s.ErrOut, "\n%s", question)
	answer, err := bufio.NewReader(s.In).ReadString('\n')
	if err != nil && err != io.EOF {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	return false
}
