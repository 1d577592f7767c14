package ddb

import (
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

// TestCompletionsListedByTheirLatestWrite: every write of a linked span lists it by its batch
// (a span ended in a second request is listed twice), and a page answers each span once, by
// its latest write: the page answered 500 (its BatchGetItem named one key twice), and pages of
// one repeated the span.
func TestCompletionsListedByTheirLatestWrite(t *testing.T) {
	client, _, name := ddbtest.NewTable(t)
	table := NewTable(client, name)
	ctx := t.Context()
	projectID, traceID, slug := uuid.NewString(), uuid.NewString(), "bot"
	at := time.Now().UTC().Truncate(time.Microsecond)
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: key(promptPK(projectID, slug), skPrompt)})
	require.NoError(t, err)

	// The first batch wrote both spans; the second, newer, wrote the first span again. A third
	// span was listed by the first batch under this prompt, then written again naming another.
	resent, other, moved := uuid.NewString(), uuid.NewString(), uuid.NewString()
	first, second := uuid.NewString(), uuid.NewString()
	latest := map[string]string{resent: second, other: first, moved: second}
	start := map[string]time.Time{resent: at.Add(time.Second), other: at, moved: at}
	var puts []trace.SummaryPut
	for _, id := range []string{resent, other, moved} {
		names := slug
		if id == moved {
			names = "another-bot"
		}
		puts = append(puts, trace.SummaryPut{Summary: trace.Summary{SpanID: id, TraceID: traceID, Name: "chat", Kind: trace.KindLLM,
			StartedAt: start[id], PromptSlug: names, CreatedAt: at, UpdatedAt: at,
			Location: trace.Location{Key: trace.BatchKey(projectID, at, latest[id]), Length: 10}}})
	}
	_, err = NewTraceStore(table).PutSummaries(ctx, projectID, uuid.Must(uuid.NewV7()).String(), puts, at)
	require.NoError(t, err)
	for i, l := range []struct {
		batch string
		spans []string
	}{{first, []string{resent, other, moved}}, {second, []string{resent}}} {
		var set [][]byte
		for _, id := range l.spans {
			b, err := binaryID(id)
			require.NoError(t, err)
			set = append(set, b)
		}
		_, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &name, Key: key(completionsPK(projectID, slug), timeIndexSK(at.Add(time.Duration(i)*time.Second), l.batch)),
			UpdateExpression:          aws.String("ADD s :s"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberBS{Value: set}},
		})
		require.NoError(t, err)
	}

	store := NewFeedbackStore(table)
	for _, limit := range []int{1, 2, 10} {
		var seen []string
		q := feedback.CompletionQuery{Limit: limit}
		for range 8 {
			page, err := store.PromptCompletions(ctx, projectID, slug, q)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(page.Completions), limit)
			seen = append(seen, completionIDsOf(page)...)
			if q.Cursor = page.NextCursor; q.Cursor == "" {
				break
			}
		}
		assert.Equal(t, []string{resent, other}, seen, "limit %d: by their latest write, each once", limit)
	}
}

func completionIDsOf(p feedback.CompletionPage) []string {
	var out []string
	for _, c := range p.Completions {
		out = append(out, c.Summary.SpanID)
	}
	return out
}
