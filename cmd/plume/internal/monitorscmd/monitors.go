// Package monitorscmd holds `plume monitors`: the project's monitors managed over the API with
// a member or admin key (GET, POST /projects/{project_id}/monitors, GET, PATCH, DELETE
// .../{monitor_id}). See docs/monitors.md.
package monitorscmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdMonitors returns the `plume monitors` command group.
func NewCmdMonitors(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "monitors <command>",
		Short: "List, show, create, change and delete the project's monitors",
		Long: fmt.Sprintf(`The project's monitors: a metric of the rollups (%v) over a window,
compared with a threshold, evaluated every minute. A monitor is ok, alerting or no_data; each
time it starts or stops alerting it raises monitor.alerted or monitor.resolved, delivered to
webhooks (docs/monitors.md).`, api.MonitorMetrics),
		Args: cmdutil.NoArgs,
		RunE: cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdList(f), newCmdShow(f), newCmdCreate(f), newCmdUpdate(f), newCmdDelete(f))
	return cmd
}

var monitorColumns = []cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "NAME", Path: "name"}, {Header: "METRIC", Path: "metric"},
	{Header: "WINDOW", Path: "window"}, {Header: "CMP", Path: "comparison"}, {Header: "THRESHOLD", Path: "threshold"},
	{Header: "STATE", Path: "state"}, {Header: "SINCE", Path: "state_since"}, {Header: "VALUE", Path: "value"}}

var monitorFields = []cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "Name", Path: "name"}, {Header: "Metric", Path: "metric"},
	{Header: "Filters", Path: "filters"}, {Header: "Window", Path: "window"}, {Header: "Comparison", Path: "comparison"},
	{Header: "Threshold", Path: "threshold"}, {Header: "Resolve threshold", Path: "resolve_threshold"},
	{Header: "Min samples", Path: "min_samples"}, {Header: "Reminder", Path: "reminder"}, {Header: "Notify", Path: "notify"},
	{Header: "State", Path: "state"}, {Header: "Paused", Path: "paused"}, {Header: "Since", Path: "state_since"}, {Header: "Value", Path: "value"},
	{Header: "Samples", Path: "samples"}, {Header: "Created", Path: "created_at"}}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the project's monitors with their states",
		Example: `  plume monitors list --where state=alerting`,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				list, err := c.Monitors(ctx)
				if err != nil {
					return err
				}
				return f.IO.PrintList(list, monitorColumns, o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

// printMonitor writes a monitor and, as text, its history.
func printMonitor(f *cmdutil.Factory, m api.Monitor) error {
	if err := f.IO.PrintItem(m, monitorFields); err != nil || f.IO.JSON() || len(m.History) == 0 {
		return err
	}
	fmt.Fprintln(f.IO.Out, "\nHistory:")
	for _, h := range m.History {
		value := "-"
		if h.Value != nil {
			value = fmt.Sprintf("%g", *h.Value)
		}
		what := h.From + " -> " + h.To
		if h.Reminder {
			what = "reminder (alerting)"
		}
		fmt.Fprintf(f.IO.Out, "  %s  %s  value %s, %d samples\n", h.At.Format("2006-01-02T15:04:05Z07:00"), what, value, h.Samples)
	}
	return nil
}

func newCmdShow(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show <monitor_id>",
		Short: "A monitor, its state and its last state changes",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				m, err := c.Monitor(ctx, args[0])
				if err != nil {
					return err
				}
				return printMonitor(f, m)
			})
		},
	}
}

// definitionFlags are the flags of a monitor's definition, shared by create and update.
type definitionFlags struct {
	name, metric, window, comparison, reminder string
	threshold, resolve                         float64
	minSamples                                 int64
	filters                                    api.MonitorFilters
	notify                                     []string
}

func (d *definitionFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&d.name, "name", "", "the monitor's `name`")
	fl.StringVar(&d.metric, "metric", "", fmt.Sprintf("the `metric`: %v", api.MonitorMetrics))
	fl.StringVar(&d.window, "window", "", "the `window`: 5m, 1h, 1d ...")
	fl.StringVar(&d.comparison, "comparison", "", "gt (alert above the threshold) or lt (below)")
	fl.Float64Var(&d.threshold, "threshold", 0, "the `value` beyond which it alerts")
	fl.Float64Var(&d.resolve, "resolve-threshold", 0, "the `value` it must come back within to resolve (default: the threshold)")
	fl.Int64Var(&d.minSamples, "min-samples", 1, "fewer samples than `n` in the window is no_data")
	fl.StringVar(&d.reminder, "reminder", "", "how often an alert still on is sent again (default 1h; 0: never)")
	fl.StringVar(&d.filters.SpanKind, "span-kind", "", "only the spans of this `kind`")
	fl.StringVar(&d.filters.SpanName, "span-name", "", "only the spans of this `name`")
	fl.StringVar(&d.filters.Model, "model", "", "only the spans of this `model`")
	fl.StringVar(&d.filters.Prompt, "prompt", "", "only the spans of this prompt `slug`")
	fl.StringVar(&d.filters.Tag, "tag", "", "only the spans of this `key:value` tag")
	fl.StringVar(&d.filters.JudgeID, "judge", "", "judge_pass_rate of this judge `id` only")
	fl.StringArrayVar(&d.notify, "notify", nil, "a webhook `id` that receives this monitor's events (repeat)")
}

