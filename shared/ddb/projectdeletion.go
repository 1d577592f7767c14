package ddb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/projectdelete"
)

// DeleteAPI is what deleting a project needs of DynamoDB: Scan and BatchWriteItem, which no
// request path uses, besides reads and single writes. *dynamodb.Client implements it.
type DeleteAPI interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

var _ DeleteAPI = (*dynamodb.Client)(nil)

// ProjectDeletionStore is the table side of deleting a project (projectdelete.Store): the
// deletion's marker item (DELETE#<project> / DELETION), the project's keys and links, the
// filtered parallel Scan and batched deletes.
type ProjectDeletionStore struct {
	api   DeleteAPI
	table string
}

var _ projectdelete.Store = (*ProjectDeletionStore)(nil)

// NewProjectDeletionStore returns the store of project deletions in table.
func NewProjectDeletionStore(api DeleteAPI, table string) *ProjectDeletionStore {
	return &ProjectDeletionStore{api: api, table: table}
}

// deletionItem is the marker of a deletion under way.
type deletionItem struct {
	PK            string     `dynamodbav:"PK"`
	SK            string     `dynamodbav:"SK"`
	ProjectID     string     `dynamodbav:"project_id"`
	Phase         string     `dynamodbav:"phase"`
	StartedAt     time.Time  `dynamodbav:"started_at"`
	KeysDeletedAt *time.Time `dynamodbav:"keys_deleted_at,omitempty"`
	Segments      int        `dynamodbav:"segments"`
	// Cursors is the last key each Scan segment has finished ("PK\x00SK"), or "done".
	Cursors map[string]string `dynamodbav:"cursors"`
}

// Marker implements projectdelete.Store.
func (s *ProjectDeletionStore) Marker(ctx context.Context, projectID string) (projectdelete.Marker, bool, error) {
	var it deletionItem
	found, err := s.get(ctx, deletionPK(projectID), skDeletion, &it)
	if err != nil || !found {
		return projectdelete.Marker{}, false, err
	}
	return projectdelete.Marker{ProjectID: it.ProjectID, Phase: it.Phase, StartedAt: it.StartedAt, KeysDeletedAt: it.KeysDeletedAt,
		Segments: it.Segments, Cursors: it.Cursors}, true, nil
}

// PutMarker implements projectdelete.Store.
func (s *ProjectDeletionStore) PutMarker(ctx context.Context, m projectdelete.Marker) error {
	item, err := marshal(deletionItem{PK: deletionPK(m.ProjectID), SK: skDeletion, ProjectID: m.ProjectID, Phase: m.Phase,
		StartedAt: m.StartedAt, KeysDeletedAt: m.KeysDeletedAt, Segments: m.Segments, Cursors: m.Cursors})
	if err != nil {
		return err
	}
	if _, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item}); err != nil {
		return storageErr("put the deletion marker", err)
	}
	return nil
}

// SetMarker implements projectdelete.Store: the marker must still exist, or two runs on one
// project would recreate the marker of a finished one.
func (s *ProjectDeletionStore) SetMarker(ctx context.Context, projectID, name string, value any) error {
	expr, err := expression.NewBuilder().WithUpdate(expression.Set(expression.Name(name), expression.Value(value))).
		WithCondition(expression.AttributeExists(expression.Name(infra.AttrPK))).Build()
	if err != nil {
		return fmt.Errorf("build marker update: %w", err)
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: key(deletionPK(projectID), skDeletion),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return errs.Conflict("the deletion of project %s was finished by another run", projectID)
	}
	if err != nil {
		return storageErr("update the deletion marker", err)
	}
	return nil
}

// DeleteMarker implements projectdelete.Store.
func (s *ProjectDeletionStore) DeleteMarker(ctx context.Context, projectID string) error {
	_, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: key(deletionPK(projectID), skDeletion)})
	if err != nil {
		return storageErr("delete the deletion marker", err)
	}
	return nil
}

