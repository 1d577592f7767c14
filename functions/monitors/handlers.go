package monitors

import (
	"net/http"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/monitor"
	"github.com/plumehq/plume/shared/web"
)

// maxBody bounds a monitor definition: a name, a few filters and webhook ids.
const maxBody = 16 << 10

type server struct{ svc *monitor.Service }

// create serves POST /projects/{project_id}/monitors.
func (s *server) create(w http.ResponseWriter, r *http.Request) {
	var req api.CreateMonitorRequest
	if err := web.Decode(w, r, &req, maxBody); err != nil {
		web.Error(w, r, err)
		return
	}
	p, _ := auth.FromContext(r.Context())
	m, err := s.svc.Create(r.Context(), auth.ProjectID(r), p.User.ID, req)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, ToAPI(m))
}

// list serves GET /projects/{project_id}/monitors (at most monitor.MaxPerProject).
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	ms, err := s.svc.List(r.Context(), auth.ProjectID(r))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := api.MonitorList{Monitors: make([]api.Monitor, len(ms))}
	for i, m := range ms {
		out.Monitors[i] = ToAPI(m)
	}
	web.OK(w, out)
}

// get serves GET /projects/{project_id}/monitors/{monitor_id}: the monitor, its state and
// its last state changes.
func (s *server) get(w http.ResponseWriter, r *http.Request) {
	m, err := s.svc.Get(r.Context(), auth.ProjectID(r), r.PathValue("monitor_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, ToAPI(m))
}

// update serves PATCH /projects/{project_id}/monitors/{monitor_id}.
func (s *server) update(w http.ResponseWriter, r *http.Request) {
	var req api.UpdateMonitorRequest
	if err := web.Decode(w, r, &req, maxBody); err != nil {
		web.Error(w, r, err)
		return
	}
	m, err := s.svc.Update(r.Context(), auth.ProjectID(r), r.PathValue("monitor_id"), req)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, ToAPI(m))
}

// delete serves DELETE /projects/{project_id}/monitors/{monitor_id}.
func (s *server) delete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("monitor_id")
	if err := s.svc.Delete(r.Context(), auth.ProjectID(r), id); err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.MonitorDeleted{ID: id, Deleted: true})
}

// ToAPI is m as the API answers it.
func ToAPI(m monitor.Monitor) api.Monitor {
	reminder := monitor.FormatWindow(m.Reminder)
	return api.Monitor{ID: m.ID, ProjectID: m.ProjectID, Name: m.Name, Metric: m.Metric, Filters: m.Filters,
		Window: monitor.FormatWindow(m.Window), Comparison: m.Comparison, Threshold: m.Threshold, ResolveThreshold: m.ResolveThreshold,
		MinSamples: m.MinSamples, Reminder: reminder, Notify: nonNil(m.Notify), Paused: m.Paused, State: m.State, StateSince: m.StateSince,
		Value: m.Value, Samples: m.Samples, History: nonNilHistory(m.History), CreatedAt: m.CreatedAt, CreatedBy: m.CreatedBy, UpdatedAt: m.UpdatedAt}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilHistory(h []api.MonitorStateChange) []api.MonitorStateChange {
	if h == nil {
		return []api.MonitorStateChange{}
	}
	return h
}
