package datasetscmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdExperiments returns the `plume experiments` command group.
func NewCmdExperiments(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "experiments <command>",
		Short: "List and read the experiments run on a dataset",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdExperimentList(f), newCmdExperimentShow(f), newCmdExperimentResults(f), newCmdExperimentCompare(f), newCmdExperimentJudge(f))
	return cmd
}

func newCmdExperimentList(f *cmdutil.Factory) *cobra.Command {
	var o client.PageOptions
	var dataset string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List a dataset's experiments, newest first",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				list, err := c.Experiments(ctx, dataset, o)
				if err != nil {
					return err
				}
				if f.IO.JSON() {
					return f.IO.WriteJSON(list)
				}
				return printPage(f, list.Experiments, cmdutil.Cols("id", "name", "version_number", "created_at"), list.NextCursor)
			})
		},
	}
	cmd.Flags().StringVar(&dataset, "dataset", "", "the dataset's `name`")
	_ = cmd.MarkFlagRequired("dataset")
	pageFlags(cmd, &o)
	return cmd
}

func newCmdExperimentShow(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show <experiment-id>",
		Short: "Show an experiment with its runs, evaluators and metrics",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				e, err := c.Experiment(ctx, args[0])
				if err != nil {
					return err
				}
				if err := f.IO.PrintItem(e, cmdutil.Cols("id", "name", "dataset_name", "version_number", "dataset_version_id", "created_at"),
					cmdutil.Cols("runs", "evaluators", "column_metrics", "run_metrics")...); err != nil || f.IO.JSON() || len(e.Aggregates) == 0 {
					return err
				}
				fmt.Fprintln(f.IO.Out)
				return f.IO.PrintList(aggregateLines(e.Aggregates), cmdutil.Cols("run", "evaluator", "measure", "value"), &cmdutil.ListOptions{})
			})
		},
	}
}

func newCmdExperimentResults(f *cmdutil.Factory) *cobra.Command {
	var o client.PageOptions
	var run int
	cmd := &cobra.Command{
		Use:   "results <experiment-id>",
		Short: "List a run's results by row, with their evaluations",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if run < 0 {
				return cmdutil.FlagErrorf("--run must be positive")
			}
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				list, err := c.ExperimentResults(ctx, args[0], run, o)
				if err != nil {
					return err
				}
				if f.IO.JSON() {
					return f.IO.WriteJSON(list)
				}
				return printPage(f, list.Results, cmdutil.Cols("dataset_row_id", "result", "trace_id", "evaluations"), list.NextCursor)
			})
		},
	}
	cmd.Flags().IntVar(&run, "run", 0, "the run `number` (default 1)")
	pageFlags(cmd, &o)
	return cmd
}

func newCmdExperimentCompare(f *cmdutil.Factory) *cobra.Command {
	var o client.PageOptions
	var run int
	cmd := &cobra.Command{
		Use:   "compare <experiment-id> <experiment-id>...",
		Short: "Compare experiments per dataset row and per metric",
		Args:  cobra.RangeArgs(2, api.MaxCompared),
		RunE: func(cmd *cobra.Command, args []string) error {
			if run < 0 {
				return cmdutil.FlagErrorf("--run must be positive")
			}
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				cmp, err := c.CompareExperiments(ctx, args, run, o)
				if err != nil {
					return err
				}
				if f.IO.JSON() {
					return f.IO.WriteJSON(cmp)
				}
				if err := f.IO.PrintList(cmp.Metrics, cmdutil.Cols("name", "kind", "values", "difference"), &cmdutil.ListOptions{}); err != nil {
					return err
				}
				if err := f.IO.PrintList(evaluatorLines(cmp.Evaluators), cmdutil.Cols("evaluator", "measure", "values", "difference"), &cmdutil.ListOptions{}); err != nil {
					return err
				}
				return printPage(f, cmp.Rows, cmdutil.Cols("dataset_row_id", "differs", "results"), cmp.NextCursor)
			})
		},
	}
	cmd.Flags().IntVar(&run, "run", 0, "the run `number` (default 1)")
	pageFlags(cmd, &o)
	return cmd
}

func newCmdExperimentJudge(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "judge <experiment-id> <judge-id>",
		Short: "Have a judge evaluate every result of an experiment, later ones too",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				a, err := c.AttachJudge(ctx, args[0], args[1])
				if err != nil {
					return err
				}
				return f.IO.PrintItem(a, cmdutil.Cols("experiment_id", "judge_id", "evaluator_id", "evaluator_name", "status", "requested_at"))
			})
		},
	}
}

// evaluatorLine is an evaluator's line of the compare table: each experiment's value of the
// measure with what it counts ("0.8 (4/5)" of a pass rate, "5.8 (n=5)" of a mean, "-" for none).
type evaluatorLine struct {
	Evaluator  string   `json:"evaluator"`
	Measure    string   `json:"measure"`
	Values     []string `json:"values"`
	Difference *float64 `json:"difference"`
}

func evaluatorLines(evs []api.ComparedEvaluator) []evaluatorLine {
	out := make([]evaluatorLine, 0, len(evs))
	for _, ev := range evs {
		line := evaluatorLine{Evaluator: ev.Name, Measure: ev.Measure, Difference: ev.Difference}
		for _, a := range ev.Values {
			line.Values = append(line.Values, measureText(a, ev.Measure))
		}
		out = append(out, line)
	}
	return out
}

// measureText is a's value of measure with what it counts: "0.8 (4/5)" of a pass rate,
// "5.8 (n=5)" of a mean, "-" for none.
func measureText(a *api.EvaluatorAggregate, measure string) string {
	v := a.Of(measure)
	switch {
	case v == nil:
		return "-"
	case measure == api.MeasurePassRate:
		return fmt.Sprintf("%.4g (%d/%d)", *v, a.Passed, a.BooleanCount)
	default:
		return fmt.Sprintf("%.4g (n=%d)", *v, a.NumericCount)
	}
}

// aggregateLine is a row evaluator's line of experiments show: its aggregate in one run, a
// pass rate when it has boolean evaluations, else a mean.
type aggregateLine struct {
	Run       int    `json:"run"`
	Evaluator string `json:"evaluator"`
	Measure   string `json:"measure"`
	Value     string `json:"value"`
}

func aggregateLines(aggs []api.RunAggregate) []aggregateLine {
	out := make([]aggregateLine, 0, len(aggs))
	for _, a := range aggs {
		measure := api.MeasureMean
		if a.BooleanCount > 0 {
			measure = api.MeasurePassRate
		}
		out = append(out, aggregateLine{Run: a.RunNumber, Evaluator: a.EvaluatorName, Measure: measure, Value: measureText(&a.EvaluatorAggregate, measure)})
	}
	return out
}