func filtersGiven(fl *pflag.FlagSet) bool {
	for _, name := range []string{"span-kind", "span-name", "model", "prompt", "tag", "judge"} {
		if fl.Changed(name) {
			return true
		}
	}
	return false
}

func newCmdCreate(f *cmdutil.Factory) *cobra.Command {
	var d definitionFlags
	cmd := &cobra.Command{
		Use:   "create --name N --metric M --window W --comparison gt|lt --threshold X [flags]",
		Short: "Create a monitor (no_data until its first evaluation)",
		Example: `  plume monitors create --name "checkout errors" --metric error_rate --window 5m --comparison gt --threshold 0.05 --resolve-threshold 0.02 --min-samples 20
  plume monitors create --name "gpt-4o spend" --metric cost --model gpt-4o --window 1d --comparison gt --threshold 50 --notify wh_...`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			req := api.CreateMonitorRequest{Name: d.name, Metric: d.metric, Filters: d.filters, Window: d.window, Comparison: d.comparison,
				Threshold: &d.threshold, MinSamples: &d.minSamples, Reminder: d.reminder, Notify: d.notify}
			if fl.Changed("resolve-threshold") {
				req.ResolveThreshold = &d.resolve
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				m, err := c.CreateMonitor(ctx, req)
				if err != nil {
					return err
				}
				return printMonitor(f, m)
			})
		},
	}
	d.add(cmd.Flags())
	for _, name := range []string{"name", "metric", "window", "comparison", "threshold"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func newCmdUpdate(f *cmdutil.Factory) *cobra.Command {
	var d definitionFlags
	var paused bool
	cmd := &cobra.Command{
		Use:   "update <monitor_id> [flags]",
		Short: "Change a monitor: the flags given change, the state is kept",
		Long: `Change a monitor (PATCH): only the flags given change. Any filter flag replaces the
filters as a whole; --notify replaces the list (give --notify "" to name none).
--paused stops its evaluation (state and history kept, no event raised); --paused=false
resumes it.`,
		Example: `  plume monitors update mon_0192... --threshold 0.1 --resolve-threshold 0.05
  plume monitors update mon_0192... --paused`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			var req api.UpdateMonitorRequest
			str := func(name string, v *string) *string {
				if fl.Changed(name) {
					return v
				}
				return nil
			}
			req.Name, req.Metric, req.Window = str("name", &d.name), str("metric", &d.metric), str("window", &d.window)
			req.Comparison, req.Reminder = str("comparison", &d.comparison), str("reminder", &d.reminder)
			if fl.Changed("threshold") {
				req.Threshold = &d.threshold
			}
			if fl.Changed("resolve-threshold") {
				req.ResolveThreshold = &d.resolve
			}
			if fl.Changed("min-samples") {
				req.MinSamples = &d.minSamples
			}
			if filtersGiven(fl) {
				req.Filters = &d.filters
			}
			if fl.Changed("paused") {
				req.Paused = &paused
			}
			if fl.Changed("notify") {
				notify := []string{}
				for _, id := range d.notify {
					if id != "" {
						notify = append(notify, id)
					}
				}
				req.Notify = &notify
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				m, err := c.UpdateMonitor(ctx, args[0], req)
				if err != nil {
					return err
				}
				return printMonitor(f, m)
			})
		},
	}
	d.add(cmd.Flags())
	cmd.Flags().BoolVar(&paused, "paused", false, "pause the monitor's evaluation (--paused=false resumes it)")
	return cmd
}

func newCmdDelete(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "delete <monitor_id>",
		Short: "Delete a monitor: it is evaluated no more",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				if err := c.DeleteMonitor(ctx, args[0]); err != nil {
					return err
				}
				return f.IO.PrintItem(api.MonitorDeleted{ID: args[0], Deleted: true},
					[]cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "Deleted", Path: "deleted"}})
			})
		},
	}
}
