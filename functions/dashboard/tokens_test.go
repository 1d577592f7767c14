package dashboard_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/ddb/ddbtest"
)

// forgetTokens makes a span's stored summary one of an earlier release, which carried no
// token counts (its "ti" and "to" attributes).
func (f *fixture) forgetTokens(t *testing.T, projectID, spanID string) {
	t.Helper()
	_, err := ddbtest.Client(t, nil).UpdateItem(t.Context(), &dynamodb.UpdateItemInput{
		TableName: aws.String(f.api.TableName),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "P#" + projectID + "#S#" + spanID},
			"SK": &types.AttributeValueMemberS{Value: "SPAN"},
		},
		UpdateExpression:         aws.String("REMOVE ti, #to"),
		ConditionExpression:      aws.String("attribute_exists(ti)"),
		ExpressionAttributeNames: map[string]string{"#to": "to"},
	})
	require.NoError(t, err)
}

// TestTokensRolledUp: the token usage of llm spans (their attributes' inputTokens and
// outputTokens, COMPAT.md) is rolled up in the trace's tree, from each span to its ancestors,
// summed in the trace's figures and listed on the spans page; a span without usage, or whose
// summary is older than token counts, shows "–".
func TestTokensRolledUp(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	traceID, at := uuid.NewString(), time.Now().Add(-time.Hour)
	rootID, agentID, planID, answerID, oldID := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	llm := func(id, parent, name string, offset time.Duration, attrs map[string]any) map[string]any {
		s := span(id, traceID, parent, name, at.Add(offset), time.Second)
		s["kind"], s["attributes"] = "llm", attrs
		return s
	}
	f.api.MustDo(t, "POST", "/spans", f.api.A.Key, []any{
		span(rootID, traceID, "", "support chat", at, 10*time.Second),
		span(agentID, traceID, rootID, "agent", at.Add(time.Second), 5*time.Second),
		llm(planID, agentID, "plan call", 2*time.Second, map[string]any{"provider": "openai", "model": "gpt-4o", "inputTokens": 1234567, "outputTokens": 300}),
		llm(answerID, agentID, "answer call", 3*time.Second, map[string]any{"provider": "openai", "model": "gpt-4o", "inputTokens": 2500, "outputTokens": 45}),
		llm(oldID, rootID, "old call", 7*time.Second, map[string]any{"model": "gpt-4o", "inputTokens": 900, "outputTokens": 9}),
	})
	f.forgetTokens(t, f.api.A.ProjectID, oldID)
	plainID, _ := f.seedTrace(t, f.api.A.Key, "no model calls", 1, nil)

	t.Run("trace", func(t *testing.T) {
		p := b.get(t, "/ui/traces/"+traceID)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `data-testid="trace-tokens">1,237,412 <span class="help">(1,237,067 in, 345 out)</span>`,
			"the trace's tokens: its spans' summaries summed, the old summary's counted as none")
		column := func(spanID string) string {
			return regexpFind(t, `(?s)data-span-id="`+spanID+`".*?data-testid="subtree-tokens">([^<]*)`, p.Body)
		}
		tests := []struct {
			name, spanID, want string
		}{
			{"root: the whole tree", rootID, "1,237,412 tokens"},
			{"agent: its two calls", agentID, "1,237,412 tokens"},
			{"a call", planID, "1,234,867 tokens"},
			{"another call", answerID, "2,545 tokens"},
			{"a summary older than token counts", oldID, "–"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				assert.Equal(t, tt.want, column(tt.spanID))
			})
		}
		assert.Regexp(t, `(?s)data-span-id="`+agentID+`".*?data-testid="subtree">with children: 3 spans, \$[0-9.]+ in all, 1,237,412 tokens in all \(1,237,067 in, 345 out\)</span>`, p.Body)

		p = b.get(t, "/ui/traces/"+plainID)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, `data-testid="trace-tokens">–</dd>`)
		assert.NotContains(t, p.Body, "tokens in all")
	})
	t.Run("spans page", func(t *testing.T) {
		p := b.get(t, "/ui/spans")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `<th scope="col">Tokens <span class="help">(in → out)</span></th>`)
		cell := func(name string) string {
			return regexpFind(t, `(?s)>`+regexp.QuoteMeta(name)+`</a>.*?data-testid="span-tokens">([^<]*)<`, p.Body)
		}
		tests := []struct{ name, want string }{
			{"plan call", "1,234,567 → 300"},
			{"answer call", "2,500 → 45"},
			{"old call", "–"},
			{"agent", "–"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				assert.Equal(t, tt.want, cell(tt.name))
			})
		}
	})
}
