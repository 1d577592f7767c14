package openapi_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// TestSchemasFollowEncodingJSON: the schema of an api type accepts what encoding/json makes of
// it, and refuses the drift a client would trip on: a property the type does not have, a
// required one missing, a timestamp that is not date-time, null where the type has no pointer.
func TestSchemasFollowEncodingJSON(t *testing.T) {
	b, _ := document(t)
	c := compiler(t, b)
	model := "openai/gpt-4o-mini"
	version := api.PromptVersion{ID: "v", Metadata: json.RawMessage(`{}`), ModelID: &model, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	judge := api.Judge{ID: "j", Criteria: []api.Criterion{{Key: "tone"}}, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	item := api.UnifiedFeedback{EntityType: api.EntitySpan, Items: []api.FeedbackItem{
		{Human: &api.HumanFeedbackItem{Kind: api.KindHumanFeedback, ThumbsUp: true}},
		{Judge: &api.JudgeEvaluationItem{Kind: api.KindJudgeEvaluation, Evaluation: api.Evaluation{ID: "e"}}},
	}}

	tests := []struct {
		name   string
		schema string
		value  any
		change func(map[string]any)
		valid  bool
	}{
		{name: "version", schema: "PromptVersion", value: version, valid: true},
		{name: "version, nulls", schema: "PromptVersion", value: api.PromptVersion{}, valid: true},
		{name: "judge", schema: "Judge", value: judge, valid: true},
		{name: "unified feedback of both kinds", schema: "UnifiedFeedback", value: item, valid: true},
		{name: "extra property", schema: "PromptVersion", value: version, change: func(m map[string]any) { m["surprise"] = 1 }},
		{name: "missing property", schema: "PromptVersion", value: version, change: func(m map[string]any) { delete(m, "content_hash") }},
		{name: "not a date-time", schema: "PromptVersion", value: version, change: func(m map[string]any) { m["created_at"] = "yesterday" }},
		{name: "null for a string", schema: "PromptVersion", value: version, change: func(m map[string]any) { m["content"] = nil }},
		{name: "wrong type in an array", schema: "Judge", value: judge, change: func(m map[string]any) { m["criteria"] = []any{1} }},
		{name: "item of no kind", schema: "UnifiedFeedback", value: item, change: func(m map[string]any) { m["items"] = []any{map[string]any{"kind": "other"}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.value)
			require.NoError(t, err)
			var m map[string]any
			require.NoError(t, json.Unmarshal(raw, &m))
			if tt.change != nil {
				tt.change(m)
			}
			raw, err = json.Marshal(m)
			require.NoError(t, err)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			require.NoError(t, err)
			sch, err := c.Compile(docURL + "#" + pointer("components", "schemas", tt.schema))
			require.NoError(t, err)
			err = sch.Validate(inst)
			if tt.valid {
				assert.NoError(t, err, "%s", raw)
			} else {
				assert.Error(t, err, "%s", raw)
			}
		})
	}
}