// HasProject implements projectdelete.Store.
func (s *ProjectDeletionStore) HasProject(ctx context.Context, projectID string) (bool, error) {
	var project projectItem
	return s.get(ctx, projectPK(projectID), skProject, &project)
}

// DeleteProject implements projectdelete.Store.
func (s *ProjectDeletionStore) DeleteProject(ctx context.Context, projectID string) (bool, error) {
	out, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.table, Key: key(projectPK(projectID), skProject), ReturnValues: types.ReturnValueAllOld,
	})
	if err != nil {
		return false, storageErr("delete the project item", err)
	}
	return out.Attributes != nil, nil
}

// Keys implements projectdelete.Store: one Query of the project partition's key items
// (strongly consistent).
func (s *ProjectDeletionStore) Keys(ctx context.Context, projectID string) (lookups, listings []projectdelete.ItemKey, err error) {
	var items []keyItem
	cond := partition(projectPK(projectID)).And(expression.Key(infra.AttrSK).BeginsWith(prefixKey))
	in, err := (&Table{name: s.table}).queryInput(cond, queryOpts{})
	if err != nil {
		return nil, nil, err
	}
	if err := queryPages(ctx, s.api, in, decodeInto(&items)); err != nil {
		return nil, nil, err
	}
	for _, k := range items {
		lookups = append(lookups, projectdelete.ItemKey{PK: apiKeyPK(k.Hash), SK: skAPIKey})
		listings = append(listings, projectdelete.ItemKey{PK: k.PK, SK: k.SK})
	}
	return lookups, listings, nil
}

// FeedbackLinks implements projectdelete.Store: a Query of GSI1.
func (s *ProjectDeletionStore) FeedbackLinks(ctx context.Context, projectID string) ([]projectdelete.ItemKey, error) {
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(feedbackLinksGSI1PK(projectID)))
	in, err := (&Table{name: s.table}).queryInput(cond, queryOpts{index: infra.IndexGSI1})
	if err != nil {
		return nil, err
	}
	in.ProjectionExpression = aws.String("PK, SK")
	var out []projectdelete.ItemKey
	return out, queryPages(ctx, s.api, in, func(item map[string]types.AttributeValue) error {
		out = append(out, projectdelete.ItemKey{PK: strAttr(item, infra.AttrPK), SK: strAttr(item, infra.AttrSK)})
		return nil
	})
}

// Scan implements projectdelete.Store with a Scan filtered on the project's keys: its
// partitions, and the stragglers of the first phases (links the index had not shown, keys
// whose listing item was gone: an older run's failure, or a hand edit). A cursor is the last
// key read, "PK\x00SK".
func (s *ProjectDeletionStore) Scan(ctx context.Context, projectID string, segment, segments int, cursor string, limit int32, page func(projectdelete.ScanPage) error) error {
	filter := expression.Or(
		expression.Name(infra.AttrPK).Equal(expression.Value(projectPK(projectID))),
		expression.Name(infra.AttrPK).BeginsWith(projectPK(projectID)+"#"),
		expression.Name(infra.AttrGSI1PK).Equal(expression.Value(feedbackLinksGSI1PK(projectID))),
		expression.Name(infra.AttrPK).BeginsWith(apiKeyPK("")).And(expression.Name("project_id").Equal(expression.Value(projectID))),
	)
	expr, err := expression.NewBuilder().WithFilter(filter).
		WithProjection(expression.NamesList(expression.Name(infra.AttrPK), expression.Name(infra.AttrSK))).Build()
	if err != nil {
		return fmt.Errorf("build scan filter: %w", err)
	}
	in := &dynamodb.ScanInput{
		TableName: &s.table, Segment: aws.Int32(int32(segment)), TotalSegments: aws.Int32(int32(segments)),
		FilterExpression: expr.Filter(), ProjectionExpression: expr.Projection(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	if pk, sk, ok := strings.Cut(cursor, "\x00"); ok {
		in.ExclusiveStartKey = key(pk, sk)
	}
	for {
		out, err := s.api.Scan(ctx, in)
		if err != nil {
			return storageErr(fmt.Sprintf("scan segment %d", segment), err)
		}
		p := projectdelete.ScanPage{Keys: make([]projectdelete.ItemKey, 0, len(out.Items)), Scanned: int(out.ScannedCount)}
		for _, item := range out.Items {
			p.Keys = append(p.Keys, projectdelete.ItemKey{PK: strAttr(item, infra.AttrPK), SK: strAttr(item, infra.AttrSK)})
		}
		if out.ConsumedCapacity != nil {
			p.Units = aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
		}
		if len(out.LastEvaluatedKey) > 0 {
			p.Next = keyString(out.LastEvaluatedKey)
		}
		if err := page(p); err != nil {
			return err
		}
		if p.Next == "" {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// DeleteItems implements projectdelete.Store with BatchWriteItem, retrying unprocessed items
// with backoff.
func (s *ProjectDeletionStore) DeleteItems(ctx context.Context, keys []projectdelete.ItemKey) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(k.PK, k.SK)}}
	}
	pending := map[string][]types.WriteRequest{s.table: reqs}
	for attempt := 0; len(pending[s.table]) > 0; attempt++ {
		if attempt > 0 {
			if attempt > maxBatchRetries {
				return errs.Unavailable("storage is busy: %d deletes still unprocessed; run the command again", len(pending[s.table]))
			}
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return err
			}
		}
		out, err := s.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		if err != nil {
			return storageErr("batch delete", err)
		}
		pending = out.UnprocessedItems
	}
	return nil
}

