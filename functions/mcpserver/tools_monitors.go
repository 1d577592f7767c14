package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// ListMonitorsInput takes nothing: a project has at most 50 monitors.
type ListMonitorsInput struct{}

// CreateMonitorInput defines a monitor (POST /projects/{project_id}/monitors).
type CreateMonitorInput struct {
	Name             string             `json:"name" jsonschema:"the monitor's name, e.g. checkout errors"`
	Metric           string             `json:"metric" jsonschema:"error_rate, cost, latency_p95, llm_calls, judge_pass_rate, negative_feedback_rate or gateway_spend (window 1d only)"`
	Filters          api.MonitorFilters `json:"filters,omitempty" jsonschema:"at most one span filter (span_kind, span_name, model, prompt, tag key:value), or judge_id for judge_pass_rate"`
	Window           string             `json:"window" jsonschema:"the window: 5m, 1h, 1d ... (whole hours beyond an hour or under a span filter)"`
	Comparison       string             `json:"comparison" jsonschema:"gt (alert above the threshold) or lt (below)"`
	Threshold        *float64           `json:"threshold" jsonschema:"the value beyond which it alerts (a rate is 0 to 1, cost in USD, latency in ms)"`
	ResolveThreshold *float64           `json:"resolve_threshold,omitempty" jsonschema:"the value it must come back within to resolve; default the threshold"`
	MinSamples       *int64             `json:"min_samples,omitempty" jsonschema:"fewer samples than this in the window is no_data (default 1)"`
	Reminder         string             `json:"reminder,omitempty" jsonschema:"how often an alert still on is sent again (default 1h; 0 never)"`
	Notify           []string           `json:"notify,omitempty" jsonschema:"webhook ids of the project that receive its events"`
	Confirm          bool               `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// monitorTools are the project's monitors: one read tool and one confirm-gated write tool.
func (s *server) monitorTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "list-monitors", Annotations: readOnly("List monitors"),
			Description: "List the project's monitors with their states (ok, alerting, no_data), the value each was last judged on, and their last state changes."},
			func(ctx context.Context, c *client.Client, _ ListMonitorsInput) (api.MonitorList, error) {
				ms, err := c.Monitors(ctx)
				return api.MonitorList{Monitors: ms}, err
			}),
		newTool(s, &mcp.Tool{Name: "create-monitor", Description: "Create a monitor: a metric of the project (error rate, cost, p95 latency, llm calls, " +
			"judge pass rate, negative feedback rate, the gateway's spend of the UTC day) over a window, evaluated every minute; it raises monitor.alerted and monitor.resolved to webhooks. " +
			"Requires confirm: true; without it, says what it would create.",
			Annotations: destructive("Create a monitor", false)}, createMonitor),
	}
}

func createMonitor(ctx context.Context, c *client.Client, in CreateMonitorInput) (api.Monitor, error) {
	switch {
	case in.Name == "" || in.Metric == "" || in.Window == "" || in.Comparison == "":
		return api.Monitor{}, errInput("name, metric, window and comparison are required")
	case in.Threshold == nil:
		return api.Monitor{}, errInput("threshold is required")
	case in.Comparison != api.MonitorGT && in.Comparison != api.MonitorLT:
		return api.Monitor{}, errInput("comparison must be gt or lt, not %q", in.Comparison)
	}
	if !in.Confirm {
		op := map[string]string{api.MonitorGT: ">", api.MonitorLT: "<"}[in.Comparison]
		return api.Monitor{}, notConfirmed(fmt.Sprintf("create monitor %q alerting when %s over %s %s %g", in.Name, in.Metric, in.Window, op, *in.Threshold))
	}
	return c.CreateMonitor(ctx, api.CreateMonitorRequest{Name: in.Name, Metric: in.Metric, Filters: in.Filters, Window: in.Window,
		Comparison: in.Comparison, Threshold: in.Threshold, ResolveThreshold: in.ResolveThreshold, MinSamples: in.MinSamples,
		Reminder: in.Reminder, Notify: in.Notify})
}
