package api_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// FuzzPreviewQuery: any query string parses or is refused, and what parses encodes back to
// a query that parses to the same PreviewQuery (the client encodes, the server parses).
func FuzzPreviewQuery(f *testing.F) {
	f.Add("optimizer_type=dspy_gepa&max_model_calls=500&seed=-3")
	f.Add("seed=x")
	f.Add("max_model_calls=0")
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := api.ParsePreviewQuery(v)
		if err != nil {
			return
		}
		again, err := api.ParsePreviewQuery(q.Values())
		require.NoError(t, err)
		assert.Equal(t, q, again)
	})
}

// FuzzIssueQuery: the same for IssueQuery, whose window stays within its bounds.
func FuzzIssueQuery(f *testing.F) {
	f.Add("window_hours=24")
	f.Add("window_hours=2161")
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := api.ParseIssueQuery(v)
		if err != nil {
			return
		}
		assert.True(t, q.WindowHours >= 0 && q.WindowHours <= api.MaxIssueWindowHours)
		again, err := api.ParseIssueQuery(q.Values())
		require.NoError(t, err)
		assert.Equal(t, q, again)
	})
}

func TestPreviewQueryRefuses(t *testing.T) {
	tests := []struct{ name, raw, want string }{
		{"unknown type", "optimizer_type=magic", `optimizer_type must be auto, quick_refine, dspy_bootstrap or dspy_gepa, not "magic"`},
		{"no calls", "max_model_calls=0", `max_model_calls must be an integer from 1 to 100000, not "0"`},
		{"too many calls", "max_model_calls=100001", `max_model_calls must be an integer from 1 to 100000, not "100001"`},
		{"seed not a number", "seed=1.5", `seed must be an integer, not "1.5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := url.ParseQuery(tt.raw)
			require.NoError(t, err)
			_, err = api.ParsePreviewQuery(v)
			assert.EqualError(t, err, tt.want)
		})
	}
}
