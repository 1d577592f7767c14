package main

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestABTestsAndSignalsCommands: `plume ab-tests list|show` and `plume signals get` against the
// API, text and json; the text report says when the decision is due.
func TestABTestsAndSignalsCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	a := h.api.A
	for i, v := range []string{"control", "control", "new", "new", "new"} {
		id := uuid.NewString()
		h.api.MustDo(t, "POST", "/ab-choices", a.Key, map[string]any{"entity_type": "trace", "entity_id": id, "choice_name": "prompt-v2",
			"variant_key": v, "variant_value": v, "variants": map[string]any{"control": "v1", "new": "v2"},
			"weights": map[string]any{"control": 0.5, "new": 0.5}, "duration_days": 7})
		h.api.MustDo(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": []any{
			map[string]any{"entity_type": "trace", "entity_id": id, "name": "csat", "value": i + 1}}})
	}

	var tests []api.ABTest
	h.okJSON(&tests, "ab-tests", "list")
	require.Len(t, tests, 1)
	assert.Equal(t, "running", tests[0].Status)
	assert.Contains(t, h.ok("ab-tests", "list"), "prompt-v2")

	var rep api.ABReport
	h.okJSON(&rep, "ab-tests", "show", "prompt-v2")
	assert.Equal(t, int64(2), rep.Results[0].Choices)
	assert.Equal(t, 4.0, rep.Results[1].Signals[0].Mean)
	text := h.ok("ab-tests", "show", "prompt-v2")
	assert.Contains(t, text, "welch_t")
	assert.Contains(t, text, "new vs control")
	assert.Contains(t, text, "after "+rep.DecisionAt.Format("2006-01-02"))
	assert.Contains(t, text, "[-4.853, 7.853]", "control's csat: mean 1.5, t(0.975; 1) x 0.7071 / sqrt(2)")

	r := h.run("ab-tests", "show", "nope")
	assert.NotEqual(t, exitOK, r.code)

	id := uuid.NewString()
	h.api.MustDo(t, "POST", "/signals/", a.Key, map[string]any{"entity_type": "completion", "entity_id": id, "name": "thumbs", "value": true})
	var sigs []api.Signal
	h.okJSON(&sigs, "signals", "get", "completion", id)
	require.Len(t, sigs, 1)
	assert.Equal(t, true, sigs[0].Value)
	assert.Contains(t, h.ok("signals", "get", "completion", id), "thumbs")
}
