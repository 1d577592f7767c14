package feedback_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
)

// TestOrphanFeedbackExpires: feedback on a span that has not arrived carries the table's TTL
// attribute, OrphanTTL after its write, so that it does not stay forever when the span never
// comes; reads that do not find the span leave it; whichever read adopts it into the span's
// trace once the span is there (or a new submission on the known span) removes it.
func TestOrphanFeedbackExpires(t *testing.T) {
	tests := []struct {
		name  string
		adopt func(t *testing.T, api *apitest.API, spanID, traceID, sessionID string)
	}{
		{"trace read", func(t *testing.T, api *apitest.API, _, traceID, _ string) {
			api.MustDo(t, "GET", unifiedPath(api.A.ProjectID, "trace", traceID), api.A.Key, nil)
		}},
		{"session read", func(t *testing.T, api *apitest.API, _, _, sessionID string) {
			api.MustDo(t, "GET", unifiedPath(api.A.ProjectID, "session", sessionID), api.A.Key, nil)
		}},
		{"span read", func(t *testing.T, api *apitest.API, spanID, _, _ string) {
			api.MustDo(t, "GET", unifiedPath(api.A.ProjectID, "span", spanID), api.A.Key, nil)
		}},
		{"submission again", func(t *testing.T, api *apitest.API, spanID, _, _ string) {
			api.MustDo(t, "POST", feedbackPath("bot", spanID), api.A.Key, map[string]any{"thumbs_up": true})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := apitest.New(t, apitest.Options{})
			a := api.A
			vid := api.EnsurePrompt(t, a, "bot", "Answer.")
			spanID, traceID, sessionID := uuid.NewString(), uuid.NewString(), uuid.NewString()

			f := api.MustDo(t, "POST", feedbackPath("bot", spanID), a.Key, map[string]any{"thumbs_up": false, "reason": "slow"}).Map(t)
			written, err := time.Parse(time.RFC3339Nano, f["updated_at"].(string))
			require.NoError(t, err)
			wantTTL := strconv.FormatInt(written.Add(ddb.OrphanTTL).Unix(), 10)
			assert.Equal(t, wantTTL, ttlOf(t, api, f["id"].(string)), "an orphan expires %s after its write", ddb.OrphanTTL)

			// Reads that do not find the span keep it an orphan.
			api.MustDo(t, "GET", unifiedPath(a.ProjectID, "span", spanID), a.Key, nil)
			other, _ := ingestTrace(t, api, a, "bot", vid, "", 1)
			api.MustDo(t, "GET", unifiedPath(a.ProjectID, "trace", other), a.Key, nil)
			assert.Equal(t, wantTTL, ttlOf(t, api, f["id"].(string)))

			api.MustDo(t, "POST", "/spans", a.Key, []any{apitest.LLMSpan(spanID, traceID, sessionID, "bot", vid, "q", "a", time.Now().Add(-time.Minute))})
			tt.adopt(t, api, spanID, traceID, sessionID)
			assert.Empty(t, ttlOf(t, api, f["id"].(string)), "adopted: it never expires")
			items := api.MustDo(t, "GET", unifiedPath(a.ProjectID, "trace", traceID), a.Key, nil).Map(t)["items"].([]any)
			require.Len(t, items, 1)
			assert.Equal(t, f["id"], items[0].(map[string]any)["id"])
			assert.Equal(t, vid, items[0].(map[string]any)["prompt_version_id"])
		})
	}
}

// ttlOf returns the TTL attribute of the feedback item with id as DynamoDB holds it (epoch
// seconds), "" when it has none. A Scan: the test's table is fresh and small.
func ttlOf(t *testing.T, api *apitest.API, id string) string {
	t.Helper()
	out, err := ddbtest.Client(t, nil).Scan(context.Background(), &dynamodb.ScanInput{
		TableName: aws.String(api.TableName), FilterExpression: aws.String("#id = :id AND begins_with(SK, :fb)"),
		ExpressionAttributeNames: map[string]string{"#id": "id"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":id": &types.AttributeValueMemberS{Value: id}, ":fb": &types.AttributeValueMemberS{Value: "FB#"},
		},
	})
	require.NoError(t, err)
	require.Len(t, out.Items, 1, "feedback item %s", id)
	n, ok := out.Items[0][infra.AttrTTL].(*types.AttributeValueMemberN)
	if !ok {
		return ""
	}
	return n.Value
}
