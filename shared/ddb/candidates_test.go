package ddb

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
)

// consistencySpy records the ConsistentRead of each BatchGetItem.
type consistencySpy struct {
	API
	mu    sync.Mutex
	reads []bool
}

func (s *consistencySpy) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	s.mu.Lock()
	for _, ka := range in.RequestItems {
		s.reads = append(s.reads, aws.ToBool(ka.ConsistentRead))
	}
	s.mu.Unlock()
	return s.API.BatchGetItem(ctx, in, o...)
}

func (s *consistencySpy) take() []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reads
	s.reads = nil
	return r
}

// TestCandidatesReadEventually: the store for a list's candidates reads spans, traces and
// sessions eventually consistent (half the read units), and strongly again only for records
// the first read did not find; the store for reads by id reads strongly.
func TestCandidatesReadEventually(t *testing.T) {
	client, _, name := ddbtest.NewTable(t)
	spy := &consistencySpy{API: client}
	store := NewTraceStore(NewTable(spy, name))
	ctx := context.Background()
	p, t1, t2 := uuid.NewString(), uuid.NewString(), uuid.NewString()
	for _, id := range []string{t1, t2} {
		item, err := attributevalue.MarshalMap(map[string]any{infra.AttrPK: tracePK(p, id), infra.AttrSK: skTrace, "sc": 1})
		require.NoError(t, err)
		_, err = client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item})
		require.NoError(t, err)
	}

	ts, err := store.Traces(ctx, p, []string{t1, t2})
	require.NoError(t, err)
	assert.Len(t, ts, 2)
	assert.Equal(t, []bool{true}, spy.take(), "by id: strongly consistent")

	ts, err = store.Candidates().Traces(ctx, p, []string{t1, t2})
	require.NoError(t, err)
	assert.Len(t, ts, 2)
	assert.Equal(t, []bool{false}, spy.take(), "a list's candidates: eventually consistent")

	ts, err = store.Candidates().Traces(ctx, p, []string{t1, uuid.NewString()})
	require.NoError(t, err)
	assert.Len(t, ts, 1)
	assert.Equal(t, []bool{false, true}, spy.take(), "a candidate not found is read again strongly")

	_, err = store.Candidates().Sessions(ctx, p, []string{uuid.NewString()})
	require.NoError(t, err)
	_, err = store.Candidates().Summaries(ctx, p, []string{uuid.NewString()})
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, false, true}, spy.take())
}
