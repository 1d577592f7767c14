package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/internal/apitest"
)

// lockedBuffer is a bytes.Buffer written by a running command and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// jsonLines decodes each line of s as an event.
func jsonLines(t *testing.T, s string) []api.Event {
	t.Helper()
	var out []api.Event
	for line := range strings.Lines(s) {
		var ev api.Event
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		out = append(out, ev)
	}
	return out
}

// TestEventsCommands: list prints the log; tail prints each event once as a line of JSON,
// follows new ones until interrupted (exit 0) or --count; bad flags exit 2.
func TestEventsCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	a := h.api
	a.EnsurePrompt(t, a.A, "bot", "v1")
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/prompts/bot/tags/production:pin", a.A.Key, map[string]any{"version": 1})
	a.DrainStream(t)

	var listed []api.Event
	require.NoError(t, json.Unmarshal([]byte(h.ok("--output", "json", "events", "list")), &listed))
	require.Len(t, listed, 2)
	assert.Equal(t, api.EventPromptTagMoved, listed[0].Type, "newest first")
	assert.Contains(t, h.ok("events", "list", "--type", api.EventPromptTagMoved), listed[0].ID)
	assert.NotContains(t, h.ok("events", "list", "--type", api.EventPromptTagMoved), api.EventPromptVersionCreated)

	counted := jsonLines(t, h.ok("events", "tail", "--since", "1h", "--count", "2", "--interval", "100ms"))
	require.Len(t, counted, 2)
	assert.Equal(t, listed[1].ID, counted[0].ID, "oldest first")
	assert.Equal(t, listed[0].ID, counted[1].ID)

	// Followed until interrupted: the two events, then a third raised while it runs, each
	// once however many polls read it again.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	f := cmdutil.New(func(k string) string { return h.env[k] }, &stdout, &stderr)
	done := make(chan int, 1)
	go func() { done <- execute(ctx, f, []string{"events", "tail", "--since", "1h", "--interval", "100ms"}) }()
	require.Eventually(t, func() bool { return strings.Count(stdout.String(), "\n") >= 2 }, 30*time.Second, 10*time.Millisecond)
	a.EnsurePrompt(t, a.A, "bot", "v2")
	a.DrainStream(t)
	require.Eventually(t, func() bool { return strings.Count(stdout.String(), "\n") >= 3 }, 30*time.Second, 10*time.Millisecond)
	cancel()
	assert.Equal(t, exitOK, <-done, "interrupted: %s", stderr.String())
	followed := jsonLines(t, stdout.String())
	require.Len(t, followed, 3, "each event once")
	assert.Equal(t, api.EventPromptVersionCreated, followed[2].Type)

	assert.Equal(t, exitUsage, h.run("events", "list", "--since", "yesterday").code)
	assert.Equal(t, exitUsage, h.run("events", "list", "--type", "no.such").code)
	assert.Equal(t, exitUsage, h.run("events", "list", "--limit", "500").code)
	assert.Equal(t, exitUsage, h.run("events", "tail", "--interval", "1ms").code)
}

// TestDeletedAlertingMonitorEvent: a monitor deleted with `plume monitors delete` while it is
// alerting raises monitor.resolved with state deleted, which `plume events list` prints with
// its typed body (api.MonitorEvent); the alert before it, and nothing for deleting a monitor
// that is not alerting.
func TestDeletedAlertingMonitorEvent(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	a := h.api
	create := func(name, threshold string) api.Monitor {
		var m api.Monitor
		require.NoError(t, json.Unmarshal([]byte(h.ok("--output", "json", "monitors", "create", "--name", name, "--metric", "error_rate",
			"--window", "5m", "--comparison", "gt", "--threshold", threshold)), &m))
		return m
	}
	alerting, quiet := create("errors", "0.3"), create("calm", "0.9")
	var spans []any
	for i := range 10 {
		s := apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", "", "", "in", "out", time.Now().UTC())
		if i < 5 {
			s["status"] = "error"
		}
		spans = append(spans, s)
	}
	a.MustDo(t, "POST", "/spans", a.A.Key, spans)
	a.DrainStream(t)
	res, err := a.Env.MonitorEvaluator().Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, res.Changes, "one alerts, one is ok")

	h.ok("monitors", "delete", alerting.ID)
	h.ok("monitors", "delete", quiet.ID)
	a.DrainStream(t)

	var listed []api.Event
	require.NoError(t, json.Unmarshal([]byte(h.ok("--output", "json", "events", "list", "--type", api.EventMonitorAlerted, "--type", api.EventMonitorResolved)), &listed))
	require.Len(t, listed, 2, "the alert and its end at the deletion; nothing for the monitor that was ok")
	assert.Equal(t, api.EventMonitorResolved, listed[0].Type, "newest first")
	var body api.MonitorEvent
	require.NoError(t, json.Unmarshal(listed[0].Data, &body))
	assert.Equal(t, api.MonitorStateDeleted, body.State)
	assert.Equal(t, api.MonitorAlerting, body.From)
	assert.Equal(t, alerting.ID, body.MonitorID)
	require.NotNil(t, body.Value)
	assert.Equal(t, 0.5, *body.Value, "the value of its last evaluation")
	assert.EqualValues(t, 10, body.Samples)
	assert.Contains(t, h.ok("events", "list", "--type", api.EventMonitorResolved), listed[0].ID)
}
