package llm_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// verdict is a judge's binary answer, as the judge runner will ask for it.
var verdict = &llm.Schema{Name: "verdict", Description: "the judge's verdict", JSON: json.RawMessage(`{
	"type": "object", "additionalProperties": false,
	"required": ["reason", "confidence", "meets_criteria"],
	"properties": {
		"reason": {"type": "string"},
		"confidence": {"type": "number", "minimum": 0, "maximum": 1},
		"meets_criteria": {"type": "boolean"}
	}}`)}

// TestClientAgainstFakeModel sends structured-output requests through the real client to the
// repo's fake model server, over HTTP, for both wire formats: the answer validates, a 429 with
// Retry-After is retried as asked, and the server counts exactly the calls the client made.
func TestClientAgainstFakeModel(t *testing.T) {
	for _, model := range []string{"openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-latest"} {
		t.Run(model, func(t *testing.T) {
			srv := fakemodeltest.Start(t, fakemodel.WithAPIKey("test-key"), fakemodel.WithRules(
				fakemodel.Rule{Match: fakemodel.Contains("rate me"), Reply: fakemodel.Reply{Status: http.StatusTooManyRequests, RetryAfter: 2 * time.Second}, Times: 2},
				fakemodel.Rule{Match: fakemodel.Contains("rate me"), Reply: fakemodel.Reply{JSON: json.RawMessage(`{"reason":"polite and correct","confidence":0.9,"meets_criteria":true}`)}},
			))
			cfg := llm.ConfigFromEnv(func(k string) string {
				return map[string]string{
					"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": srv.OpenAIBaseURL(),
					"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL,
				}[k]
			})
			var waits []time.Duration
			client := llm.New(cfg, llm.Options{Sleep: func(_ context.Context, d time.Duration) error {
				waits = append(waits, d)
				return nil
			}})
			req := llm.Request{
				Model: model, System: "You are a strict judge.", Temperature: new(0.0), MaxTokens: 256, Schema: verdict,
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "Please rate me: the answer was 'It left the warehouse today.'"}},
			}
			resp, err := client.Complete(context.Background(), req)
			require.NoError(t, err)
			assert.JSONEq(t, `{"reason":"polite and correct","confidence":0.9,"meets_criteria":true}`, string(resp.JSON))
			assert.Equal(t, 3, resp.Attempts, "two 429s, then the answer")
			assert.Equal(t, []time.Duration{2 * time.Second, 2 * time.Second}, waits, "Retry-After honoured")
			assert.Equal(t, 3, srv.Count(), "every attempt reached the server, and nothing else")
			assert.Positive(t, resp.Usage.InputTokens)
			assert.Positive(t, resp.Usage.OutputTokens)

			// Without a rule, the fake answers a schema-valid instance of the schema.
			srv.Reset()
			req.Messages = []llm.Message{{Role: llm.RoleUser, Text: "Judge this one."}}
			resp, err = client.Complete(context.Background(), req)
			require.NoError(t, err)
			var v struct {
				Reason        *string  `json:"reason"`
				Confidence    *float64 `json:"confidence"`
				MeetsCriteria *bool    `json:"meets_criteria"`
			}
			require.NoError(t, json.Unmarshal(resp.JSON, &v))
			assert.NotNil(t, v.Reason)
			assert.NotNil(t, v.Confidence)
			assert.NotNil(t, v.MeetsCriteria)
			require.Len(t, srv.Calls(), 1)
			assert.Equal(t, "verdict", srv.Calls()[0].SchemaName, "structured output reached the server as such")
		})
	}
}
