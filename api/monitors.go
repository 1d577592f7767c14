package api

import "time"

// Monitor metrics: what a monitor watches, each read from the metrics' rollups
// (docs/monitors.md says how each is computed and which filters it takes).
const (
	// MonitorErrorRate is error_traces / traces; under a span filter, error_spans / spans.
	MonitorErrorRate = "error_rate"
	// MonitorCost is the spans' cost in US dollars over the window.
	MonitorCost = "cost"
	// MonitorLatencyP95 is the traces' 95th percentile duration in milliseconds; under a span
	// filter, the spans'.
	MonitorLatencyP95 = "latency_p95"
	// MonitorLLMCalls is the spans that name a model.
	MonitorLLMCalls = "llm_calls"
	// MonitorJudgePassRate is passed / evaluations, of every judge or of Filters.JudgeID.
	MonitorJudgePassRate = "judge_pass_rate"
	// MonitorNegativeFeedbackRate is thumbs down / (up + down).
	MonitorNegativeFeedbackRate = "negative_feedback_rate"
	// MonitorGatewaySpend is the project's gateway spend in US dollars of the current UTC day
	// so far, as the gateway's daily cap counts it (not from the rollups: from the cap's
	// counters). Its window is 1d; min_samples does not apply (0 spend is a value), but it is
	// no_data while the deployment sets no daily cap, when the gateway counts no spend.
	MonitorGatewaySpend = "gateway_spend"
)

// MonitorMetrics are the metrics a monitor may watch.
var MonitorMetrics = []string{MonitorErrorRate, MonitorCost, MonitorLatencyP95, MonitorLLMCalls,
	MonitorJudgePassRate, MonitorNegativeFeedbackRate, MonitorGatewaySpend}

// Monitor comparisons: a monitor alerts when its value is greater (gt) or less (lt) than its
// threshold.
const (
	MonitorGT = "gt"
	MonitorLT = "lt"
)

// Monitor states.
const (
	// MonitorOK: enough samples, and the value within the threshold (or, after an alert, back
	// within the resolve threshold).
	MonitorOK = "ok"
	// MonitorAlerting: the value is beyond the threshold, and has not come back within the
	// resolve threshold since.
	MonitorAlerting = "alerting"
	// MonitorNoData: fewer samples in the window than min_samples (a new monitor starts here).
	MonitorNoData = "no_data"
	// MonitorStateDeleted is not a monitor's state but the State of the monitor.resolved
	// event raised when a monitor is deleted while alerting: its alert is over, as no
	// evaluation will resolve it.
	MonitorStateDeleted = "deleted"
)

// MonitorFilters narrow a monitor's metric: at most one span filter, as the metrics route's
// (span_kind, span_name, model, prompt, tag key:value), or JudgeID for judge_pass_rate.
type MonitorFilters struct {
	SpanKind string `json:"span_kind,omitempty"`
	SpanName string `json:"span_name,omitempty"`
	Model    string `json:"model,omitempty"`
	Prompt   string `json:"prompt,omitempty"`
	Tag      string `json:"tag,omitempty"`
	JudgeID  string `json:"judge_id,omitempty"`
}

// CreateMonitorRequest is the body of POST /projects/{project_id}/monitors. Window is a
// duration (5m, 1h, 1d); Comparison is gt or lt. ResolveThreshold defaults to Threshold (no
// hysteresis); MinSamples to 1; Reminder, how often an alert still on is sent again, to 1h
// ("0": never). Notify are webhook ids of the project that receive this monitor's events
// whatever they subscribe to.
type CreateMonitorRequest struct {
	Name             string         `json:"name"`
	Metric           string         `json:"metric"`
	Filters          MonitorFilters `json:"filters"`
	Window           string         `json:"window"`
	Comparison       string         `json:"comparison"`
	Threshold        *float64       `json:"threshold"`
	ResolveThreshold *float64       `json:"resolve_threshold,omitempty"`
	MinSamples       *int64         `json:"min_samples,omitempty"`
	Reminder         string         `json:"reminder,omitempty"`
	Notify           []string       `json:"notify,omitempty"`
}

