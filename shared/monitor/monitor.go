package monitor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/rollup"
	"github.com/plumehq/plume/shared/webhook"
)

// Limits of a monitor's definition.
const (
	// MaxPerProject bounds a project's monitors: each is evaluated every minute.
	MaxPerProject = 50
	// MaxWindow bounds a window: 168 hourly buckets read per evaluation at most.
	MaxWindow   = 7 * 24 * time.Hour
	maxNameLen  = 128
	maxFilter   = 256
	maxNotify   = webhook.MaxPerProject
	minReminder = 5 * time.Minute
	// HistoryLen is how many state changes and reminders a monitor keeps, the newest.
	HistoryLen = 20
	// SpendWindow is the window of a gateway_spend monitor, the only one: the gateway counts
	// its spend per UTC day.
	SpendWindow = 24 * time.Hour
)

// Defaults of a new monitor.
const (
	DefaultMinSamples = 1
	DefaultReminder   = time.Hour
)

// Monitor is a monitor's definition and state. Seq counts its state changes and reminders:
// the next one is written only if Seq is still what the evaluator read, so a change is
// recorded once. NotifiedAt is when it last alerted or reminded.
type Monitor struct {
	ID, ProjectID, Name, Metric string
	Filters                     api.MonitorFilters
	Window                      time.Duration
	Comparison                  string
	Threshold, ResolveThreshold float64
	MinSamples                  int64
	Reminder                    time.Duration
	Notify                      []string
	// Paused monitors are not evaluated (UpdateMonitorRequest.Paused).
	Paused bool

	State      string
	StateSince time.Time
	Value      *float64
	Samples    int64
	History    []api.MonitorStateChange
	Seq        int64
	NotifiedAt time.Time

	CreatedAt, UpdatedAt time.Time
	CreatedBy            string
}

// Store keeps monitors.
type Store interface {
	// CreateMonitor stores m; errs.Conflict when the project has MaxPerProject already.
	CreateMonitor(ctx context.Context, m Monitor) error
	// Monitors are the project's monitors (one Query).
	Monitors(ctx context.Context, projectID string) ([]Monitor, error)
	// Monitor reads one monitor; errs.NotFound when there is none.
	Monitor(ctx context.Context, projectID, id string) (Monitor, error)
	// UpdateDefinition stores m's definition, keeping its state; errs.NotFound when it was
	// deleted.
	UpdateDefinition(ctx context.Context, m Monitor) error
	// DeleteMonitor deletes a monitor; errs.NotFound when there is none.
	DeleteMonitor(ctx context.Context, projectID, id string) error
	// AllMonitors are every project's monitors, for the evaluator (an index Query, paged).
	AllMonitors(ctx context.Context) ([]Monitor, error)
	// RecordState writes next's state (State, StateSince, Value, Samples, History, Seq,
	// NotifiedAt) over prev's, only if the stored Seq is still prev.Seq; it reports whether it
	// did (false: another run recorded a change first, or the monitor was deleted).
	RecordState(ctx context.Context, prev, next Monitor) (bool, error)
}

// Webhooks lists a project's webhooks, to check a monitor's Notify.
type Webhooks interface {
	Webhooks(ctx context.Context, projectID string) ([]webhook.Webhook, error)
}

// Service manages a project's monitors.
type Service struct {
	store Store
	hooks Webhooks
	now   func() time.Time
}

// NewService returns the monitor service over store; Notify is checked against hooks.
func NewService(store Store, hooks Webhooks, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, hooks: hooks, now: now}
}

// Create stores a monitor of req for the project, in state no_data until its first
// evaluation. errs.Invalid for a bad definition, a webhook of Notify the project does not
// have.
func (s *Service) Create(ctx context.Context, projectID, by string, req api.CreateMonitorRequest) (Monitor, error) {
	now := s.now().UTC().Truncate(time.Microsecond)
	m := Monitor{ID: "mon_" + uuid.NewString(), ProjectID: projectID, Name: req.Name, Metric: req.Metric, Filters: req.Filters,
		Comparison: req.Comparison, MinSamples: DefaultMinSamples, Reminder: DefaultReminder, Notify: req.Notify,
		State: api.MonitorNoData, StateSince: now, CreatedAt: now, UpdatedAt: now, CreatedBy: by}
	var err error
	if m.Window, err = ParseWindow("window", req.Window); err != nil {
		return Monitor{}, err
	}
	if req.Threshold == nil {
		return Monitor{}, errs.Invalid("threshold is required")
	}
	m.Threshold = *req.Threshold
	m.ResolveThreshold = m.Threshold
	if req.ResolveThreshold != nil {
		m.ResolveThreshold = *req.ResolveThreshold
	}
	if req.MinSamples != nil {
		m.MinSamples = *req.MinSamples
	}
	if req.Reminder != "" {
		if m.Reminder, err = parseReminder(req.Reminder); err != nil {
			return Monitor{}, err
		}
	}
	if err := s.check(ctx, &m, true); err != nil {
		return Monitor{}, err
	}
	if err := s.store.CreateMonitor(ctx, m); err != nil {
		return Monitor{}, err
	}
	return m, nil
}

