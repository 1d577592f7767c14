package webhook

import (
	"encoding/json"
	"fmt"

	"github.com/plumehq/plume/api"
)

// SlackText is the one line a Slack-format webhook posts for ev.
func SlackText(ev api.Event) string {
	switch ev.Type {
	case api.EventPromptTagMoved:
		var b api.PromptTagMoved
		if json.Unmarshal(ev.Data, &b) == nil {
			from := "nothing"
			if b.FromVersion != nil {
				from = fmt.Sprintf("v%d", *b.FromVersion)
			}
			return fmt.Sprintf("Prompt %s: tag %s moved from %s to v%d by %s", b.Slug, b.Tag, from, b.ToVersion, orSomeone(b.By))
		}
	case api.EventPromptVersionCreated:
		var b api.PromptVersionCreated
		if json.Unmarshal(ev.Data, &b) == nil {
			return fmt.Sprintf("Prompt %s: version %d created by %s", b.Slug, b.Version, orSomeone(b.By))
		}
	case api.EventDatasetVersionCreated:
		var b api.DatasetVersionCreated
		if json.Unmarshal(ev.Data, &b) == nil {
			return fmt.Sprintf("Dataset %s: version %d pushed (%d rows)", b.Dataset, b.Version, b.RowCount)
		}
	case api.EventOptimizationRunFinished, api.EventOptimizationRunDeployed:
		var b api.OptimizationRunEvent
		if json.Unmarshal(ev.Data, &b) == nil {
			return fmt.Sprintf("Optimization run %s: %s (%s)", b.RunID, ev.Type, b.State)
		}
	case api.EventMonitorAlerted, api.EventMonitorResolved:
		var b api.MonitorEvent
		if json.Unmarshal(ev.Data, &b) == nil {
			value := "no value"
			if b.Value != nil {
				value = fmt.Sprintf("%g", *b.Value)
			}
			what := "alerting"
			switch {
			case b.Reminder:
				what = "still alerting"
			case ev.Type == api.EventMonitorResolved:
				what = "resolved (" + b.State + ")"
			}
			return fmt.Sprintf("Monitor %s: %s. %s over %s is %s (%s %g, %d samples)", b.Name, what, b.Metric, b.Window, value, b.Comparison, b.Threshold, b.Samples)
		}
	}
	return fmt.Sprintf("%s in project %s (event %s)", ev.Type, ev.ProjectID, ev.ID)
}

func orSomeone(by string) string {
	if by == "" {
		return "someone"
	}
	return by
}
