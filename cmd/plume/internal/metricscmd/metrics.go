// Package metricscmd holds `plume metrics`: the project's counters per time bucket.
package metricscmd

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// columns are the text output's: one row per bucket, then the window's totals.
var columns = []cmdutil.Column{
	{Header: "START", Path: "start"},
	{Header: "TRACES", Path: "traces"},
	{Header: "ERROR_TRACES", Path: "error_traces"},
	{Header: "SPANS", Path: "spans"},
	{Header: "ERROR_SPANS", Path: "error_spans"},
	{Header: "LLM_CALLS", Path: "llm_calls"},
	{Header: "COST", Path: "cost"},
	{Header: "P50_MS", Path: "latency_ms.p50"},
	{Header: "P95_MS", Path: "latency_ms.p95"},
	{Header: "SPAN_P95_MS", Path: "span_latency_ms.p95"},
}

// NewCmdMetrics returns `plume metrics`.
func NewCmdMetrics(f *cmdutil.Factory) *cobra.Command {
	var (
		q        api.MetricsQuery
		last     string
		from, to string
		bucket   string
		tag      string
	)
	cmd := &cobra.Command{
		Use:   "metrics",
		Short: "Show the project's traces, spans, errors, cost and latency per minute, hour or day",
		Long: `Show GET /projects/{project_id}/metrics: the counters of each bucket of the window, oldest first,
then the window's totals. They are read from rollups the service keeps as spans arrive (a second
or so behind), so any window costs the same whatever the project's size. Latency percentiles are
within 2% of the true ones. With a span filter (one at most) only the span counters are shown;
--output json answers everything, llm calls by model, judge pass rates and feedback included.`,
		Example: `  plume metrics
  plume metrics --last 7d --bucket day
  plume metrics --last 1h --bucket minute
  plume metrics --bucket day --from 2026-11-01T00:00:00Z --to 2026-12-01T00:00:00Z --model gpt-4o-mini
  plume metrics --tag env:prod --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			span, err := parseLast(last)
			if err != nil {
				return err
			}
			if q.To, err = parseTime("--to", to); err != nil {
				return err
			}
			if q.From, err = parseTime("--from", from); err != nil {
				return err
			}
			if span > 0 {
				if from != "" {
					return cmdutil.FlagErrorf("give --last or --from, not both")
				}
				q.From = cmp.Or(q.To, time.Now()).Add(-span)
			}
			q.Bucket = api.MetricsBucketSize(bucket)
			if tag != "" {
				key, value, ok := strings.Cut(tag, ":")
				if !ok || key == "" {
					return cmdutil.FlagErrorf("--tag must be key:value, not %q", tag)
				}
				q.TagKey, q.TagValue = key, value
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				m, err := c.Metrics(ctx, q)
				if err != nil {
					return err
				}
				if f.IO.JSON() {
					return f.IO.WriteJSON(m)
				}
				rows := make([]any, 0, len(m.Buckets)+1)
				for _, b := range m.Buckets {
					rows = append(rows, b)
				}
				rows = append(rows, struct {
					Start string `json:"start"`
					api.MetricsValues
				}{"total", m.Totals})
				return f.IO.PrintList(rows, columns, (&cmdutil.ListOptions{}).Local())
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&last, "last", "", "the window: this `duration` back from --to, such as 90m, 24h or 7d (default: 24h)")
	fl.StringVar(&from, "from", "", "the window's start, RFC 3339 (rounded down to the bucket)")
	fl.StringVar(&to, "to", "", "the window's end, RFC 3339 (rounded up to the bucket; default: now)")
	fl.StringVar(&bucket, "bucket", "", "minute, hour (the default) or day")
	fl.StringVar(&q.SpanKind, "span-kind", "", "only the spans of this `kind`")
	fl.StringVar(&q.SpanName, "span-name", "", "only the spans of this `name`")
	fl.StringVar(&q.Model, "model", "", "only the spans of this `model`")
	fl.StringVar(&q.Prompt, "prompt", "", "only the spans linked to this prompt `slug`")
	fl.StringVar(&tag, "tag", "", "only the spans with this tag, as `key:value`")
	return cmd
}

func parseTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, cmdutil.FlagErrorf("%s must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", flag, s)
	}
	return t, nil
}

// parseLast reads --last: a Go duration (90m, 24h) or a number of days (7d).
func parseLast(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, cmdutil.FlagErrorf("--last must be a duration such as 90m, 24h or 7d, not %q", s)
	}
	return d, nil
}
