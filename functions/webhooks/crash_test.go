package webhooks_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/faultproxy"
	"github.com/plumehq/plume/shared/config"
)

// TestCrashBetweenChangeAndEvent fails DynamoDB around a tag move and its fan-out, in the
// fault-injection style of TestFaultTable: a pin that fails before its write raises no event;
// a pin whose write took effect but whose answer was lost (the client sees an error, the SDK's
// retry writes the same tag again) raises exactly one; a fan-out that fails mid-batch is
// retried and delivers that one event once, with one id.
func TestCrashBetweenChangeAndEvent(t *testing.T) {
	a := apitest.New(t, apitest.Options{Faults: true, Config: func(c *config.Config) {
		c.Webhooks.AllowedHosts = []string{"127.0.0.1"}
		c.Webhooks.RetryBase = 10 * time.Millisecond
	}})
	rcv := newReceiver(t, 200)
	hook := createWebhook(t, a, a.A, rcv.URL, api.EventPromptTagMoved)
	a.EnsurePrompt(t, a.A, "bot", "one")
	a.EnsurePrompt(t, a.A, "bot", "two")
	path := "/projects/" + a.A.ProjectID + "/prompts/bot/tags/production:pin"

	// Fails before the write: nothing changes.
	a.DDBFaults.Fail(faultproxy.Rule{Op: "PutItem", Following: faultproxy.Forever, Fault: faultproxy.ServerError})
	res := a.Do(t, "POST", path, a.A.Key, map[string]any{"version": 1})
	assert.GreaterOrEqual(t, res.Status, 500, "%s", res.Body)
	a.DDBFaults.Reset()

	// Written, answer lost, written again by the retry, answer lost again.
	a.DDBFaults.Fail(faultproxy.Rule{Op: "PutItem", Following: faultproxy.Forever, Fault: faultproxy.DropAfterForward})
	res = a.Do(t, "POST", path, a.A.Key, map[string]any{"version": 2})
	assert.GreaterOrEqual(t, res.Status, 500, "%s", res.Body)
	assert.Equal(t, 2, a.DDBFaults.Count("PutItem"), "the write and the SDK's retry")
	a.DDBFaults.Reset()

	var tags []api.PromptTag
	a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/prompts/bot/tags", a.A.Key, nil).Decode(t, &tags)
	require.Contains(t, tagVersions(tags), "production=2", "the lost answer's write took effect")

	// The fan-out's writes fail (every attempt, whichever of its concurrent writes comes
	// first) until the batch has failed once; it is applied again and succeeds.
	a.DDBFaults.Fail(faultproxy.Rule{Op: "PutItem", Fault: faultproxy.ServerError, Following: faultproxy.Forever})
	failures := drainTolerating(t, a, a.DDBFaults.Reset)
	assert.Positive(t, failures, "the fan-out failed once at least")

	got := rcv.got(t, 1)
	require.Eventually(t, func() bool {
		s := a.Webhooks.Stats()
		return s.Invocations == s.Successes+s.Failures
	}, 30*time.Second, 5*time.Millisecond)
	got = rcv.got(t, len(got))
	ids := map[string]bool{}
	for _, d := range got {
		verify(t, hook.Secret, d)
		ids[d.header.Get("webhook-id")] = true
		var ev api.Event
		require.NoError(t, json.Unmarshal(d.body, &ev))
		var moved api.PromptTagMoved
		require.NoError(t, json.Unmarshal(ev.Data, &moved))
		assert.Nil(t, moved.FromVersion, "the failed pin to 1 never happened")
		assert.Equal(t, 2, moved.ToVersion)
	}
	assert.Len(t, ids, 1, "one event, one id")
	log := deliveries(t, a, a.A, hook.ID)
	require.Len(t, log, 1, "one delivery")
	assert.Equal(t, api.DeliverySucceeded, log[0].Status)
	assert.Len(t, got, log[0].Attempts, "delivered once per attempt, and once in all")
}

// drainTolerating applies the stream to the events as EventsFunction does, a failed batch
// read again after calling failed, and returns how many batches failed.
func drainTolerating(t *testing.T, a *apitest.API, failed func()) int {
	t.Helper()
	events, err := a.Env.EventConsumer()
	require.NoError(t, err)
	return a.ReplayTolerating(t, events, failed)
}

func tagVersions(tags []api.PromptTag) []string {
	var out []string
	for _, tg := range tags {
		out = append(out, tg.Tag+"="+strconv.Itoa(tg.Version))
	}
	return out
}
