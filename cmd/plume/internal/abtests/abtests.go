// Package abtests holds `plume ab-tests` and `plume signals`: the A/B tests the SDKs' ze.choose
// runs, with their per-variant reports, and the business signals recorded on spans, traces,
// sessions and completions (docs/signals.md).
package abtests

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdABTests returns the `plume ab-tests` command group.
func NewCmdABTests(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ab-tests <command>",
		Short: "List A/B tests and show a test's report: choices and signals per variant, significance against the control",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdList(f), newCmdShow(f))
	return cmd
}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the project's A/B tests by name",
		Example: `  plume ab-tests list --where status=running`,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				tests, err := c.ABTests(ctx)
				if err != nil {
					return err
				}
				return f.IO.PrintList(tests, cmdutil.Cols("name", "status", "duration_days", "started_at", "ends_at"), o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

// row is one line of a report's text output: a variant's signal, or its count of choices.
type row struct {
	Variant string `json:"variant"`
	Choices int64  `json:"choices"`
	Signal  string `json:"signal"`
	N       int64  `json:"n"`
	Mean    string `json:"mean"`
	CI95    string `json:"ci95"`
}

// comparison is one line of a report's comparisons.
type comparison struct {
	Signal      string `json:"signal"`
	Variant     string `json:"variant"`
	Difference  string `json:"difference"`
	P           string `json:"p_value"`
	Significant string `json:"significant"`
}

func newCmdShow(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show <name>",
		Short: "Show an A/B test's report",
		Long: `Show an A/B test's report (GET /projects/{project_id}/ab-tests/{name}): per variant the
entities that got it and, per signal, the mean with its 95% confidence interval; then each
variant against the control (the first variant) with Welch's t-test, at the 0.05 level split
over every comparison (Bonferroni). The horizon is fixed: "significant" is decided only once the
test has completed; until then it reads "after <end>".`,
		Example: `  plume ab-tests show model_test
  plume ab-tests show model_test --output json | jq '.comparisons'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				rep, err := c.ABTest(ctx, args[0])
				if err != nil {
					return err
				}
				if f.IO.JSON() {
					return f.IO.WriteJSON(rep)
				}
				return printReport(f.IO, rep)
			})
		},
	}
}

// printReport writes a report as text: the test, its variants' outcomes, the comparisons.
func printReport(io *cmdutil.IOStreams, rep api.ABReport) error {
	if err := io.PrintItem(rep, cmdutil.Cols("name", "status", "started_at", "ends_at", "test", "alpha")); err != nil {
		return err
	}
	var rows []row
	for _, r := range rep.Results {
		if len(r.Signals) == 0 {
			rows = append(rows, row{Variant: r.Key, Choices: r.Choices})
		}
		for _, s := range r.Signals {
			ci := "-"
			if s.CILow != nil {
				ci = fmt.Sprintf("[%.4g, %.4g]", *s.CILow, *s.CIHigh)
			}
			rows = append(rows, row{Variant: r.Key, Choices: r.Choices, Signal: s.Name, N: s.N, Mean: fmt.Sprintf("%.4g", s.Mean), CI95: ci})
		}
	}
	fmt.Fprintln(io.Out)
	if err := io.PrintList(rows, cmdutil.Cols("variant", "choices", "signal", "n", "mean", "ci95"), &cmdutil.ListOptions{}); err != nil {
		return err
	}
	if len(rep.Comparisons) == 0 {
		return nil
	}
	var cmps []comparison
	for _, x := range rep.Comparisons {
		c := comparison{Signal: x.Signal, Variant: x.Variant + " vs " + x.Control, Difference: fmt.Sprintf("%+.4g", x.Difference), P: "-",
			Significant: "after " + rep.DecisionAt.Format("2006-01-02 15:04Z07:00")}
		if x.PValue != nil {
			c.P = fmt.Sprintf("%.3g", *x.PValue)
		}
		if x.Significant != nil {
			c.Significant = map[bool]string{true: "yes", false: "no"}[*x.Significant]
		}
		cmps = append(cmps, c)
	}
	fmt.Fprintln(io.Out)
	return io.PrintList(cmps, cmdutil.Cols("signal", "variant", "difference", "p_value", "significant"), &cmdutil.ListOptions{})
}

// NewCmdSignals returns the `plume signals` command group.
func NewCmdSignals(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "signals <command>",
		Short: "Read the business signals of a span, trace, session or completion",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdGet(f))
	return cmd
}

func newCmdGet(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:     "get <span|trace|session|completion> <id>",
		Short:   "List an entity's signals by name",
		Example: `  plume signals get trace 0f8fad5b-d9cb-469f-a165-70867728950e`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind := strings.ToLower(args[0])
			return f.WithClient(cmd, &o, false, func(ctx context.Context, c *client.Client) error {
				sigs, err := c.EntitySignals(ctx, kind, args[1])
				if err != nil {
					return err
				}
				return f.IO.PrintList(sigs, cmdutil.Cols("name", "value", "signal_type", "updated_at"), o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}
