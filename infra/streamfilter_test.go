package infra_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
)

// streamFilters are the filters the stream consumers apply in-process, by function. plume-local's
// poller and the tests' DrainStream hand a consumer what its filter passes, so a filter that
// drops what the consumer reads fails those tests; the template's filters must be these, or a
// deployment would drop what no test saw dropped.
var streamFilters = map[string]ddb.StreamFilter{
	"RollupFunction": app.StreamConsumerFilter,
	"EventsFunction": app.EventConsumerFilter,
}

// TestStreamFiltersAreTheConsumers: each stream-invoked function's event source filter passes
// the inserts and modifications of the sort keys and prefixes of its consumer's filter, and
// nothing else.
func TestStreamFiltersAreTheConsumers(t *testing.T) {
	tpl := loadTemplate(t)
	for id, want := range streamFilters {
		var got ddb.StreamFilter
		for _, e := range mapAt(mapAt(functionResource(tpl, id), "Properties"), "Events") {
			props := mapAt(e.(map[string]any), "Properties")
			for _, f := range mapAt(props, "FilterCriteria")["Filters"].([]any) {
				readPattern(t, f.(map[string]any)["Pattern"].(string), &got)
			}
		}
		for _, s := range [][]string{got.Keys, got.Prefixes, want.Keys, want.Prefixes} {
			slices.Sort(s)
		}
		assert.Equal(t, want.Keys, got.Keys, "%s's stream filter: the sort keys", id)
		assert.Equal(t, want.Prefixes, got.Prefixes, "%s's stream filter: the sort key prefixes", id)
	}
}

// readPattern adds to f the sort keys and prefixes of pattern, an event filter of the one form
// the template uses: inserts and modifications, sort keys given as strings or {"prefix": ...}.
func readPattern(t *testing.T, pattern string, f *ddb.StreamFilter) {
	t.Helper()
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
	require.ElementsMatch(t, []string{"INSERT", "MODIFY"}, p.EventName, "pattern %s: ddb.StreamFilter passes inserts and modifications", pattern)
	for _, v := range p.Dynamodb.Keys.SK.S {
		switch v := v.(type) {
		case string:
			f.Keys = append(f.Keys, v)
		case map[string]any:
			prefix, ok := v["prefix"].(string)
			require.True(t, ok && len(v) == 1, "pattern %s: only string values and prefixes are read here", pattern)
			f.Prefixes = append(f.Prefixes, prefix)
		default:
			t.Fatalf("pattern %s: only string values and prefixes are read here", pattern)
		}
	}
}
