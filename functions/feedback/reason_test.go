package feedback_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// TestUnifiedReasonAsStored: unified feedback answers a reason as the feedback record does: null
// when none was given (it answered "" before, issue 11), "" when an empty one was, the text
// otherwise; on the span, the trace and the session.
func TestUnifiedReasonAsStored(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	session := uuid.NewString()
	traceID, spans := ingestTrace(t, api, a, "bot", vid, session, 3)
	tests := []struct {
		name string
		body map[string]any
		want any // the reason answered: nil is JSON null
	}{
		{"no reason", map[string]any{"thumbs_up": true}, nil},
		{"null reason", map[string]any{"thumbs_up": true, "reason": nil}, nil},
		{"empty reason", map[string]any{"thumbs_up": false, "reason": ""}, ""},
	}
	require.Len(t, spans, len(tests))
	wantBySpan := map[string]any{}
	for i, tt := range tests {
		written := api.MustDo(t, "POST", feedbackPath("bot", spans[i]), a.Key, tt.body).Map(t)
		require.Contains(t, written, "reason")
		assert.Equal(t, tt.want, written["reason"], "%s: the record", tt.name)
		wantBySpan[spans[i]] = tt.want
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := api.MustDo(t, "GET", unifiedPath(a.ProjectID, "span", spans[i]), a.Key, nil).Map(t)["items"].([]any)
			require.Len(t, items, 1)
			item := items[0].(map[string]any)
			require.Contains(t, item, "reason", "the key is always there")
			assert.Equal(t, tt.want, item["reason"])
		})
	}
	for _, entity := range []struct{ kind, id string }{{"trace", traceID}, {"session", session}} {
		t.Run(entity.kind, func(t *testing.T) {
			items := api.MustDo(t, "GET", unifiedPath(a.ProjectID, entity.kind, entity.id), a.Key, nil).Map(t)["items"].([]any)
			require.Len(t, items, len(tests))
			for _, it := range items {
				item := it.(map[string]any)
				assert.Equal(t, wantBySpan[item["span_id"].(string)], item["reason"], "span %s", item["span_id"])
			}
		})
	}
}
