package dashboard

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// The monitors pages: the project's monitors with their states, and one monitor's definition
// and history, with the forms that create, change and delete one. Every read and change goes
// through the REST API in-process (s.api), whose roles apply: member and admin keys manage
// monitors (the only roles that sign in), ingest keys get 403 (docs/monitors.md).

// monitorRoutes registers the monitors pages: /ui/monitors and /ui/monitors/{monitor_id}.
func (s *server) monitorRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/monitors", s.monitors)
	mux.HandleFunc("POST /ui/monitors", s.createMonitor)
	mux.HandleFunc("GET /ui/monitors/{monitor_id}", s.monitor)
	mux.HandleFunc("POST /ui/monitors/{monitor_id}", s.updateMonitor)
	mux.HandleFunc("POST /ui/monitors/{monitor_id}/pause", s.pauseMonitor)
	mux.HandleFunc("GET /ui/monitors/{monitor_id}/delete", s.confirmDeleteMonitor)
	mux.HandleFunc("POST /ui/monitors/{monitor_id}/delete", s.deleteMonitor)
}

// monitorWindows are the windows the form offers; the API takes any from 1m to 7d.
var monitorWindows = []string{"5m", "15m", "30m", "1h", "6h", "1d", "7d"}

// monitorForm is the create and edit form of a monitor, as sent (kept when it is shown again
// with an error). Filter is the one span filter's kind (span_kind, span_name, model, prompt,
// tag, judge_id; "" for none) and FilterValue its value.
type monitorForm struct {
	Name, Metric, Window, Comparison, Threshold, ResolveThreshold, MinSamples, Reminder string
	Filter, FilterValue, Notify                                                         string
	Error                                                                               string
}

// monitorFilterKinds are the filters the form offers, as api.MonitorFilters names them.
var monitorFilterKinds = []string{"span_kind", "span_name", "model", "prompt", "tag", "judge_id"}

// formOf is the edit form of m, filled with its definition.
func formOf(m api.Monitor) monitorForm {
	f := monitorForm{
		Name: m.Name, Metric: m.Metric, Window: m.Window, Comparison: m.Comparison,
		Threshold: strconv.FormatFloat(m.Threshold, 'g', -1, 64), ResolveThreshold: strconv.FormatFloat(m.ResolveThreshold, 'g', -1, 64),
		MinSamples: strconv.FormatInt(m.MinSamples, 10), Reminder: m.Reminder, Notify: strings.Join(m.Notify, ", "),
	}
	for _, kv := range [][2]string{{"span_kind", m.Filters.SpanKind}, {"span_name", m.Filters.SpanName}, {"model", m.Filters.Model},
		{"prompt", m.Filters.Prompt}, {"tag", m.Filters.Tag}, {"judge_id", m.Filters.JudgeID}} {
		if kv[1] != "" {
			f.Filter, f.FilterValue = kv[0], kv[1]
		}
	}
	return f
}

// monitorFormOf reads the monitor form of r.
func monitorFormOf(r *http.Request) monitorForm {
	v := func(k string) string { return strings.TrimSpace(r.PostForm.Get(k)) }
	return monitorForm{
		Name: v("name"), Metric: v("metric"), Window: v("window"), Comparison: v("comparison"), Threshold: v("threshold"),
		ResolveThreshold: v("resolve_threshold"), MinSamples: v("min_samples"), Reminder: v("reminder"),
		Filter: v("filter"), FilterValue: v("filter_value"), Notify: v("notify"),
	}
}

// definition is the form's monitor as the API takes it: the fields left empty are nil (the
// API's defaults on create). A field that is not a number, or a filter not in the list, is
// an errs.Invalid error with the field's message.
type monitorDefinition struct {
	filters                     api.MonitorFilters
	threshold, resolveThreshold *float64
	minSamples                  *int64
	notify                      []string
}

