package ddb

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/errs"
)

// DatasetStore keeps datasets, their versions (keys.go), experiments and their results
// (experiments.go). A version's rows are an object in the bucket; its item holds the object's
// key and index, under 400 KB for any version dataset.MaxRows allows (16 bytes per index
// entry).
type DatasetStore struct{ t *Table }

// NewDatasetStore returns the store over t.
func NewDatasetStore(t *Table) *DatasetStore { return &DatasetStore{t: t} }

var (
	_ dataset.Store           = (*DatasetStore)(nil)
	_ dataset.ExperimentStore = (*DatasetStore)(nil)
)

type datasetItem struct {
	PK, SK         string
	GSI1PK, GSI1SK string
	ID             string    `dynamodbav:"id"`
	Name           string    `dynamodbav:"name"`
	Description    *string   `dynamodbav:"description"`
	Latest         int       `dynamodbav:"latest"`
	RowCount       int       `dynamodbav:"row_count"`
	CreatedAt      time.Time `dynamodbav:"created_at"`
	UpdatedAt      time.Time `dynamodbav:"updated_at"`
}

func toDatasetItem(d dataset.Dataset) datasetItem {
	return datasetItem{
		PK: datasetPK(d.ProjectID, d.Name), SK: skDataset, GSI1PK: datasetsGSI1PK(d.ProjectID), GSI1SK: d.Name,
		ID: d.ID, Name: d.Name, Description: d.Description, Latest: d.Latest, RowCount: d.RowCount, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	}
}

func (it datasetItem) toDataset(projectID string) dataset.Dataset {
	return dataset.Dataset{
		ID: it.ID, ProjectID: projectID, Name: it.Name, Description: it.Description, Latest: it.Latest,
		RowCount: it.RowCount, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt,
	}
}

type datasetVersionItem struct {
	PK, SK      string
	ID          string    `dynamodbav:"id"`
	DatasetID   string    `dynamodbav:"dataset_id"`
	DatasetName string    `dynamodbav:"dataset_name"`
	Number      int       `dynamodbav:"number"`
	RowCount    int       `dynamodbav:"row_count"`
	Bytes       int64     `dynamodbav:"bytes"`
	Object      string    `dynamodbav:"object"`
	Index       []byte    `dynamodbav:"index"`
	Directory   []byte    `dynamodbav:"row_directory,omitempty"`
	CreatedAt   time.Time `dynamodbav:"created_at"`
}

func toDatasetVersionItem(pk, sk string, v dataset.Version) datasetVersionItem {
	return datasetVersionItem{
		PK: pk, SK: sk, ID: v.ID, DatasetID: v.DatasetID, DatasetName: v.DatasetName, Number: v.Number, RowCount: v.RowCount,
		Bytes: v.Bytes, Object: v.Object, Index: dataset.EncodeMarks(v.Marks),
		Directory: dataset.EncodeRowDirectory(v.Directory), CreatedAt: v.CreatedAt,
	}
}

func (it datasetVersionItem) toVersion(projectID string) (dataset.Version, error) {
	marks, err := dataset.DecodeMarks(it.Index)
	if err != nil {
		return dataset.Version{}, fmt.Errorf("version %s: %w", it.ID, err)
	}
	dir, err := dataset.DecodeRowDirectory(it.Directory)
	if err != nil {
		return dataset.Version{}, fmt.Errorf("version %s: %w", it.ID, err)
	}
	return dataset.Version{
		ID: it.ID, ProjectID: projectID, DatasetID: it.DatasetID, DatasetName: it.DatasetName, Number: it.Number,
		RowCount: it.RowCount, Bytes: it.Bytes, Object: it.Object, Marks: marks, Directory: dir, CreatedAt: it.CreatedAt,
	}, nil
}

// CreateDataset implements dataset.Store: one conditional PutItem.
func (s *DatasetStore) CreateDataset(ctx context.Context, d dataset.Dataset) error {
	item, err := marshal(toDatasetItem(d))
	if err != nil {
		return err
	}
	_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")})
	if isConditionFailed(err) {
		return errs.Conflict("dataset %q already exists", d.Name)
	}
	if err != nil {
		return storageErr("put dataset", err)
	}
	return nil
}

