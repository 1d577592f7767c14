package ddb

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/trace"
)

// Write notes: how the sweeper finds the pending deltas of a request that failed half-way.
//
// A round of a span batch puts one note before its pending items: an item listing the traces
// they go to, in one of pendingShards NOTES partitions, sorted by time. The request deletes its
// notes once its heals applied every delta of its own writes. So a note outlives its request
// only when the request failed after writing it, or left deltas to the next healer; the sweeper
// heals the note's traces (and their sessions) and then deletes it. One put and one delete per
// batch replace an index entry per trace and batch on the pending items (written with the item,
// removed with it: two index writes each). Pending items written without a note (POST /traces)
// and a session's pending items keep their entry in the PENDING partitions of GSI2.
const prefixNotes = "NOTES#"

// noteItem is a trace.WriteNote.
type noteItem struct {
	PK      string   `dynamodbav:"PK"`
	SK      string   `dynamodbav:"SK"`
	Project string   `dynamodbav:"p"`
	Traces  []string `dynamodbav:"ts,stringset"`
}

func noteKey(projectID string, n trace.WriteNote) (pk, sk string) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(projectID + "#" + n.ID))
	return fmt.Sprintf("%s%d", prefixNotes, h.Sum32()%pendingShards), timeIndexSK(n.At, n.ID)
}

// NoteWrites implements trace.Index: one PutItem.
func (s *TraceStore) NoteWrites(ctx context.Context, projectID string, n trace.WriteNote) error {
	if len(n.Traces) == 0 {
		return nil
	}
	pk, sk := noteKey(projectID, n)
	item, err := marshal(noteItem{PK: pk, SK: sk, Project: projectID, Traces: n.Traces})
	if err != nil {
		return err
	}
	if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}); err != nil {
		return storageErr("put write note", err)
	}
	return nil
}

// ClearNote implements trace.Index: one DeleteItem.
func (s *TraceStore) ClearNote(ctx context.Context, projectID string, n trace.WriteNote) error {
	if len(n.Traces) == 0 {
		return nil
	}
	pk, sk := noteKey(projectID, n)
	if _, err := s.t.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.t.name, Key: key(pk, sk)}); err != nil {
		return storageErr("delete write note", err)
	}
	return nil
}

// notesBefore lists the notes recorded before before, every shard's, oldest first in each.
// Eventually consistent: a note deleted a moment ago may still be listed, and healing its
// traces again finds nothing to do.
func (s *TraceStore) notesBefore(ctx context.Context, before time.Time) ([]noteItem, error) {
	var out []noteItem
	for shard := range pendingShards {
		cond := partition(fmt.Sprintf("%s%d", prefixNotes, shard)).
			And(expression.Key(infra.AttrSK).LessThan(expression.Value(timeIndexSK(before, ""))))
		err := s.t.query(ctx, cond, queryOpts{eventual: true}, func(item map[string]types.AttributeValue) error {
			var n noteItem
			if err := attributevalue.UnmarshalMap(item, &n); err != nil {
				return fmt.Errorf("decode write note: %w", err)
			}
			out = append(out, n)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list write notes: %w", err)
		}
	}
	return out, nil
}