// UpdateMonitorRequest is the body of PATCH /projects/{project_id}/monitors/{monitor_id}:
// the fields given replace the monitor's (Filters as a whole); its state is kept, and the
// next evaluation reads the new definition.
type UpdateMonitorRequest struct {
	Name             *string         `json:"name,omitempty"`
	Metric           *string         `json:"metric,omitempty"`
	Filters          *MonitorFilters `json:"filters,omitempty"`
	Window           *string         `json:"window,omitempty"`
	Comparison       *string         `json:"comparison,omitempty"`
	Threshold        *float64        `json:"threshold,omitempty"`
	ResolveThreshold *float64        `json:"resolve_threshold,omitempty"`
	MinSamples       *int64          `json:"min_samples,omitempty"`
	Reminder         *string         `json:"reminder,omitempty"`
	Notify           *[]string       `json:"notify,omitempty"`
	// Paused, when true, stops the monitor's evaluation (its state and history are kept, no
	// event or reminder is raised); false resumes it.
	Paused *bool `json:"paused,omitempty"`
}

// Monitor is a monitor with its state: State since StateSince, Value and Samples as of that
// change (null before the first evaluation that had data), and History, its last state
// changes and reminders, oldest first. A Paused monitor is not evaluated: its state is the one
// it was paused in.
type Monitor struct {
	ID               string               `json:"id"`
	ProjectID        string               `json:"project_id"`
	Name             string               `json:"name"`
	Metric           string               `json:"metric"`
	Filters          MonitorFilters       `json:"filters"`
	Window           string               `json:"window"`
	Comparison       string               `json:"comparison"`
	Threshold        float64              `json:"threshold"`
	ResolveThreshold float64              `json:"resolve_threshold"`
	MinSamples       int64                `json:"min_samples"`
	Reminder         string               `json:"reminder"`
	Notify           []string             `json:"notify"`
	Paused           bool                 `json:"paused"`
	State            string               `json:"state"`
	StateSince       time.Time            `json:"state_since"`
	Value            *float64             `json:"value"`
	Samples          int64                `json:"samples"`
	History          []MonitorStateChange `json:"history"`
	CreatedAt        time.Time            `json:"created_at"`
	CreatedBy        string               `json:"created_by"`
	UpdatedAt        time.Time            `json:"updated_at"`
}

// MonitorStateChange is one entry of a monitor's history: a change From a state To another at
// At, or a Reminder (From and To alerting) of an alert still on.
type MonitorStateChange struct {
	From     string    `json:"from"`
	To       string    `json:"to"`
	At       time.Time `json:"at"`
	Value    *float64  `json:"value"`
	Samples  int64     `json:"samples"`
	Reminder bool      `json:"reminder,omitempty"`
}

// MonitorList is the answer of GET /projects/{project_id}/monitors.
type MonitorList struct {
	Monitors []Monitor `json:"monitors"`
}

// MonitorDeleted answers DELETE /projects/{project_id}/monitors/{monitor_id}.
type MonitorDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// MonitorEvent is the Data of monitor.alerted (State alerting; Reminder when the alert was
// already on and is sent again) and monitor.resolved (State ok or no_data, From alerting; or
// State MonitorStateDeleted when the monitor was deleted while alerting).
// Notify are the webhooks the monitor names, which receive the event whatever they subscribe
// to.
type MonitorEvent struct {
	MonitorID        string   `json:"monitor_id"`
	Name             string   `json:"name"`
	Metric           string   `json:"metric"`
	Window           string   `json:"window"`
	Comparison       string   `json:"comparison"`
	Threshold        float64  `json:"threshold"`
	ResolveThreshold float64  `json:"resolve_threshold"`
	State            string   `json:"state"`
	From             string   `json:"from"`
	Value            *float64 `json:"value"`
	Samples          int64    `json:"samples"`
	Reminder         bool     `json:"reminder,omitempty"`
	Notify           []string `json:"notify,omitempty"`
}
