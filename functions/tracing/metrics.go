package tracing

import (
	"net/http"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/rollup"
	"github.com/plumehq/plume/shared/web"
)

// metricsServer serves GET /projects/{project_id}/metrics from the rollups.
type metricsServer struct {
	rollups rollup.Reader
	now     func() time.Time
}

// getMetrics answers the project's counters per bucket of the window, read from its rollups:
// one Query of at most api.MaxMetricsBuckets items (24 per day bucket), whatever the project's
// size.
func (s *metricsServer) getMetrics(w http.ResponseWriter, r *http.Request) {
	q, err := api.ParseMetricsQuery(r.URL.Query(), s.now())
	if err != nil {
		web.Error(w, r, errs.Invalid("%s", err.Error()))
		return
	}
	m, err := rollup.Metrics(r.Context(), s.rollups, auth.ProjectID(r), q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, m)
}
