package mcpserver_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestMonitorTools: create-monitor without confirm creates nothing and says what it would;
// with it, the monitor is created and list-monitors shows it; a definition the API refuses
// (gateway_spend over 5m: its window is 1d) is a tool error; another project's key sees none of it.
func TestMonitorTools(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)
	args := map[string]any{"name": "checkout errors", "metric": "error_rate", "window": "5m", "comparison": "gt", "threshold": 0.05}

	res := call(t, cs, "create-monitor", args, nil)
	require.True(t, res.IsError)
	assert.Contains(t, text(res), `not confirmed, nothing changed: would create monitor "checkout errors" alerting when error_rate over 5m > 0.05`)
	var list api.MonitorList
	call(t, cs, "list-monitors", map[string]any{}, &list)
	assert.Empty(t, list.Monitors, "nothing created without confirm")

	args["confirm"] = true
	var m api.Monitor
	res = call(t, cs, "create-monitor", args, &m)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, api.MonitorNoData, m.State)
	call(t, cs, "list-monitors", map[string]any{}, &list)
	require.Len(t, list.Monitors, 1)
	assert.Equal(t, m.ID, list.Monitors[0].ID)

	args["metric"] = "gateway_spend"
	res = call(t, cs, "create-monitor", args, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "invalid_request")

	other, err := s.connect(t, s.api.B.Key)
	require.NoError(t, err)
	call(t, other, "list-monitors", map[string]any{}, &list)
	assert.Empty(t, list.Monitors)
}
