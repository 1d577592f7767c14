package judges

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// feedbackColumns are a calibration feedback record's fields in text output.
var feedbackColumns = []cmdutil.Column{
	{Header: "Feedback ID", Path: "id"}, {Header: "Judge", Path: "judge_id"}, {Header: "Completion", Path: "completion_id"},
	{Header: "Prompt", Path: "prompt_slug"}, {Header: "Version ID", Path: "prompt_version_id"}, {Header: "Thumbs up", Path: "thumbs_up"},
	{Header: "Reason", Path: "reason"}, {Header: "Expected score", Path: "expected_score"}, {Header: "Score direction", Path: "score_direction"},
	{Header: "Criteria feedback", Path: "criteria_feedback"}, {Header: "Source", Path: "source_type"}, {Header: "Updated", Path: "updated_at"},
}

func newCmdFeedback(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "feedback <command>",
		Short: "Calibrate a judge: say whether its evaluations were right",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	var slug, completion, reason, direction string
	var up, down bool
	var expected float64
	var criteria []string
	create := &cobra.Command{
		Use:   "create <judge_id>",
		Short: "Record whether a judge's evaluation of a completion was right (calibration feedback)",
		Long: `Record a person's verdict on a judge's evaluation of a completion (the llm span's id) of
--prompt: --thumbs-up when the judge was right, --thumbs-down when it was wrong, with the reason,
and for a scored judge the score it should have given (--expected-score) or the direction it
erred in (--score-direction). --criterion key=score:reason corrects one criterion (see
"plume judges criteria"); the score or the reason may be left out (key=7, key=:too lenient).
Feedback is one record per person, completion and judge: sending it again replaces it. It is
what "plume judges performance" measures and "plume optimize judge start" learns from.`,
		Example: `  plume judges feedback create 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --prompt support-bot \
    --completion-id 0192f5d5-1111-7a3b-9f00-5a1c2e3d4b5f --thumbs-down --reason "the answer was wrong" \
    --expected-score 3 --score-direction too_high --criterion accuracy=2:cites the wrong plan`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if up == down {
				return cmdutil.FlagErrorf("pass either --thumbs-up or --thumbs-down")
			}
			judgeID := args[0]
			req := api.FeedbackRequest{ThumbsUp: &up, JudgeID: &judgeID}
			if reason != "" {
				req.Reason = &reason
			}
			if cmd.Flags().Changed("expected-score") {
				req.ExpectedScore = &expected
			}
			switch direction {
			case "":
			case api.TooHigh, api.TooLow:
				req.ScoreDirection = &direction
			default:
				return cmdutil.FlagErrorf("--score-direction must be too_high or too_low, not %q", direction)
			}
			if len(criteria) > 0 {
				var err error
				if req.CriteriaFeedback, err = criteriaFeedback(criteria); err != nil {
					return err
				}
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				fb, err := c.SendFeedback(ctx, slug, completion, req)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(fb, feedbackColumns)
			})
		},
	}
	fl := create.Flags()
	fl.StringVar(&slug, "prompt", "", "the `slug` of the prompt whose completion the judge evaluated")
	fl.StringVar(&completion, "completion-id", "", "the completion: the evaluated llm span's `id`")
	fl.BoolVar(&up, "thumbs-up", false, "the judge's evaluation is right")
	fl.BoolVar(&down, "thumbs-down", false, "the judge's evaluation is wrong")
	fl.StringVar(&reason, "reason", "", "why, in a `sentence`")
	fl.Float64Var(&expected, "expected-score", 0, "the `score` a scored judge should have given")
	fl.StringVar(&direction, "score-direction", "", "how a scored judge erred: too_high or too_low")
	fl.StringArrayVar(&criteria, "criterion", nil, "correct one criterion: `key=score:reason` (score or reason may be empty); repeatable")
	_ = create.MarkFlagRequired("prompt")
	_ = create.MarkFlagRequired("completion-id")
	cmd.AddCommand(create)
	return cmd
}

// criteriaFeedback parses the --criterion key=score:reason flags.
func criteriaFeedback(flags []string) (map[string]api.CriterionFeedback, error) {
	out := make(map[string]api.CriterionFeedback, len(flags))
	for _, s := range flags {
		key, rest, ok := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		score, reason, _ := strings.Cut(rest, ":")
		score, reason = strings.TrimSpace(score), strings.TrimSpace(reason)
		if !ok || key == "" || score == "" && reason == "" {
			return nil, cmdutil.FlagErrorf("--criterion %q: want key=score:reason (the score or the reason may be empty)", s)
		}
		if _, dup := out[key]; dup {
			return nil, cmdutil.FlagErrorf("--criterion %q is given twice", key)
		}
		var cf api.CriterionFeedback
		if score != "" {
			v, err := strconv.ParseFloat(score, 64)
			if err != nil {
				return nil, cmdutil.FlagErrorf("--criterion %q: the score %q is not a number", s, score)
			}
			cf.ExpectedScore = &v
		}
		cf.Reason = reason
		out[key] = cf
	}
	return out, nil
}
