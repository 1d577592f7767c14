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
// size. An answer that would pass api.MaxAnswerBytes has its lists of models, prompts and
// judges cut (fitMetrics).
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
	web.JSON(w, http.StatusOK, fitMetrics(m, api.MaxAnswerBytes-1))
}

// fitMetrics is m, or when m's encoding is over limit bytes, m with every list of models,
// prompts and judges (of the buckets and the totals) cut to its first k entries, k the most
// that keeps it within limit (api.Metrics.ListsCut). The counters outside the lists are
// bounded by the buckets (at most api.MaxMetricsBuckets, under 1 KB each), so that k = 0 fits.
func fitMetrics(m api.Metrics, limit int) api.Metrics {
	if encodedLen(m) <= limit {
		return m
	}
	longest := 0
	for _, v := range append([]api.MetricsValues{m.Totals}, bucketValues(m)...) {
		longest = max(longest, len(v.Models), len(v.Prompts), len(v.Judges))
	}
	// The largest k in [0, longest) whose cut fits: the cut shrinks as k does. The answer grows
	// about linearly with k, so the search starts from twice the estimate: it encodes answers
	// of about the budget's size, never the whole (up to 150 MB) again.
	whole, base := encodedLen(m), encodedLen(cutLists(m, 0))
	lo, hi := 0, longest-1
	if base >= limit {
		hi = 0
	} else if whole > base {
		if guess := 2*(limit-base)*longest/(whole-base) + 1; guess < hi {
			if encodedLen(cutLists(m, guess)) <= limit {
				lo = guess
			} else {
				hi = guess
			}
		}
	}
	for lo < hi {
		k := (lo + hi + 1) / 2
		if encodedLen(cutLists(m, k)) <= limit {
			lo = k
		} else {
			hi = k - 1
		}
	}
	out := cutLists(m, lo)
	out.ListsCut = &lo
	return out
}

// bucketValues are the counters of m's buckets.
func bucketValues(m api.Metrics) []api.MetricsValues {
	out := make([]api.MetricsValues, len(m.Buckets))
	for i, b := range m.Buckets {
		out[i] = b.MetricsValues
	}
	return out
}

// cutLists is m with every list of models, prompts and judges cut to its first k entries; m is
// not changed.
func cutLists(m api.Metrics, k int) api.Metrics {
	cut := func(v api.MetricsValues) api.MetricsValues {
		v.Models, v.Prompts, v.Judges = v.Models[:min(k, len(v.Models))], v.Prompts[:min(k, len(v.Prompts))], v.Judges[:min(k, len(v.Judges))]
		return v
	}
	out := m
	out.Totals = cut(m.Totals)
	out.Buckets = make([]api.MetricsBucket, len(m.Buckets))
	for i, b := range m.Buckets {
		out.Buckets[i] = api.MetricsBucket{Start: b.Start, MetricsValues: cut(b.MetricsValues)}
	}
	return out
}