func (f monitorForm) definition() (monitorDefinition, error) {
	var d monitorDefinition
	if f.Threshold == "" {
		return d, errs.Invalid("Enter the threshold: the value the monitor alerts beyond.")
	}
	v, ok := parseNumber(f.Threshold)
	if !ok {
		return d, errs.Invalid("The threshold must be a number.")
	}
	d.threshold = &v
	if f.ResolveThreshold != "" {
		v, ok := parseNumber(f.ResolveThreshold)
		if !ok {
			return d, errs.Invalid("The resolve threshold must be a number.")
		}
		d.resolveThreshold = &v
	}
	if f.MinSamples != "" {
		n, err := strconv.ParseInt(f.MinSamples, 10, 64)
		if err != nil || n < 0 {
			return d, errs.Invalid("The minimum samples must be a whole number, 0 or more.")
		}
		d.minSamples = &n
	}
	switch f.Filter {
	case "":
	case "span_kind":
		d.filters.SpanKind = f.FilterValue
	case "span_name":
		d.filters.SpanName = f.FilterValue
	case "model":
		d.filters.Model = f.FilterValue
	case "prompt":
		d.filters.Prompt = f.FilterValue
	case "tag":
		d.filters.Tag = f.FilterValue
	case "judge_id":
		d.filters.JudgeID = f.FilterValue
	default:
		return d, errs.Invalid("Choose a filter from the list.")
	}
	if f.Filter != "" && f.FilterValue == "" {
		return d, errs.Invalid("Enter the filter's value, or choose no filter.")
	}
	d.notify = []string{}
	for id := range strings.FieldsFuncSeq(f.Notify, func(r rune) bool { return r == ',' || r == ' ' }) {
		d.notify = append(d.notify, id)
	}
	return d, nil
}

type monitorsData struct {
	Monitors []api.Monitor
	FormView monitorFormView
}

// monitorFormView is what the monitor form (templates/monitor-form-fragment.html) reads.
type monitorFormView struct {
	CSRF    string
	Form    monitorForm
	Options monitorOptions
}

// monitorOptions are the choices of the monitor form.
type monitorOptions struct {
	Metrics, Windows, Filters []string
}

var monitorChoices = monitorOptions{Metrics: api.MonitorMetrics, Windows: monitorWindows, Filters: monitorFilterKinds}

// monitors serves GET /ui/monitors: the project's monitors (at most 50, one read) with their
// states, and the create form.
func (s *server) monitors(w http.ResponseWriter, r *http.Request) {
	s.monitorsPage(w, r, http.StatusOK, monitorForm{Metric: api.MonitorErrorRate, Window: "5m", Comparison: api.MonitorGT, Reminder: "1h"})
}

func (s *server) monitorsPage(w http.ResponseWriter, r *http.Request, status int, form monitorForm) {
	c, ctx := s.api(r)
	ms, err := c.Monitors(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, status, "monitors", page{Title: "Monitors", Nav: "monitors", Data: monitorsData{
		Monitors: ms, FormView: monitorFormView{CSRF: sessionOf(r).CSRF, Form: form, Options: monitorChoices},
	}})
}