func (s *ProjectDeletionStore) get(ctx context.Context, pk, sk string, out any) (bool, error) {
	res, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: key(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, storageErr("get "+pk, err)
	}
	if res.Item == nil {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return false, fmt.Errorf("decode %s: %w", pk, err)
	}
	return true, nil
}

// partitionKinds name the partitions under P#<project>#<tag>#...
var partitionKinds = map[string]string{
	"PROMPT": "prompt", "PV": "version_pointer", "PC": "completions",
	"S": "span", "T": "trace", "SE": "session",
	"J": "judge", "OR": "optimization_run", "MC": "model_call", "RL": "rate_limit",
	prefixListIndex: "list_index",
}

// ItemKind implements projectdelete.Store: a partition's kind, finer for the span partition
// ("feedback", "evaluation", "claim") and the project partition ("price", "time_index_days").
func (s *ProjectDeletionStore) ItemKind(projectID string, k projectdelete.ItemKey) string {
	return ItemKind(projectID, k.PK, k.SK)
}

// ItemKind names the kind of the item at pk, sk of project (ProjectDeletionStore.ItemKind).
func ItemKind(projectID, pk, sk string) string {
	switch {
	case strings.HasPrefix(pk, apiKeyPK("")):
		return projectdelete.KindKeyLookup
	case strings.HasPrefix(pk, feedbackLinkPK("")):
		return projectdelete.KindFeedbackLink
	case pk == projectPK(projectID):
		switch {
		case sk == skProject:
			return projectdelete.KindProject
		case strings.HasPrefix(sk, prefixKey):
			return projectdelete.KindKey
		case strings.HasPrefix(sk, prefixPrice):
			return "price"
		case strings.HasPrefix(sk, "DAYS#"):
			return "time_index_days"
		}
		return projectdelete.KindOther
	}
	rest, ok := strings.CutPrefix(pk, projectPK(projectID)+"#")
	if !ok {
		return projectdelete.KindOther
	}
	tag, _, _ := strings.Cut(rest, "#")
	kind, ok := partitionKinds[tag]
	if !ok {
		return projectdelete.KindOther
	}
	if kind == "span" {
		switch {
		case strings.HasPrefix(sk, prefixFeedback):
			return "feedback"
		case strings.HasPrefix(sk, prefixEvaluation):
			return "evaluation"
		case strings.HasPrefix(sk, "CLAIM#"):
			return "claim"
		}
	}
	return kind
}
