package monitors_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

func monitorsPath(t apitest.Tenant) string { return "/projects/" + t.ProjectID + "/monitors" }

// TestMonitorLifecycle: create (with defaults), list, read, change, delete; a new monitor is
// no_data with an empty history.
func TestMonitorLifecycle(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	hook := a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/webhooks", a.A.Key,
		api.CreateWebhookRequest{URL: "https://hooks.example.com/x", Events: []string{api.EventPromptTagMoved}}).Map(t)["id"].(string)

	var m api.Monitor
	a.MustDo(t, "POST", monitorsPath(a.A), a.A.Key, map[string]any{"name": "errors", "metric": "error_rate", "window": "5m",
		"comparison": "gt", "threshold": 0.1, "notify": []string{hook}}).Decode(t, &m)
	assert.True(t, strings.HasPrefix(m.ID, "mon_"), m.ID)
	assert.Equal(t, api.MonitorNoData, m.State)
	assert.Equal(t, "5m", m.Window)
	assert.Equal(t, 0.1, m.ResolveThreshold, "no hysteresis by default")
	assert.EqualValues(t, 1, m.MinSamples)
	assert.Equal(t, "1h", m.Reminder)
	assert.Equal(t, []string{hook}, m.Notify)
	assert.Empty(t, m.History)
	assert.Equal(t, a.A.UserID, m.CreatedBy)

	var list api.MonitorList
	a.MustDo(t, "GET", monitorsPath(a.A), a.A.Key, nil).Decode(t, &list)
	require.Len(t, list.Monitors, 1)
	assert.Equal(t, m.ID, list.Monitors[0].ID)

	var got api.Monitor
	a.MustDo(t, "PATCH", monitorsPath(a.A)+"/"+m.ID, a.A.Key, map[string]any{"threshold": 0.2, "resolve_threshold": 0.05, "window": "2h", "notify": []string{}}).Decode(t, &got)
	assert.Equal(t, 0.2, got.Threshold)
	assert.Equal(t, 0.05, got.ResolveThreshold)
	assert.Equal(t, "2h", got.Window)
	assert.Empty(t, got.Notify)
	a.MustDo(t, "GET", monitorsPath(a.A)+"/"+m.ID, a.A.Key, nil).Decode(t, &got)
	assert.Equal(t, 0.2, got.Threshold, "the change was stored")
	assert.Equal(t, "errors", got.Name, "fields not given are kept")
	assert.Equal(t, api.MonitorNoData, got.State, "the state is kept")

	a.MustDo(t, "DELETE", monitorsPath(a.A)+"/"+m.ID, a.A.Key, nil)
	assert.Equal(t, http.StatusNotFound, a.Do(t, "GET", monitorsPath(a.A)+"/"+m.ID, a.A.Key, nil).Status)
	assert.Equal(t, http.StatusNotFound, a.Do(t, "DELETE", monitorsPath(a.A)+"/"+m.ID, a.A.Key, nil).Status)
	assert.Equal(t, http.StatusNotFound, a.Do(t, "PATCH", monitorsPath(a.A)+"/"+m.ID, a.A.Key, map[string]any{"name": "x"}).Status)
}