// Update changes the fields of req; the state is kept (the next evaluation reads the new
// definition). errs.NotFound when the monitor does not exist.
func (s *Service) Update(ctx context.Context, projectID, id string, req api.UpdateMonitorRequest) (Monitor, error) {
	m, err := s.store.Monitor(ctx, projectID, id)
	if err != nil {
		return Monitor{}, err
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&m.Name, req.Name)
	set(&m.Metric, req.Metric)
	set(&m.Comparison, req.Comparison)
	if req.Filters != nil {
		m.Filters = *req.Filters
	}
	if req.Window != nil {
		if m.Window, err = ParseWindow("window", *req.Window); err != nil {
			return Monitor{}, err
		}
	}
	if req.Threshold != nil {
		m.Threshold = *req.Threshold
		if req.ResolveThreshold == nil {
			m.ResolveThreshold = m.Threshold
		}
	}
	if req.ResolveThreshold != nil {
		m.ResolveThreshold = *req.ResolveThreshold
	}
	if req.MinSamples != nil {
		m.MinSamples = *req.MinSamples
	}
	if req.Reminder != nil {
		if m.Reminder, err = parseReminder(*req.Reminder); err != nil {
			return Monitor{}, err
		}
	}
	if req.Notify != nil {
		m.Notify = *req.Notify
	}
	if req.Paused != nil {
		m.Paused = *req.Paused
	}
	m.UpdatedAt = s.now().UTC().Truncate(time.Microsecond)
	if err := s.check(ctx, &m, req.Notify != nil); err != nil {
		return Monitor{}, err
	}
	if err := s.store.UpdateDefinition(ctx, m); err != nil {
		return Monitor{}, err
	}
	return m, nil
}

// List returns the project's monitors.
func (s *Service) List(ctx context.Context, projectID string) ([]Monitor, error) {
	return s.store.Monitors(ctx, projectID)
}

// Get returns one monitor with its state and history.
func (s *Service) Get(ctx context.Context, projectID, id string) (Monitor, error) {
	return s.store.Monitor(ctx, projectID, id)
}

// Delete deletes a monitor: it is evaluated no more and raises no event.
func (s *Service) Delete(ctx context.Context, projectID, id string) error {
	return s.store.DeleteMonitor(ctx, projectID, id)
}

// check validates m's definition, and its Notify against the project's webhooks when withHooks
// (a webhook deleted since it was named stays named, and receives nothing).
func (s *Service) check(ctx context.Context, m *Monitor, withHooks bool) error {
	if err := Validate(m); err != nil {
		return err
	}
	if !withHooks || len(m.Notify) == 0 {
		return nil
	}
	hooks, err := s.hooks.Webhooks(ctx, m.ProjectID)
	if err != nil {
		return err
	}
	for _, id := range m.Notify {
		if !slices.ContainsFunc(hooks, func(w webhook.Webhook) bool { return w.ID == id }) {
			return errs.Invalid("notify: the project has no webhook %q", id)
		}
	}
	return nil
}

// Validate checks a monitor's definition (not its webhooks) and sorts its Notify.
func Validate(m *Monitor) error {
	if m.Name == "" || utf8.RuneCountInString(m.Name) > maxNameLen {
		return errs.Invalid("name: 1 to %d characters", maxNameLen)
	}
	if !slices.Contains(api.MonitorMetrics, m.Metric) {
		return errs.Invalid("metric %q: want one of %v", m.Metric, api.MonitorMetrics)
	}
	if err := checkFilters(m.Metric, m.Filters); err != nil {
		return err
	}
	if m.Metric == api.MonitorGatewaySpend {
		if m.Window != SpendWindow {
			return errs.Invalid("window %s: gateway_spend is the spend of the current UTC day, as the gateway's daily cap counts it (per day, not per bucket): its window is 1d", FormatWindow(m.Window))
		}
		// 0 spend is a value, not the absence of samples.
		m.MinSamples = 0
	} else if m.Window < time.Minute || m.Window > MaxWindow {
		return errs.Invalid("window: from 1m to %s", FormatWindow(MaxWindow))
	}
	if g := m.grain(); m.Window%g.Step() != 0 {
		if g == rollup.Hour {
			return errs.Invalid("window %s: a window over an hour, or under a span filter, is read from hourly rollups: give whole hours (2h, 1d)", FormatWindow(m.Window))
		}
		return errs.Invalid("window %s: give whole minutes", FormatWindow(m.Window))
	}
	switch m.Comparison {
	case api.MonitorGT:
		if m.ResolveThreshold > m.Threshold {
			return errs.Invalid("resolve_threshold %g: a gt monitor resolves at or below its threshold %g", m.ResolveThreshold, m.Threshold)
		}
	case api.MonitorLT:
		if m.ResolveThreshold < m.Threshold {
			return errs.Invalid("resolve_threshold %g: an lt monitor resolves at or above its threshold %g", m.ResolveThreshold, m.Threshold)
		}
	default:
		return errs.Invalid("comparison %q: want gt or lt", m.Comparison)
	}
	if m.MinSamples < 0 {
		return errs.Invalid("min_samples: at least 0")
	}
	if m.Reminder != 0 && m.Reminder < minReminder {
		return errs.Invalid("reminder: 0 (never) or at least %s", minReminder)
	}
	m.Notify = slices.Compact(slices.Sorted(slices.Values(m.Notify)))
	if len(m.Notify) > maxNotify {
		return errs.Invalid("notify: at most %d webhooks", maxNotify)
	}
	return nil
}

