package prompts

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// splitColumns are a split's fields in text output.
var splitColumns = []cmdutil.Column{
	{Header: "Test", Path: "test"}, {Header: "Prompt", Path: "prompt"}, {Header: "Tag", Path: "tag"}, {Header: "Status", Path: "status"},
	{Header: "Variants", Path: "variants"}, {Header: "Duration days", Path: "duration_days"},
	{Header: "Started", Path: "started_at"}, {Header: "Ends", Path: "ends_at"}, {Header: "Started by", Path: "started_by"},
}

func newCmdSplit(f *cmdutil.Factory) *cobra.Command {
	var variants []string
	var days int
	var name string
	cmd := &cobra.Command{
		Use:   "split <slug> <tag>",
		Short: "Split a tag's traffic between versions: an A/B test of prompt versions",
		Long: `Split a tag's traffic between two or more versions of the prompt, for --duration-days days:
GET /v1/prompts/{slug}?tag=<tag> then serves each version by its weight, sticky per user or
session id, and the split is an A/B test (plume ab-tests show <test>) whose variants are the
versions, the first the control. Weights are taken over their total. The tag must exist (pin it
first); a tag with a running split, or a test name taken, is a conflict. End it early with
plume prompts end-split.`,
		Example: `  plume prompts split support-bot production --variant 3=0.8 --variant 5=0.2 --duration-days 14
  plume prompts split support-bot production --variant 3=1 --variant 5=1 --duration-days 7 --name bot-v5`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := api.PromptSplitRequest{Name: name, DurationDays: float64(days)}
			if len(variants) < 2 {
				return cmdutil.FlagErrorf("--variant must be given at least twice (VERSION=WEIGHT), the control first")
			}
			for _, v := range variants {
				pv, err := splitVariant(v)
				if err != nil {
					return err
				}
				req.Variants = append(req.Variants, pv)
			}
			if days < 1 || days > 3650 {
				return cmdutil.FlagErrorf("--duration-days must be a whole number of days from 1 to 3650")
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				split, err := c.SplitTag(ctx, args[0], args[1], req)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(split, splitColumns)
			})
		},
	}
	cmd.Flags().StringArrayVar(&variants, "variant", nil, "a version and its weight, `VERSION=WEIGHT` (repeat; the first is the control)")
	cmd.Flags().IntVar(&days, "duration-days", 0, "how many `days` the split runs before it completes by itself")
	cmd.Flags().StringVar(&name, "name", "", "the A/B test's `name` (default: <slug>.<tag>.<start time>)")
	_ = cmd.MarkFlagRequired("variant")
	_ = cmd.MarkFlagRequired("duration-days")
	return cmd
}

// splitVariant reads a --variant VERSION=WEIGHT.
func splitVariant(s string) (api.PromptSplitVariant, error) {
	version, weight, ok := strings.Cut(s, "=")
	n, err := strconv.Atoi(version)
	if !ok || err != nil || n < 1 {
		return api.PromptSplitVariant{}, cmdutil.FlagErrorf("--variant %q: want VERSION=WEIGHT, a version number (1 or more) and a weight", s)
	}
	w, err := strconv.ParseFloat(weight, 64)
	if err != nil || w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
		return api.PromptSplitVariant{}, cmdutil.FlagErrorf("--variant %q: the weight must be a number of 0 or more", s)
	}
	return api.PromptSplitVariant{Version: api.WholeNumber(n), Weight: w}, nil
}

func newCmdEndSplit(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "end-split <slug> <tag>",
		Short: "End a tag's split now: the tag serves its own version again",
		Long: `End the running split of a tag at once: the tag serves the version it is pinned to again and
the split's A/B test completes, its report deciding now (ending early gives up the fixed
horizon's guard against peeking: end early to stop a harmful variant). A tag without a running
split is not found.`,
		Example: `  plume prompts end-split support-bot production`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				split, err := c.EndSplit(ctx, args[0], args[1])
				if err != nil {
					return err
				}
				return f.IO.PrintItem(split, splitColumns)
			})
		},
	}
}