// Dataset implements dataset.Store: one GetItem.
func (s *DatasetStore) Dataset(ctx context.Context, projectID, name string) (dataset.Dataset, error) {
	var it datasetItem
	ok, err := s.t.get(ctx, datasetPK(projectID, name), skDataset, &it)
	if err != nil {
		return dataset.Dataset{}, err
	}
	if !ok {
		return dataset.Dataset{}, errs.NotFound("dataset %q not found", name)
	}
	return it.toDataset(projectID), nil
}

// Datasets implements dataset.Store: one Query of GSI1, in name order.
func (s *DatasetStore) Datasets(ctx context.Context, projectID, cursor string, limit int) ([]dataset.Dataset, string, error) {
	cond := partitionOf(infra.AttrGSI1PK, datasetsGSI1PK(projectID))
	var items []datasetItem
	next, err := s.t.page(ctx, cond, queryOpts{index: infra.IndexGSI1, limit: int32(limit)}, cursor, func(sk string) map[string]types.AttributeValue {
		k := key(datasetPK(projectID, sk), skDataset)
		k[infra.AttrGSI1PK] = &types.AttributeValueMemberS{Value: datasetsGSI1PK(projectID)}
		k[infra.AttrGSI1SK] = &types.AttributeValueMemberS{Value: sk}
		return k
	}, infra.AttrGSI1SK, decodeInto(&items))
	if err != nil {
		return nil, "", err
	}
	out := make([]dataset.Dataset, len(items))
	for i, it := range items {
		out[i] = it.toDataset(projectID)
	}
	return out, next, nil
}

// AddVersion implements dataset.Store: one TransactWriteItems of the version, its pointer
// and the dataset's latest number, conditional on the number before it, so that numbers have
// no gaps and no two versions share one.
func (s *DatasetStore) AddVersion(ctx context.Context, v dataset.Version) error {
	version, err := marshal(toDatasetVersionItem(datasetPK(v.ProjectID, v.DatasetName), versionSK(v.Number), v))
	if err != nil {
		return err
	}
	pointer, err := marshal(toDatasetVersionItem(datasetVersionPK(v.ProjectID, v.ID), skDatasetVersion, v))
	if err != nil {
		return err
	}
	update, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("latest"), expression.Value(v.Number)).
			Set(expression.Name("row_count"), expression.Value(v.RowCount)).
			Set(expression.Name("updated_at"), expression.Value(v.CreatedAt))).
		WithCondition(expression.Name("latest").Equal(expression.Value(v.Number - 1)).
			And(expression.Name("id").Equal(expression.Value(v.DatasetID)))).Build()
	if err != nil {
		return fmt.Errorf("build version update: %w", err)
	}
	notExists := aws.String("attribute_not_exists(PK)")
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.t.name, Item: version, ConditionExpression: notExists}},
		{Put: &types.Put{TableName: &s.t.name, Item: pointer, ConditionExpression: notExists}},
		{Update: &types.Update{
			TableName: &s.t.name, Key: key(datasetPK(v.ProjectID, v.DatasetName), skDataset),
			UpdateExpression: update.Update(), ConditionExpression: update.Condition(),
			ExpressionAttributeNames: update.Names(), ExpressionAttributeValues: update.Values(),
		}},
	}})
	for i := range 3 {
		if _, failed := failedCondition(err, i); failed {
			return fmt.Errorf("add version %d of %q: %w", v.Number, v.DatasetName, errs.Conflict("version %d of dataset %q was taken", v.Number, v.DatasetName))
		}
	}
	if err != nil {
		return storageErr("add dataset version", err)
	}
	return nil
}

