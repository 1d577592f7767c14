package stack_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/faultproxy"
	"github.com/plumehq/plume/shared/config"
)

// eventReceiver is a webhook endpoint on 127.0.0.1 that answers 200 and keeps the events.
type eventReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []api.Event
}

func newEventReceiver(t *testing.T) *eventReceiver {
	r := &eventReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var ev api.Event
		if json.Unmarshal(body, &ev) == nil {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *eventReceiver) got() []api.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]api.Event(nil), r.events...)
}

// monitorStack is the stack with its stream, deliveries to 127.0.0.1 and a clock of its own.
func monitorStack(t *testing.T, faults bool) (*apitest.API, *apitest.Clock) {
	c := apitest.NewClock(time.Now().UTC().Truncate(time.Minute).Add(-30 * time.Minute))
	a := apitest.New(t, apitest.Options{Faults: faults, Clock: c.Now, Config: func(cfg *config.Config) {
		cfg.Webhooks.AllowedHosts = []string{"127.0.0.1"}
		cfg.Webhooks.RetryBase = 10 * time.Millisecond
	}})
	return a, c
}

// sendErrorTraces posts n one-span traces starting at at, failed of them with status error.
func sendErrorTraces(t *testing.T, a *apitest.API, at time.Time, n, failed int) {
	t.Helper()
	var spans []any
	for i := range n {
		s := map[string]any{"id": uuid.NewString(), "trace_id": uuid.NewString(), "name": "handle", "kind": "generic",
			"started_at": float64(at.UnixMicro()) / 1e6, "ended_at": float64(at.Add(time.Second).UnixMicro()) / 1e6, "status": "ok"}
		if i < failed {
			s["status"] = "error"
		}
		spans = append(spans, s)
	}
	a.MustDo(t, "POST", "/spans", a.A.Key, spans)
}

// settle waits until every delivery queued so far was attempted.
func settle(t *testing.T, a *apitest.API) {
	t.Helper()
	require.Eventually(t, func() bool {
		s := a.Webhooks.Stats()
		return s.Invocations == s.Successes+s.Failures
	}, 30*time.Second, 5*time.Millisecond)
}

// evaluate runs the evaluator once, as MonitorFunction's schedule does, and applies the
// stream (the rollups, then the events' fan-out).
func evaluate(t *testing.T, a *apitest.API) {
	t.Helper()
	_, err := a.Env.MonitorEvaluator().Run(context.Background())
	require.NoError(t, err)
	a.DrainStream(t)
}

// TestMonitorAlertsOnceAndResolvesOnce: a monitor on the error rate of traces alerts once
// after error spans arrive and resolves once after they stop (with hysteresis: not while the
// rate is between the thresholds); a webhook subscribed to monitor events and one the
// monitor names in notify (subscribed to something else) each receive exactly one
// monitor.alerted and one monitor.resolved; project B's webhook, subscribed to everything,
// receives nothing. Evaluating again, and the stream applied again, deliver nothing new.
func TestMonitorAlertsOnceAndResolvesOnce(t *testing.T) {
	a, clock := monitorStack(t, false)
	subscribed, named, other := newEventReceiver(t), newEventReceiver(t), newEventReceiver(t)
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/webhooks", a.A.Key,
		api.CreateWebhookRequest{URL: subscribed.URL, Events: []string{api.EventMonitorAlerted, api.EventMonitorResolved}})
	namedID := a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/webhooks", a.A.Key,
		api.CreateWebhookRequest{URL: named.URL, Events: []string{api.EventPromptTagMoved}}).Map(t)["id"].(string)
	a.MustDo(t, "POST", "/projects/"+a.B.ProjectID+"/webhooks", a.B.Key, api.CreateWebhookRequest{URL: other.URL, Events: api.EventTypes})
	var m api.Monitor
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/monitors", a.A.Key, map[string]any{"name": "errors", "metric": "error_rate",
		"window": "5m", "comparison": "gt", "threshold": 0.2, "resolve_threshold": 0.1, "min_samples": 5, "notify": []string{namedID}}).Decode(t, &m)

	// Healthy traffic: ok, no event.
	sendErrorTraces(t, a, clock.Now(), 10, 0)
	a.DrainStream(t)
	evaluate(t, a)
	// Errors: 10 of 20 traces in the window. Alerts; evaluated again, still one event.
	clock.Add(time.Minute)
	sendErrorTraces(t, a, clock.Now(), 10, 10)
	a.DrainStream(t)
	evaluate(t, a)
	evaluate(t, a)
	// The errors stop; the rate falls to 10/40, above the resolve threshold: still alerting.
	clock.Add(time.Minute)
	sendErrorTraces(t, a, clock.Now(), 20, 0)
	a.DrainStream(t)
	evaluate(t, a)
	var got api.Monitor
	a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/monitors/"+m.ID, a.A.Key, nil).Decode(t, &got)
	assert.Equal(t, api.MonitorAlerting, got.State, "between the thresholds an alert stays on")
	// Five minutes on, the errors are out of the window: resolved.
	clock.Add(5 * time.Minute)
	sendErrorTraces(t, a, clock.Now(), 10, 0)
	a.DrainStream(t)
	evaluate(t, a)
	evaluate(t, a)
	a.ReplayEvents(t)
	settle(t, a)

	a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/monitors/"+m.ID, a.A.Key, nil).Decode(t, &got)
	assert.Equal(t, api.MonitorOK, got.State)
	var states []string
	for _, c := range got.History {
		states = append(states, c.From+">"+c.To)
	}
	assert.Equal(t, []string{"no_data>ok", "ok>alerting", "alerting>ok"}, states)

	for name, r := range map[string]*eventReceiver{"subscribed": subscribed, "named in notify": named} {
		evs := r.got()
		require.Len(t, evs, 2, "%s: one alert, one resolution", name)
		assert.Equal(t, api.EventMonitorAlerted, evs[0].Type, name)
		assert.Equal(t, api.EventMonitorResolved, evs[1].Type, name)
		var alerted, resolved api.MonitorEvent
		require.NoError(t, json.Unmarshal(evs[0].Data, &alerted))
		require.NoError(t, json.Unmarshal(evs[1].Data, &resolved))
		assert.Equal(t, m.ID, alerted.MonitorID)
		require.NotNil(t, alerted.Value)
		assert.InDelta(t, 0.5, *alerted.Value, 1e-9)
		assert.Equal(t, api.MonitorOK, resolved.State)
		assert.Equal(t, api.MonitorAlerting, resolved.From)
		assert.Equal(t, a.A.ProjectID, evs[0].ProjectID)
	}
	assert.Equal(t, subscribed.got()[0].ID, named.got()[0].ID, "one event, one id, to every webhook")
	assert.Empty(t, other.got(), "another project's webhook hears nothing")
}

