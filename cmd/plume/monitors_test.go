package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestMonitorsCommands: create, list, show, update (only the flags given change), delete; bad
// input and an unknown monitor exit 2.
func TestMonitorsCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})

	var m api.Monitor
	require.NoError(t, json.Unmarshal([]byte(h.ok("--output", "json", "monitors", "create", "--name", "errors", "--metric", "error_rate",
		"--window", "5m", "--comparison", "gt", "--threshold", "0.1", "--resolve-threshold", "0.05", "--min-samples", "20")), &m))
	assert.Equal(t, api.MonitorNoData, m.State)
	assert.Equal(t, 0.05, m.ResolveThreshold)
	assert.EqualValues(t, 20, m.MinSamples)

	assert.Contains(t, h.ok("monitors", "list"), "errors")
	assert.Contains(t, h.ok("monitors", "show", m.ID), "no_data")

	var got api.Monitor
	require.NoError(t, json.Unmarshal([]byte(h.ok("--output", "json", "monitors", "update", m.ID, "--threshold", "0.2", "--model", "gpt-4o", "--window", "1h")), &got))
	assert.Equal(t, 0.2, got.Threshold)
	assert.Equal(t, 0.2, got.ResolveThreshold, "a new threshold without a resolve threshold resolves at it")
	assert.Equal(t, "gpt-4o", got.Filters.Model)
	assert.Equal(t, "errors", got.Name, "what was not given is kept")
	assert.EqualValues(t, 20, got.MinSamples)

	require.NoError(t, json.Unmarshal([]byte(h.ok("--output", "json", "monitors", "update", m.ID, "--paused")), &got))
	assert.True(t, got.Paused)
	assert.Equal(t, 0.2, got.Threshold, "pausing changes nothing else")
	assert.Contains(t, h.ok("monitors", "show", m.ID), "true", "show says it is paused")
	require.NoError(t, json.Unmarshal([]byte(h.ok("--output", "json", "monitors", "update", m.ID, "--paused=false")), &got))
	assert.False(t, got.Paused)

	assert.Equal(t, exitUsage, h.run("monitors", "create", "--name", "spend", "--metric", "gateway_spend", "--window", "1h",
		"--comparison", "gt", "--threshold", "1").code)
	assert.Equal(t, exitUsage, h.run("monitors", "create", "--name", "x").code, "required flags")

	h.ok("monitors", "delete", m.ID)
	assert.Equal(t, exitUsage, h.run("monitors", "show", m.ID).code, "not found")
	assert.Equal(t, "[]", strings.TrimSpace(h.ok("--output", "json", "monitors", "list")))
}
