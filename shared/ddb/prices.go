package ddb

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/pricing"
)

// PriceStore keeps projects' own model prices, one item per model in the project partition
// (P#<project> / PRICE#<model>), so that a project's prices are one Query.
type PriceStore struct{ t *Table }

var _ pricing.OverrideLister = (*PriceStore)(nil)

// NewPriceStore returns the price overrides in t.
func NewPriceStore(t *Table) *PriceStore { return &PriceStore{t: t} }

const prefixPrice = "PRICE#"

type priceItem struct {
	PK          string    `dynamodbav:"PK"`
	SK          string    `dynamodbav:"SK"`
	Model       string    `dynamodbav:"model"`
	Provider    string    `dynamodbav:"provider,omitempty"`
	Input       float64   `dynamodbav:"input"`
	Output      float64   `dynamodbav:"output"`
	CachedInput float64   `dynamodbav:"cached_input,omitempty"`
	CacheWrite  float64   `dynamodbav:"cache_write,omitempty"`
	UpdatedAt   time.Time `dynamodbav:"updated_at"`
	UpdatedBy   string    `dynamodbav:"updated_by,omitempty"`
}

func (it priceItem) toOverride() pricing.Override {
	return pricing.Override{
		Model: it.Model, UpdatedAt: it.UpdatedAt, UpdatedBy: it.UpdatedBy,
		Price: pricing.Price{ID: it.Model, Provider: it.Provider, Input: it.Input, Output: it.Output, CachedInput: it.CachedInput, CacheWrite: it.CacheWrite},
	}
}

// PutOverride stores (or replaces) a project's price for a model.
func (s *PriceStore) PutOverride(ctx context.Context, projectID string, o pricing.Override) error {
	item, err := marshal(priceItem{
		PK: projectPK(projectID), SK: prefixPrice + o.Model, Model: o.Model, Provider: o.Provider,
		Input: o.Input, Output: o.Output, CachedInput: o.CachedInput, CacheWrite: o.CacheWrite,
		UpdatedAt: o.UpdatedAt, UpdatedBy: o.UpdatedBy,
	})
	if err != nil {
		return err
	}
	if _, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item}); err != nil {
		return storageErr("put price", err)
	}
	return nil
}

// Overrides implements pricing.OverrideLister.
func (s *PriceStore) Overrides(ctx context.Context, projectID string) ([]pricing.Override, error) {
	var items []priceItem
	cond := partition(projectPK(projectID)).And(expression.Key(infra.AttrSK).BeginsWith(prefixPrice))
	if err := s.t.query(ctx, cond, queryOpts{}, decodeInto(&items)); err != nil {
		return nil, err
	}
	out := make([]pricing.Override, len(items))
	for i, it := range items {
		out[i] = it.toOverride()
	}
	return out, nil
}

// DeleteOverride removes a project's price for a model; errs.CodeNotFound when there is none.
func (s *PriceStore) DeleteOverride(ctx context.Context, projectID, model string) error {
	_, err := s.t.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.t.name, Key: key(projectPK(projectID), prefixPrice+model),
		ConditionExpression: aws.String("attribute_exists(PK)"),
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return errs.NotFound("project has no price for model %q", model)
	}
	if err != nil {
		return storageErr("delete price", err)
	}
	return nil
}