// createMonitor serves POST /ui/monitors. A refused form is shown again with the API's
// message and the input kept.
func (s *server) createMonitor(w http.ResponseWriter, r *http.Request) {
	form := monitorFormOf(r)
	refuse := func(status int, msg string) {
		form.Error = msg
		s.monitorsPage(w, r, status, form)
	}
	d, err := form.definition()
	if err != nil {
		refuse(http.StatusBadRequest, err.(*errs.Error).Message)
		return
	}
	c, ctx := s.api(r)
	m, err := c.CreateMonitor(ctx, api.CreateMonitorRequest{
		Name: form.Name, Metric: form.Metric, Filters: d.filters, Window: form.Window, Comparison: form.Comparison,
		Threshold: d.threshold, ResolveThreshold: d.resolveThreshold, MinSamples: d.minSamples, Reminder: form.Reminder, Notify: d.notify,
	})
	if status, msg, ok := formError(err); ok {
		refuse(status, msg)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/monitors/"+url.PathEscape(m.ID), http.StatusSeeOther)
}

type monitorData struct {
	Monitor api.Monitor
	// History is the monitor's last changes, newest first.
	History  []api.MonitorStateChange
	FormView monitorFormView
	Saved    bool
}

// monitor serves GET /ui/monitors/{monitor_id}: the monitor's definition, state and history
// (one read), and the edit form.
func (s *server) monitor(w http.ResponseWriter, r *http.Request) {
	s.monitorPage(w, r, http.StatusOK, nil)
}

// monitorPage renders a monitor's page; form, when not nil, is an edit form shown again.
func (s *server) monitorPage(w http.ResponseWriter, r *http.Request, status int, form *monitorForm) {
	id := r.PathValue("monitor_id")
	if err := validID("monitor", id); err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	m, err := c.Monitor(ctx, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := monitorData{Monitor: m, History: slices.Clone(m.History), Saved: r.URL.Query().Get("saved") != "",
		FormView: monitorFormView{CSRF: sessionOf(r).CSRF, Form: formOf(m), Options: monitorChoices}}
	slices.Reverse(d.History)
	if form != nil {
		d.FormView.Form, d.Saved = *form, false
	}
	s.render(w, r, status, "monitor", page{Title: "Monitor " + m.Name, Nav: "monitors", Data: d})
}

// updateMonitor serves POST /ui/monitors/{monitor_id}: the edit form, sent as a PATCH of
// every field (the monitor's state is kept).
func (s *server) updateMonitor(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("monitor_id")
	if err := validID("monitor", id); err != nil {
		s.fail(w, r, err)
		return
	}
	form := monitorFormOf(r)
	refuse := func(status int, msg string) {
		form.Error = msg
		s.monitorPage(w, r, status, &form)
	}
	d, err := form.definition()
	if err != nil {
		refuse(http.StatusBadRequest, err.(*errs.Error).Message)
		return
	}
	minSamples := cmp.Or(d.minSamples, new(int64))
	resolve := cmp.Or(d.resolveThreshold, d.threshold)
	c, ctx := s.api(r)
	_, err = c.UpdateMonitor(ctx, id, api.UpdateMonitorRequest{
		Name: &form.Name, Metric: &form.Metric, Filters: &d.filters, Window: &form.Window, Comparison: &form.Comparison,
		Threshold: d.threshold, ResolveThreshold: resolve, MinSamples: minSamples, Reminder: &form.Reminder, Notify: &d.notify,
	})
	if status, msg, ok := formError(err); ok {
		refuse(status, msg)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/monitors/"+url.PathEscape(id)+"?saved=1", http.StatusSeeOther)
}

// pauseMonitor serves POST /ui/monitors/{monitor_id}/pause: paused=true stops the monitor's
// evaluation (its state kept, nothing raised), paused=false resumes it.
func (s *server) pauseMonitor(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("monitor_id")
	if err := validID("monitor", id); err != nil {
		s.fail(w, r, err)
		return
	}
	paused, err := strconv.ParseBool(r.PostForm.Get("paused"))
	if err != nil {
		s.fail(w, r, errs.Invalid("Choose to pause (paused=true) or resume (paused=false) the monitor."))
		return
	}
	c, ctx := s.api(r)
	if _, err := c.UpdateMonitor(ctx, id, api.UpdateMonitorRequest{Paused: &paused}); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/monitors/"+url.PathEscape(id), http.StatusSeeOther)
}

// confirmDeleteMonitor serves GET /ui/monitors/{monitor_id}/delete: what deleting does.
func (s *server) confirmDeleteMonitor(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("monitor_id")
	if err := validID("monitor", id); err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	m, err := c.Monitor(ctx, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	self := "/ui/monitors/" + url.PathEscape(m.ID)
	d := confirmData{
		Heading: "Delete the monitor " + m.Name,
		What: []string{
			"Watches: " + m.Metric + " over " + m.Window + ", " + m.Comparison + " " + strconv.FormatFloat(m.Threshold, 'g', -1, 64),
			"State: " + m.State,
			"It is evaluated no more. This cannot be undone: create it again to watch the metric again.",
		},
		Action: self + "/delete", Button: "Delete monitor", Cancel: self, Back: m.Name, TestID: "delete-monitor",
	}
	if m.State == api.MonitorAlerting {
		d.Warning = "This monitor is alerting: deleting it raises monitor.resolved (state deleted), so that its webhooks close the alert."
	}
	s.render(w, r, http.StatusOK, "confirm", page{Title: "Delete monitor", Nav: "monitors", Data: d})
}

// deleteMonitor serves POST /ui/monitors/{monitor_id}/delete.
func (s *server) deleteMonitor(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("monitor_id")
	if err := validID("monitor", id); err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	if err := c.DeleteMonitor(ctx, id); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/monitors", http.StatusSeeOther)
}

// stateLabel is a monitor state as the pages write it ("no data" for no_data).
func stateLabel(state string) string {
	return strings.ReplaceAll(state, "_", " ")
}

// filterLabel is a monitor's filter as the pages write it ("model = gpt-4o"), "" for none.
func filterLabel(f api.MonitorFilters) string {
	for _, kv := range [][2]string{{"span kind", f.SpanKind}, {"span name", f.SpanName}, {"model", f.Model},
		{"prompt", f.Prompt}, {"tag", f.Tag}, {"judge", f.JudgeID}} {
		if kv[1] != "" {
			return kv[0] + " = " + kv[1]
		}
	}
	return ""
}