// TestMonitorCrashBetweenChangeAndEvent: the stream is the outbox. A state write that fails
// before it takes effect changes nothing and raises nothing (the next run records it); one
// whose answer is lost took effect and raises its event once (the next run, which reads the
// new state, writes nothing); a fan-out that fails is applied again and delivers that event
// once, with one id.
func TestMonitorCrashBetweenChangeAndEvent(t *testing.T) {
	a, clock := monitorStack(t, true)
	rcv := newEventReceiver(t)
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/webhooks", a.A.Key,
		api.CreateWebhookRequest{URL: rcv.URL, Events: []string{api.EventMonitorAlerted, api.EventMonitorResolved}})
	var m api.Monitor
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/monitors", a.A.Key, map[string]any{"name": "errors", "metric": "error_rate",
		"window": "5m", "comparison": "gt", "threshold": 0.2}).Decode(t, &m)
	sendErrorTraces(t, a, clock.Now(), 10, 10)
	a.DrainStream(t)
	ctx := context.Background()
	state := func() api.Monitor {
		var got api.Monitor
		a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/monitors/"+m.ID, a.A.Key, nil).Decode(t, &got)
		return got
	}

	// Fails before the write: nothing changes.
	a.DDBFaults.Fail(faultproxy.Rule{Op: "UpdateItem", Following: faultproxy.Forever, Fault: faultproxy.ServerError})
	_, err := a.Env.MonitorEvaluator().Run(ctx)
	assert.Error(t, err)
	a.DDBFaults.Reset()
	assert.Equal(t, api.MonitorNoData, state().State)

	// Written, answer lost (and the SDK's retry refused by the condition): an error, but the
	// change took effect; the next run finds nothing to change.
	a.DDBFaults.Fail(faultproxy.Rule{Op: "UpdateItem", Following: faultproxy.Forever, Fault: faultproxy.DropAfterForward})
	_, err = a.Env.MonitorEvaluator().Run(ctx)
	assert.Error(t, err)
	a.DDBFaults.Reset()
	assert.Equal(t, api.MonitorAlerting, state().State, "the lost answer's write took effect")
	res, err := a.Env.MonitorEvaluator().Run(ctx)
	require.NoError(t, err)
	assert.Zero(t, res.Changes, "the next run reads the change and writes nothing")

	// The batch's writes fail once: the fan-out's delivery and the event log's PutItem run side
	// by side, each sent twice (apitest's faulted retryer), so four faults fail both whatever
	// their order; the batch is applied again.
	a.DDBFaults.Fail(faultproxy.Rule{Op: "PutItem", Fault: faultproxy.ServerError, Following: 3})
	assert.Positive(t, drainEventsTolerating(t, a), "the fan-out failed once at least")
	a.DDBFaults.Reset()
	a.DrainStream(t)
	settle(t, a)

	evs := rcv.got()
	require.NotEmpty(t, evs)
	ids := map[string]bool{}
	for _, ev := range evs {
		ids[ev.ID] = true
		assert.Equal(t, api.EventMonitorAlerted, ev.Type)
	}
	assert.Len(t, ids, 1, "one change, one event, one id")
	assert.Len(t, state().History, 1, "one state change")
}

// drainEventsTolerating applies the stream to the events' fan-out as EventsFunction does, a
// failed batch read again, and returns how many batches failed.
func drainEventsTolerating(t *testing.T, a *apitest.API) int {
	t.Helper()
	events, err := a.Env.EventConsumer()
	require.NoError(t, err)
	return a.ReplayTolerating(t, events, nil)
}
