package ddb

import (
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/trace"
)

// TestCompletionsListedTwiceReadOnce: a completions index written before a re-sent span stopped
// being listed again names one span in two batches. The page answers it once (it answered 500:
// its BatchGetItem named one key twice). Paged one by one, every page answers; a later page may
// show the older listing again (telling it apart would take a read per listing).
func TestCompletionsListedTwiceReadOnce(t *testing.T) {
	client, _, name := ddbtest.NewTable(t)
	table := NewTable(client, name)
	ctx := t.Context()
	projectID, traceID, slug := uuid.NewString(), uuid.NewString(), "bot"
	at := time.Now().UTC().Truncate(time.Microsecond)
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: key(promptPK(projectID, slug), skPrompt)})
	require.NoError(t, err)

	resent, other := uuid.NewString(), uuid.NewString()
	var puts []trace.SummaryPut
	for _, id := range []string{resent, other} {
		puts = append(puts, trace.SummaryPut{Summary: trace.Summary{SpanID: id, TraceID: traceID, Name: "chat", Kind: trace.KindLLM,
			StartedAt: at, PromptSlug: slug, CreatedAt: at, UpdatedAt: at,
			Location: trace.Location{Key: trace.BatchKey(projectID, at, uuid.NewString()), Length: 10}}})
	}
	_, err = NewTraceStore(table).WriteTrace(ctx, projectID, trace.TraceWrite{
		ID: uuid.Must(uuid.NewV7()).String(), Delta: trace.TraceDelta{TraceID: traceID, MinStart: at, At: at}, Puts: puts,
	})
	require.NoError(t, err)
	// The first batch listed both spans; the re-send's batch, newer, listed the first again.
	for i, spans := range [][]string{{resent, other}, {resent}} {
		var set [][]byte
		for _, id := range spans {
			b, err := binaryID(id)
			require.NoError(t, err)
			set = append(set, b)
		}
		_, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &name, Key: key(completionsPK(projectID, slug), timeIndexSK(at.Add(time.Duration(i)*time.Second), uuid.NewString())),
			UpdateExpression:          aws.String("ADD s :s"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberBS{Value: set}},
		})
		require.NoError(t, err)
	}

	store := NewFeedbackStore(table)
	page, err := store.PromptCompletions(ctx, projectID, slug, feedback.CompletionQuery{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, []string{resent, other}, completionIDsOf(page), "each completion once")
	assert.Empty(t, page.NextCursor)

	var seen []string
	q := feedback.CompletionQuery{Limit: 1}
	for range 4 {
		page, err := store.PromptCompletions(ctx, projectID, slug, q)
		require.NoError(t, err)
		seen = append(seen, completionIDsOf(page)...)
		if q.Cursor = page.NextCursor; q.Cursor == "" {
			break
		}
	}
	slices.Sort(seen)
	assert.ElementsMatch(t, []string{resent, other}, slices.Compact(seen), "pages of one: every completion")
}

func completionIDsOf(p feedback.CompletionPage) []string {
	var out []string
	for _, c := range p.Completions {
		out = append(out, c.Summary.SpanID)
	}
	return out
}
