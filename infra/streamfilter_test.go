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
// what its consumer's filter passes (the inserts and modifications of its sort keys and
// prefixes, the deletions of its Removals), and nothing else.
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
		assert.ElementsMatch(t, want.Removals, got.Removals, "%s's stream filter: the deletions", id)
	}
}

// readPattern adds to f what pattern passes, an event filter of the two forms the template
// uses: inserts and modifications of sort keys given as strings or {"prefix": ...}; or the
// deletions of the items of one sort key prefix whose old image had one attribute's value.
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
			OldImage map[string]struct {
				S []string `json:"S"`
			} `json:"OldImage"`
		} `json:"dynamodb"`
	}
	require.NoError(t, json.Unmarshal([]byte(pattern), &p), "pattern %s", pattern)
	if slices.Equal(p.EventName, []string{"REMOVE"}) {
		sk := p.Dynamodb.Keys.SK.S
		require.Len(t, sk, 1, "pattern %s: a deletion's filter names one sort key prefix", pattern)
		prefix, ok := sk[0].(map[string]any)["prefix"].(string)
		require.True(t, ok, "pattern %s: a deletion's filter names one sort key prefix", pattern)
		require.Len(t, p.Dynamodb.OldImage, 1, "pattern %s: a deletion's filter names one attribute of the old image", pattern)
		for attr, v := range p.Dynamodb.OldImage {
			require.Len(t, v.S, 1, "pattern %s: a deletion's filter names one value of the old image's attribute", pattern)
			f.Removals = append(f.Removals, ddb.StreamRemoval{Prefix: prefix, Attr: attr, Value: v.S[0]})
		}
		return
	}
	require.ElementsMatch(t, []string{"INSERT", "MODIFY"}, p.EventName, "pattern %s: ddb.StreamFilter passes inserts and modifications, or deletions", pattern)
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