// Version implements dataset.Store: one GetItem, or for the latest one Query.
func (s *DatasetStore) Version(ctx context.Context, projectID, name string, n int) (dataset.Version, error) {
	var it datasetVersionItem
	if n > 0 {
		ok, err := s.t.get(ctx, datasetPK(projectID, name), versionSK(n), &it)
		if err != nil {
			return dataset.Version{}, err
		}
		if !ok {
			return dataset.Version{}, errs.NotFound("version %d of dataset %q not found", n, name)
		}
		return it.toVersion(projectID)
	}
	cond := partition(datasetPK(projectID, name)).And(expression.Key(infra.AttrSK).BeginsWith(prefixVersion))
	in, err := s.t.queryInput(cond, queryOpts{reverse: true, limit: 1})
	if err != nil {
		return dataset.Version{}, err
	}
	out, err := s.t.api.Query(ctx, in)
	if err != nil {
		return dataset.Version{}, storageErr("query latest version", err)
	}
	if len(out.Items) == 0 {
		return dataset.Version{}, errs.NotFound("dataset %q not found or has no version", name)
	}
	if err := attributevalue.UnmarshalMap(out.Items[0], &it); err != nil {
		return dataset.Version{}, fmt.Errorf("decode version: %w", err)
	}
	return it.toVersion(projectID)
}

// VersionByID implements dataset.Store: one GetItem of the version's pointer.
func (s *DatasetStore) VersionByID(ctx context.Context, projectID, id string) (dataset.Version, error) {
	var it datasetVersionItem
	ok, err := s.t.get(ctx, datasetVersionPK(projectID, id), skDatasetVersion, &it)
	if err != nil {
		return dataset.Version{}, err
	}
	if !ok {
		return dataset.Version{}, errs.NotFound("dataset version %s not found", id)
	}
	return it.toVersion(projectID)
}

// Versions implements dataset.Store: one Query, newest first.
func (s *DatasetStore) Versions(ctx context.Context, projectID, name, cursor string, limit int) ([]dataset.Version, string, error) {
	pk := datasetPK(projectID, name)
	cond := partition(pk).And(expression.Key(infra.AttrSK).BeginsWith(prefixVersion))
	var items []datasetVersionItem
	next, err := s.t.page(ctx, cond, queryOpts{reverse: true, limit: int32(limit)}, cursor, func(sk string) map[string]types.AttributeValue {
		return key(pk, sk)
	}, infra.AttrSK, decodeInto(&items))
	if err != nil {
		return nil, "", err
	}
	out := make([]dataset.Version, 0, len(items))
	for _, it := range items {
		v, err := it.toVersion(projectID)
		if err != nil {
			return nil, "", err
		}
		out = append(out, v)
	}
	return out, next, nil
}

// page runs one page of a query: at most o.limit items from cursor (the sort key, named by
// sortAttr, of the last item of the page before, as startKey builds its key), and the cursor
// of the next page ("" at the end).
func (t *Table) page(ctx context.Context, cond expression.KeyConditionBuilder, o queryOpts, cursor string,
	startKey func(sk string) map[string]types.AttributeValue, sortAttr string, decode func(map[string]types.AttributeValue) error) (string, error) {
	in, err := t.queryInput(cond, o)
	if err != nil {
		return "", err
	}
	if cursor != "" {
		sk, err := decodeListCursor(cursor)
		if err != nil {
			return "", err
		}
		in.ExclusiveStartKey = startKey(sk)
	}
	out, err := t.api.Query(ctx, in)
	if err != nil {
		return "", storageErr("query", err)
	}
	for _, item := range out.Items {
		if err := decode(item); err != nil {
			return "", err
		}
	}
	if len(out.LastEvaluatedKey) == 0 || len(out.Items) == 0 {
		return "", nil
	}
	last, _ := out.Items[len(out.Items)-1][sortAttr].(*types.AttributeValueMemberS)
	if last == nil {
		return "", nil
	}
	return encodeListCursor(last.Value), nil
}

// encodeListCursor is the cursor of a page that ends at sort key sk.
func encodeListCursor(sk string) string { return base64.RawURLEncoding.EncodeToString([]byte(sk)) }

// decodeListCursor reads a cursor of page. Errors: Invalid.
func decodeListCursor(cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) == 0 || len(b) > 512 {
		return "", errs.Invalid("cursor %q is not a cursor of this list", cursor)
	}
	return string(b), nil
}

// partitionOf is the key condition for every item of partition pk of an index whose
// partition key is attr.
func partitionOf(attr, pk string) expression.KeyConditionBuilder {
	return expression.Key(attr).Equal(expression.Value(pk))
}
