package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestMonitors: create, list, read, change and delete a monitor; a bad definition is a *Error
// with status 400. (Evaluation: functions/monitors; roles and tenancy: internal/stack.)
func TestMonitors(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey(a.A.Key), WithProject(a.A.ProjectID), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	ctx := context.Background()
	threshold := 0.05
	m, err := c.CreateMonitor(ctx, api.CreateMonitorRequest{Name: "errors", Metric: api.MonitorErrorRate, Window: "5m",
		Comparison: api.MonitorGT, Threshold: &threshold})
	require.NoError(t, err)
	assert.Equal(t, api.MonitorNoData, m.State)

	list, err := c.Monitors(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	name := "checkout errors"
	m, err = c.UpdateMonitor(ctx, m.ID, api.UpdateMonitorRequest{Name: &name})
	require.NoError(t, err)
	got, err := c.Monitor(ctx, m.ID)
	require.NoError(t, err)
	assert.Equal(t, name, got.Name)

	_, err = c.CreateMonitor(ctx, api.CreateMonitorRequest{Name: "spend", Metric: api.MonitorGatewaySpend, Window: "1h",
		Comparison: api.MonitorGT, Threshold: &threshold})
	var apiErr *Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusBadRequest, apiErr.Status)

	require.NoError(t, c.DeleteMonitor(ctx, m.ID))
	_, err = c.Monitor(ctx, m.ID)
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusNotFound, apiErr.Status)
}
