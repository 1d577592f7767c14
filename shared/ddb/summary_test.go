package ddb

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

// TestSummaryTokensRoundTrip: a summary's token counts are stored and read back; a span without
// usage stores no token attribute, and a summary stored before summaries carried tokens (no
// "ti" or "to") reads as 0.
func TestSummaryTokensRoundTrip(t *testing.T) {
	client, _, name := ddbtest.NewTable(t)
	store := NewTraceStore(NewTable(client, name))
	ctx := t.Context()
	projectID, traceID := uuid.NewString(), uuid.NewString()
	at := time.Now().UTC().Truncate(time.Microsecond)
	llmID, toolID, oldID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	summary := func(id, kind string, in, out int64) trace.Summary {
		return trace.Summary{SpanID: id, TraceID: traceID, Name: kind, Kind: kind, StartedAt: at,
			InputTokens: in, OutputTokens: out, CreatedAt: at, UpdatedAt: at,
			Location: trace.Location{Key: trace.BatchKey(projectID, at, uuid.NewString()), Length: 10}}
	}
	_, err := store.PutSummaries(ctx, projectID, uuid.Must(uuid.NewV7()).String(), []trace.SummaryPut{
		{Summary: summary(llmID, trace.KindLLM, 1250, trace.MaxTokens)},
		{Summary: summary(toolID, "tool", 0, 0)},
		{Summary: summary(oldID, trace.KindLLM, 40, 2)},
	}, at)
	require.NoError(t, err)

	tool, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: key(spanPK(projectID, toolID), skSpan)})
	require.NoError(t, err)
	require.NotEmpty(t, tool.Item)
	assert.NotContains(t, tool.Item, "ti", "no usage, no attribute")
	assert.NotContains(t, tool.Item, "to")
	// The item an earlier release wrote: no token attributes.
	_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &name, Key: key(spanPK(projectID, oldID), skSpan),
		UpdateExpression: aws.String("REMOVE ti, #to"), ExpressionAttributeNames: map[string]string{"#to": "to"}})
	require.NoError(t, err)

	sums, err := store.Summaries(ctx, projectID, []string{llmID, toolID, oldID})
	require.NoError(t, err)
	require.Len(t, sums, 3)
	tests := []struct {
		name    string
		id      string
		in, out int64
	}{
		{"llm span", llmID, 1250, trace.MaxTokens},
		{"no usage", toolID, 0, 0},
		{"summary of an earlier release", oldID, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.in, sums[tt.id].InputTokens)
			assert.Equal(t, tt.out, sums[tt.id].OutputTokens)
		})
	}
}