// checkFilters: at most one span filter, and only for the metrics that are about spans;
// judge_id only for judge_pass_rate.
func checkFilters(metric string, f api.MonitorFilters) error {
	n := 0
	for _, v := range []string{f.SpanKind, f.SpanName, f.Model, f.Prompt, f.Tag} {
		if len(v) > maxFilter {
			return errs.Invalid("filters: a value has at most %d bytes", maxFilter)
		}
		if v != "" {
			n++
		}
	}
	if n > 1 {
		return errs.Invalid("filters: give at most one of span_kind, span_name, model, prompt and tag")
	}
	if f.Tag != "" {
		if k, _, ok := strings.Cut(f.Tag, ":"); !ok || k == "" {
			return errs.Invalid("filters.tag must be key:value, not %q", f.Tag)
		}
	}
	switch metric {
	case api.MonitorJudgePassRate, api.MonitorNegativeFeedbackRate, api.MonitorGatewaySpend:
		if n > 0 {
			return errs.Invalid("filters: %s is kept for the whole project, not per span kind, name, model, prompt or tag", metric)
		}
	}
	if f.JudgeID != "" {
		if metric != api.MonitorJudgePassRate {
			return errs.Invalid("filters.judge_id is for judge_pass_rate only")
		}
		if _, err := uuid.Parse(f.JudgeID); err != nil {
			return errs.Invalid("filters.judge_id %q is not a judge id", f.JudgeID)
		}
	}
	return nil
}

// spanFiltered reports whether f selects spans by an attribute.
func spanFiltered(f api.MonitorFilters) bool {
	return f.SpanKind != "" || f.SpanName != "" || f.Model != "" || f.Prompt != "" || f.Tag != ""
}

// grain is the rollups a monitor reads: minutes for windows up to an hour of the whole
// project (minute items are kept for it only), hours otherwise.
func (m Monitor) grain() rollup.Grain {
	if !spanFiltered(m.Filters) && m.Window <= time.Hour {
		return rollup.Minute
	}
	return rollup.Hour
}

// dim is the rollup dimension a monitor reads.
func (m Monitor) dim() rollup.Dim {
	f := m.Filters
	switch {
	case f.SpanKind != "":
		return rollup.Dim{Filter: rollup.Kind, Value: f.SpanKind}
	case f.SpanName != "":
		return rollup.Dim{Filter: rollup.Name, Value: f.SpanName}
	case f.Model != "":
		return rollup.Dim{Filter: rollup.Model, Value: f.Model}
	case f.Prompt != "":
		return rollup.Dim{Filter: rollup.Prompt, Value: f.Prompt}
	case f.Tag != "":
		k, v, _ := strings.Cut(f.Tag, ":")
		return rollup.Dim{Filter: rollup.Tag, Value: rollup.TagValue(k, v)}
	}
	return rollup.Dim{}
}

// ParseWindow reads a duration of whole minutes, hours or days: 5m, 90m, 1h, 1d (and Go's
// forms, 1h30m). name is the field, for the error.
func ParseWindow(name, s string) (time.Duration, error) {
	if s == "" {
		return 0, errs.Invalid("%s is required (5m, 1h, 1d ...)", name)
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, errs.Invalid("%s %q: want a duration such as 5m, 1h or 1d", name, s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errs.Invalid("%s %q: want a duration such as 5m, 1h or 1d", name, s)
	}
	return d, nil
}

// parseReminder reads a reminder interval: "0" is never.
func parseReminder(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	return ParseWindow("reminder", s)
}

// FormatWindow is d in its largest whole unit: 1d, 2h, 5m (Go's form otherwise).
func FormatWindow(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
