// Package monitors is the monitors area: a project's members define monitors on its metrics
// (error rate, cost, p95 latency, llm calls, judge pass rate, negative feedback rate) and read
// their states and state changes. It holds the area's worker too: MonitorFunction, run every
// minute, evaluates every project's monitors from the rollups (monitor.Evaluator); each state
// change raises monitor.alerted or monitor.resolved through the table's stream
// (functions/webhooks EventsFunction). See docs/monitors.md.
package monitors

import (
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/monitor"
)

// Routes are the API Gateway HTTP API route keys of MonitorsFunction.
var Routes = []string{
	"ANY /projects/{project_id}/monitors",
	"ANY /projects/{project_id}/monitors/{proxy+}",
}

// NewHandler returns the monitors area. Member and admin keys manage monitors; ingest keys
// get 403 (docs/keys.md).
func NewHandler(svc *monitor.Service, authn *auth.Authenticator) http.Handler {
	s := &server{svc: svc}
	mux := auth.NewRouter(authn)
	mux.HandleFunc("POST /projects/{project_id}/monitors", s.create)
	mux.HandleFunc("GET /projects/{project_id}/monitors", s.list)
	mux.HandleFunc("GET /projects/{project_id}/monitors/{monitor_id}", s.get)
	mux.HandleFunc("PATCH /projects/{project_id}/monitors/{monitor_id}", s.update)
	mux.HandleFunc("DELETE /projects/{project_id}/monitors/{monitor_id}", s.delete)
	return mux
}
