package tracing

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// feedbackColumns are a feedback item's fields in a table: verdict, by and why are the
// human's or the judge's, whichever the item is.
var feedbackColumns = []cmdutil.Column{
	{Header: "KIND", Path: "kind"}, {Header: "SPAN", Path: "span_id"}, {Header: "BY", Path: "by"},
	{Header: "VERDICT", Path: "verdict"}, {Header: "WHY", Path: "why"}, {Header: "CREATED", Path: "created_at"},
}

// newCmdFeedback returns `<entity>s feedback`: the unified feedback of a span, trace or session
// (spec §2.5): people's feedback and judges' evaluations, oldest first.
func newCmdFeedback(f *cmdutil.Factory, entity string) *cobra.Command {
	var o cmdutil.ListOptions
	of := "the " + entity
	if entity != api.EntitySpan {
		of = "every span of the " + entity
	}
	cmd := &cobra.Command{
		Use:   "feedback <" + entity + "_id>",
		Short: "List the feedback and judge evaluations of " + of + ", oldest first",
		Long: `List the feedback people gave and the evaluations judges made of ` + of + `
(GET /projects/{project_id}/feedback/` + entity + `/{id}). Text output adds three fields to
each item, which --where, --order and --select can use there (not in json output, which is the
API's items): by (the person or the judge), verdict (thumbs up or down, pass or fail) and why
(the reason given).`,
		Example: `  plume ` + entity + `s feedback 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --where verdict~down`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				u, err := c.UnifiedFeedback(ctx, entity, args[0])
				if err != nil {
					return err
				}
				if f.IO.JSON() {
					return f.IO.PrintList(u.Items, nil, o.Local())
				}
				rows, err := feedbackRows(u.Items)
				if err != nil {
					return err
				}
				return f.IO.PrintList(rows, feedbackColumns, o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

// feedbackRows are items as text output shows them: each item's fields, and by, verdict and
// why.
func feedbackRows(items []api.FeedbackItem) ([]map[string]any, error) {
	rows := make([]map[string]any, 0, len(items))
	for _, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		var row map[string]any
		if err := json.Unmarshal(b, &row); err != nil || row == nil {
			return nil, fmt.Errorf("a feedback item: %s", b)
		}
		switch {
		case it.Human != nil:
			h := it.Human
			row["by"] = cmp.Or(h.CreatedBy.Email, h.CreatedBy.ID)
			row["verdict"] = "thumbs down"
			if h.ThumbsUp {
				row["verdict"] = "thumbs up"
			}
			row["why"] = h.Reason
		case it.Judge != nil:
			e := it.Judge
			row["by"] = cmp.Or(e.JudgeName, e.AutomationID)
			row["verdict"] = "fail"
			if e.EvaluationResult {
				row["verdict"] = "pass"
			}
			if e.Score != nil {
				row["verdict"] = row["verdict"].(string) + " (score " + strconv.FormatFloat(*e.Score, 'f', -1, 64) + ")"
			}
			row["why"] = e.EvaluationReason
		}
		rows = append(rows, row)
	}
	return rows, nil
}
