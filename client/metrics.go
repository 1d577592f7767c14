package client

import (
	"context"
	"net/http"

	"github.com/plumehq/plume/api"
)

// Metrics reads the project's counters per bucket (GET /projects/{project_id}/metrics): q's
// zero From and To are the server's defaults (the 24 hours to now), its zero Bucket an hour.
func (c *Client) Metrics(ctx context.Context, q api.MetricsQuery) (api.Metrics, error) {
	path, err := c.projectPath("/metrics")
	if err != nil {
		return api.Metrics{}, err
	}
	var out api.Metrics
	err = c.do(ctx, call{method: http.MethodGet, path: path, query: q.Values()}, &out)
	return out, err
}
