package infra_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamKeys are sort keys of items whose changes a stream consumer reads, by function: the
// items it must be invoked for. Neither plume-local's stream poller nor the tests' DrainStream
// applies an event source mapping's filter, so a filter that leaves a consumer's items out
// fails only in a deployment; this table says what each consumer reads, and the test holds the
// template's filters to it.
var streamKeys = map[string][]string{
	// The rollups and the list index (span summaries, traces, sessions), the feedback index
	// (evaluations and feedback, spans and traces), and the A/B tests' derived signals
	// (evaluations, feedback, and a span's signal record: its first choice).
	"RollupFunction": {"SPAN", "TRACE", "SESSION", "EVAL#judge", "FB#user", "ENTITY"},
	// ddb.EventsOf: prompt versions and tags, judges, optimization runs, monitors.
	"EventsFunction": {"JUDGE", "RUN", "TAG#production", "V#0001", "MON#m1"},
}

// TestStreamFiltersPassWhatConsumersRead: each stream-invoked function's filter passes an
// insert and a modification of every item its consumer reads.
func TestStreamFiltersPassWhatConsumersRead(t *testing.T) {
	tpl := loadTemplate(t)
	for id, keys := range streamKeys {
		var patterns []string
		for _, e := range mapAt(mapAt(functionResource(tpl, id), "Properties"), "Events") {
			props := mapAt(e.(map[string]any), "Properties")
			for _, f := range mapAt(props, "FilterCriteria")["Filters"].([]any) {
				patterns = append(patterns, f.(map[string]any)["Pattern"].(string))
			}
		}
		require.NotEmpty(t, patterns, "%s has no stream filter", id)
		for _, sk := range keys {
			for _, event := range []string{"INSERT", "MODIFY"} {
				assert.True(t, slices.ContainsFunc(patterns, func(p string) bool { return passes(t, p, event, sk) }),
					"%s's stream filter drops the %s of an item of sort key %s, which its consumer reads", id, event, sk)
			}
		}
	}
}

// passes reports whether pattern, an event filter of the forms the template uses (eventName
// values, and the sort key's values: strings or {"prefix": ...}), passes a change of sk.
func passes(t *testing.T, pattern, event, sk string) bool {
	var p struct {
		EventName []string `json:"eventName"`
		Dynamodb  struct {
			Keys struct {
				SK struct {
					S []any `json:"S"`
				} `json:"SK"`
			} `json:"Keys"`
		} `json:"dynamodb"`
	}
	require.NoError(t, json.Unmarshal([]byte(pattern), &p), "pattern %s", pattern)
	if !slices.Contains(p.EventName, event) {
		return false
	}
	for _, v := range p.Dynamodb.Keys.SK.S {
		switch v := v.(type) {
		case string:
			if v == sk {
				return true
			}
		case map[string]any:
			prefix, ok := v["prefix"].(string)
			require.True(t, ok, "pattern %s: only string values and prefixes are read here", pattern)
			if strings.HasPrefix(sk, prefix) {
				return true
			}
		}
	}
	return false
}

// TestStreamFilterPassesAlertingMonitorDeletions: EventsFunction's filter passes the REMOVE of
// a monitor (ddb.EventsOf raises monitor.resolved when it was alerting), and only of one whose
// old image is alerting: the deletion of any other item, or of a quiet monitor, raises nothing.
func TestStreamFilterPassesAlertingMonitorDeletions(t *testing.T) {
	tpl := loadTemplate(t)
	var removes []map[string]any
	for _, e := range mapAt(mapAt(functionResource(tpl, "EventsFunction"), "Properties"), "Events") {
		for _, f := range mapAt(mapAt(e.(map[string]any), "Properties"), "FilterCriteria")["Filters"].([]any) {
			pattern := f.(map[string]any)["Pattern"].(string)
			if passes(t, pattern, "REMOVE", "MON#m1") {
				var p map[string]any
				require.NoError(t, json.Unmarshal([]byte(pattern), &p))
				removes = append(removes, p)
			}
			for _, sk := range []string{"JUDGE", "RUN", "TAG#production", "V#0001", "SPAN"} {
				assert.False(t, passes(t, pattern, "REMOVE", sk), "the REMOVE of %s raises nothing: %s", sk, pattern)
			}
		}
	}
	require.Len(t, removes, 1, "one filter passes a monitor's deletion")
	old := mapAt(mapAt(removes[0], "dynamodb"), "OldImage")
	assert.Equal(t, map[string]any{"st": map[string]any{"S": []any{"alerting"}}}, old, "only an alerting monitor's (the item's state attribute)")
}
