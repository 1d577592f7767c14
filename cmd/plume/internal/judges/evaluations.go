package judges

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

func newCmdCriteria(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "criteria <judge_id>",
		Short: "Show a judge's scale and the criteria it scores separately",
		Long: `Show a judge's evaluation type, scale and criteria (spec §2.10): the aspects it scores one by
one, whose keys calibration feedback names (plume judges feedback create --criterion key=...).`,
		Example: `  plume judges criteria 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				crit, err := c.JudgeCriteria(ctx, args[0])
				if err != nil {
					return err
				}
				return printWithTable(f.IO, crit, []cmdutil.Column{{Header: "Judge", Path: "judge_id"},
					{Header: "Evaluation type", Path: "evaluation_type"}, {Header: "Score min", Path: "score_min"},
					{Header: "Score max", Path: "score_max"}, {Header: "Pass threshold", Path: "pass_threshold"}},
					crit.Criteria, cmdutil.Cols("key", "label", "description"))
			})
		},
	}
}

// printWithTable writes v: in json mode all of it, else its cols and then, when there are
// any, rows as a table of rowCols.
func printWithTable[T any](s *cmdutil.IOStreams, v any, cols []cmdutil.Column, rows []T, rowCols []cmdutil.Column) error {
	if s.JSON() {
		return s.WriteJSON(v)
	}
	if err := s.PrintItem(v, cols); err != nil || len(rows) == 0 {
		return err
	}
	fmt.Fprintln(s.Out)
	return s.PrintList(rows, rowCols, &cmdutil.ListOptions{})
}

// dates are the --start-date and --end-date flags.
type dates struct{ start, end string }

func (d *dates) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&d.start, "start-date", "", "from this `time` on: ISO 8601, a date (2025-06-01, midnight UTC) or a time (2025-06-01T12:00:00Z)")
	cmd.Flags().StringVar(&d.end, "end-date", "", "up to this `time`: ISO 8601, as --start-date")
}

// parse reads the flags; an empty flag is the zero time (the server's default).
func (d dates) parse() (start, end time.Time, err error) {
	if start, err = parseTime("--start-date", d.start); err != nil {
		return
	}
	end, err = parseTime("--end-date", d.end)
	return
}

func parseTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, cmdutil.FlagErrorf("%s %q: want an ISO 8601 date (2025-06-01) or time (2025-06-01T12:00:00Z)", flag, s)
}

func newCmdEvaluations(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	var d dates
	var result string
	var withFeedback, withoutFeedback bool
	cmd := &cobra.Command{
		Use:   "evaluations <judge_id>",
		Short: "List a judge's evaluations, newest first",
		Long: `List a judge's evaluations of spans, newest first, a page at a time (--limit, at most 500,
and --offset); the number of evaluations that match the filters is reported on stderr. Filter
by verdict (--result), by whether someone calibrated the evaluation (--with-feedback,
--without-feedback) and by time.`,
		Example: `  plume judges evaluations 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --result fail --without-feedback --limit 20
  plume judges evaluations 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --start-date 2025-06-01 --output json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Check(); err != nil {
				return err
			}
			q := client.EvaluationQuery{Limit: o.Limit, Offset: o.Offset}
			var err error
			if q.Start, q.End, err = d.parse(); err != nil {
				return err
			}
			switch result {
			case "":
			case "pass", "fail":
				pass := result == "pass"
				q.Result = &pass
			default:
				return cmdutil.FlagErrorf("--result must be pass or fail, not %q", result)
			}
			switch {
			case withFeedback && withoutFeedback:
				return cmdutil.FlagErrorf("--with-feedback and --without-feedback cannot be used together")
			case withFeedback || withoutFeedback:
				q.WithUserFeedback = &withFeedback
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				page, err := c.Evaluations(ctx, args[0], q)
				if err != nil {
					return err
				}
				if err := f.IO.PrintList(page.Evaluations, []cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "SPAN_ID", Path: "span_id"},
					{Header: "PASS", Path: "evaluation_result"}, {Header: "SCORE", Path: "score"}, {Header: "CONFIDENCE", Path: "confidence_score"},
					{Header: "FEEDBACK", Path: "has_user_feedback"}, {Header: "MODEL", Path: "model_used"}, {Header: "CREATED", Path: "created_at"},
					{Header: "REASON", Path: "evaluation_reason"}}, &o); err != nil {
					return err
				}
				if n := len(page.Evaluations); n > 0 {
					f.IO.Infof("evaluations %d to %d of %d", page.Offset+1, page.Offset+n, page.Total)
				}
				if page.Truncated {
					f.IO.Warnf("partial list: the server stopped at its scan bound; the total and pages cover the newest evaluations of the window only: narrow --start-date/--end-date to reach the rest")
				}
				return nil
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 100)
	d.addFlags(cmd)
	cmd.Flags().StringVar(&result, "result", "", "only the evaluations with this `verdict`: pass or fail")
	cmd.Flags().BoolVar(&withFeedback, "with-feedback", false, "only the evaluations someone gave calibration feedback on")
	cmd.Flags().BoolVar(&withoutFeedback, "without-feedback", false, "only the evaluations nobody gave calibration feedback on")
	return cmd
}

func newCmdPerformance(f *cmdutil.Factory) *cobra.Command {
	var d dates
	cmd := &cobra.Command{
		Use:   "performance <judge_id>",
		Short: "Show how far a judge agrees with the people who calibrated it",
		Long: `Show how far a judge's verdicts agree with its calibration feedback (plume judges feedback
create) given in a window, by default the last 30 days: accuracy, Cohen's kappa, true positive
and negative rates and the confusion counts (pass is positive); for a scored judge the mean
absolute error of its scores and how often they were too high or too low; and the same per
criterion. A rate with nothing to compute it from is empty.`,
		Example: `  plume judges performance 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --start-date 2025-06-01`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start, end, err := d.parse()
			if err != nil {
				return err
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				perf, err := c.JudgePerformance(ctx, args[0], start, end)
				if err != nil {
					return err
				}
				return printWithTable(f.IO, perf, []cmdutil.Column{
					{Header: "Judge", Path: "judge_id"}, {Header: "Evaluation type", Path: "evaluation_type"},
					{Header: "From", Path: "start_date"}, {Header: "To", Path: "end_date"}, {Header: "Calibrations", Path: "n"},
					{Header: "Accuracy", Path: "verdict.accuracy"}, {Header: "Kappa", Path: "verdict.kappa"},
					{Header: "True positive rate", Path: "verdict.true_positive_rate"}, {Header: "True negative rate", Path: "verdict.true_negative_rate"},
					{Header: "Both pass", Path: "verdict.counts.true_positive"}, {Header: "Only the judge passes", Path: "verdict.counts.false_positive"},
					{Header: "Only people pass", Path: "verdict.counts.false_negative"}, {Header: "Both fail", Path: "verdict.counts.true_negative"},
					{Header: "Score mean absolute error", Path: "score.mean_absolute_error"},
					{Header: "Scores too high", Path: "score.too_high_share"}, {Header: "Scores too low", Path: "score.too_low_share"},
				}, perf.Criteria, []cmdutil.Column{{Header: "CRITERION", Path: "key"}, {Header: "N", Path: "verdict.n"},
					{Header: "ACCURACY", Path: "verdict.accuracy"}, {Header: "KAPPA", Path: "verdict.kappa"},
					{Header: "SCORE_MAE", Path: "score.mean_absolute_error"}})
			})
		},
	}
	d.addFlags(cmd)
	return cmd
}