// TestMonitorBadInput: each bad definition is a 400 invalid_request saying what is wrong.
func TestMonitorBadInput(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	ok := func() map[string]any {
		return map[string]any{"name": "m", "metric": "error_rate", "window": "5m", "comparison": "gt", "threshold": 0.1}
	}
	tests := []struct {
		name   string
		change func(map[string]any)
		says   string
	}{
		{"no name", func(b map[string]any) { delete(b, "name") }, "name"},
		{"unknown metric", func(b map[string]any) { b["metric"] = "vibes" }, "metric"},
		{"gateway spend over 5m", func(b map[string]any) { b["metric"] = "gateway_spend" }, "its window is 1d"},
		{"gateway spend by model", func(b map[string]any) {
			b["metric"], b["window"], b["filters"] = "gateway_spend", "1d", map[string]any{"model": "gpt-4o"}
		}, "whole project"},
		{"no window", func(b map[string]any) { delete(b, "window") }, "window"},
		{"bad window", func(b map[string]any) { b["window"] = "soon" }, "window"},
		{"window too long", func(b map[string]any) { b["window"] = "8d" }, "window"},
		{"window of part hours", func(b map[string]any) { b["window"] = "90m" }, "whole hours"},
		{"filtered window of minutes", func(b map[string]any) { b["filters"] = map[string]any{"model": "gpt-4o"} }, "whole hours"},
		{"two filters", func(b map[string]any) {
			b["window"] = "1h"
			b["filters"] = map[string]any{"model": "gpt-4o", "span_kind": "llm"}
		}, "at most one"},
		{"bad tag", func(b map[string]any) { b["window"] = "1h"; b["filters"] = map[string]any{"tag": "env"} }, "key:value"},
		{"feedback by model", func(b map[string]any) {
			b["metric"], b["window"], b["filters"] = "negative_feedback_rate", "1h", map[string]any{"model": "gpt-4o"}
		}, "whole project"},
		{"judge of error rate", func(b map[string]any) {
			b["filters"] = map[string]any{"judge_id": "4b1d4f0e-3c1a-4e55-9a51-0d5c9f9d7b11"}
		}, "judge_pass_rate only"},
		{"no comparison", func(b map[string]any) { delete(b, "comparison") }, "comparison"},
		{"no threshold", func(b map[string]any) { delete(b, "threshold") }, "threshold"},
		{"resolve above a gt threshold", func(b map[string]any) { b["resolve_threshold"] = 0.2 }, "resolve_threshold"},
		{"resolve below an lt threshold", func(b map[string]any) { b["comparison"], b["resolve_threshold"] = "lt", 0.05 }, "resolve_threshold"},
		{"negative min samples", func(b map[string]any) { b["min_samples"] = -1 }, "min_samples"},
		{"short reminder", func(b map[string]any) { b["reminder"] = "1m" }, "reminder"},
		{"unknown webhook", func(b map[string]any) { b["notify"] = []string{"wh_4b1d4f0e-3c1a-4e55-9a51-0d5c9f9d7b11"} }, "no webhook"},
		{"not JSON", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any = "{"
			if tt.change != nil {
				b := ok()
				tt.change(b)
				body = b
			}
			res := a.Do(t, "POST", monitorsPath(a.A), a.A.Key, body)
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			assert.Equal(t, "invalid_request", res.ErrCode(t))
			assert.Contains(t, string(res.Body), tt.says)
		})
	}
	var list api.MonitorList
	a.MustDo(t, "GET", monitorsPath(a.A), a.A.Key, nil).Decode(t, &list)
	assert.Empty(t, list.Monitors, "nothing bad was stored")
}

// TestMonitorRequests counts the DynamoDB requests of each route.
func TestMonitorRequests(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	body := map[string]any{"name": "m", "metric": "cost", "window": "1h", "comparison": "gt", "threshold": 5}
	a.MustDo(t, "GET", monitorsPath(a.A), a.A.Key, nil) // the key into the cache
	a.DDB.Reset()
	id := a.MustDo(t, "POST", monitorsPath(a.A), a.A.Key, body).Map(t)["id"].(string)
	assert.Equal(t, 2, a.DDB.Total(), "create: count, put")
	for _, r := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"GET", monitorsPath(a.A), nil, 1},
		{"GET", monitorsPath(a.A) + "/" + id, nil, 1},
		{"PATCH", monitorsPath(a.A) + "/" + id, map[string]any{"name": "n"}, 2},
		{"DELETE", monitorsPath(a.A) + "/" + id, nil, 1},
	} {
		a.DDB.Reset()
		a.MustDo(t, r.method, r.path, a.A.Key, r.body)
		assert.Equal(t, r.want, a.DDB.Total(), "%s %s", r.method, r.path)
	}
}
