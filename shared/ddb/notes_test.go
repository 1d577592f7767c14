package ddb

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

// failTransactions fails every transaction: a request that stops after its summaries, before
// any heal applies its pending deltas.
type failTransactions struct{ API }

var errNoTransactions = errors.New("transactions fail")

func (failTransactions) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return nil, errNoTransactions
}

// TestWriteNotesLeadTheSweeperToFailedRequests: a span batch's pending items carry no entry in
// the sweeper's PENDING partitions; the batch's write note does instead. A request that
// succeeds deletes its note; one that fails before its heals leaves it, and the sweeper heals
// the note's traces (exactly) and then deletes it.
func TestWriteNotesLeadTheSweeperToFailedRequests(t *testing.T) {
	ctx := context.Background()
	client, _, table := ddbtest.NewTable(t)
	blobs, _, _ := blobtest.New(t)
	healthy := NewTraceStore(NewTable(client, table))
	project := uuid.NewString()
	batch := func() ([]trace.Span, string) {
		traceID, root := uuid.NewString(), uuid.NewString()
		at := time.Now().UTC().Add(-time.Minute)
		end := at.Add(time.Second)
		var out []trace.Span
		for i := range 3 {
			sp := trace.Span{ID: uuid.NewString(), TraceID: traceID, ParentSpanID: &root, Name: fmt.Sprintf("step-%d", i), Kind: "tool",
				StartedAt: at, EndedAt: &end, Status: ptrTo("ok"), CreatedAt: at, UpdatedAt: at}
			if i == 2 {
				sp.ID, sp.ParentSpanID = root, nil
			}
			out = append(out, sp)
		}
		return out, traceID
	}
	notes := func() []noteItem {
		n, err := healthy.notesBefore(ctx, time.Now().Add(time.Hour))
		require.NoError(t, err)
		return n
	}

	// A request that succeeds leaves no note, and nothing in the PENDING partitions.
	spans, _ := batch()
	_, err := trace.NewService(healthy, blobs, nil).Ingest(ctx, project, spans)
	require.NoError(t, err)
	assert.Empty(t, notes(), "a request that applied its deltas deletes its note")

	// One that fails after its summaries leaves its note and pending item, without a sweeper entry.
	spans, traceID := batch()
	failing := NewTraceStore(NewTable(failTransactions{client}, table))
	_, err = trace.NewService(failing, blobs, nil).Ingest(ctx, project, spans)
	require.ErrorIs(t, err, errNoTransactions)
	left := notes()
	require.Len(t, left, 1)
	assert.Equal(t, project, left[0].Project)
	assert.Equal(t, []string{traceID}, left[0].Traces)
	_, pend, err := healthy.readPending(ctx, tracePK(project, traceID), skTrace)
	require.NoError(t, err)
	require.Len(t, pend, 1)
	assert.Empty(t, pend[0].GSI2PK, "a noted write's pending item has no sweeper entry")
	out, err := client.Query(ctx, &dynamodb.QueryInput{TableName: &table, IndexName: ptrTo(infra.IndexGSI2),
		KeyConditionExpression:    ptrTo("GSI2PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pendingGSI2PK(tracePK(project, traceID))}}})
	require.NoError(t, err)
	assert.Zero(t, out.Count)

	// A sweep before the note's time leaves it; one after heals the trace and deletes the note.
	_, err = healthy.Sweep(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.Len(t, notes(), 1)
	healed, err := healthy.Sweep(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 1, healed)
	assert.Empty(t, notes(), "the sweeper deletes the note it finished")
	r, err := healthy.RecountTrace(ctx, project, traceID)
	require.NoError(t, err)
	assert.True(t, r.Exact(), "%+v", r)
	assert.Equal(t, 3, r.Stored.Count)
	assert.Zero(t, r.Pending)
}
