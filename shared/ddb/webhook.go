package ddb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/webhook"
)

// WebhookStore keeps webhooks (a partition per project) and their delivery logs (a partition
// per webhook, newest last in sort-key order). A delivery expires deliveryRetention after its
// last attempt.
//
// Requests per operation: create 1 Query + 1 PutItem; list 1 Query; read one 1 GetItem; delete 1
// DeleteItem; put delivery 1 PutItem; read a delivery with its webhook 1 BatchGetItem; record an
// attempt 1 PutItem; a log page 1 Query.
type WebhookStore struct{ t *Table }

var _ webhook.Store = (*WebhookStore)(nil)

// NewWebhookStore returns the webhooks of t.
func NewWebhookStore(t *Table) *WebhookStore { return &WebhookStore{t: t} }

// deliveryRetention is how long a delivery stays in the log after its last change.
const deliveryRetention = 30 * 24 * time.Hour

type webhookItem struct {
	PK        string   `dynamodbav:"PK"`
	SK        string   `dynamodbav:"SK"`
	ID        string   `dynamodbav:"id"`
	URL       string   `dynamodbav:"url"`
	Format    string   `dynamodbav:"format"`
	Events    []string `dynamodbav:"events,stringset"`
	Secret    []byte   `dynamodbav:"secret"`
	Created   int64    `dynamodbav:"ca"`
	CreatedBy string   `dynamodbav:"cb"`
}

func (it webhookItem) toWebhook(projectID string) webhook.Webhook {
	return webhook.Webhook{ID: it.ID, ProjectID: projectID, URL: it.URL, Format: it.Format, Events: slices.Sorted(slices.Values(it.Events)), Secret: it.Secret,
		CreatedAt: time.UnixMicro(it.Created).UTC(), CreatedBy: it.CreatedBy}
}

type deliveryItem struct {
	PK          string     `dynamodbav:"PK"`
	SK          string     `dynamodbav:"SK"`
	ID          string     `dynamodbav:"id"`
	WebhookID   string     `dynamodbav:"webhook_id"`
	EventID     string     `dynamodbav:"event_id"`
	EventType   string     `dynamodbav:"event_type"`
	Event       string     `dynamodbav:"event"`
	Status      string     `dynamodbav:"st"`
	Attempts    int        `dynamodbav:"n"`
	StatusCode  int        `dynamodbav:"code,omitempty"`
	LastError   string     `dynamodbav:"err,omitempty"`
	Created     time.Time  `dynamodbav:"ca"`
	Updated     time.Time  `dynamodbav:"ua"`
	WindowStart time.Time  `dynamodbav:"ws"`
	Next        *time.Time `dynamodbav:"na,omitempty"`
	TTL         int64      `dynamodbav:"ttl"`
}

func toDeliveryItem(d webhook.Delivery) deliveryItem {
	return deliveryItem{PK: deliveriesPK(d.ProjectID, d.WebhookID), SK: deliverySK(d.ID), ID: d.ID, WebhookID: d.WebhookID,
		EventID: d.EventID, EventType: d.EventType, Event: string(d.Event), Status: d.Status, Attempts: d.Attempts,
		StatusCode: d.LastStatusCode, LastError: d.LastError, Created: d.CreatedAt, Updated: d.UpdatedAt, WindowStart: d.WindowStart,
		Next: d.NextAttemptAt, TTL: d.UpdatedAt.Add(deliveryRetention).Unix()}
}

func (it deliveryItem) toDelivery(projectID string) webhook.Delivery {
	return webhook.Delivery{ID: it.ID, ProjectID: projectID, WebhookID: it.WebhookID, EventID: it.EventID, EventType: it.EventType,
		Event: []byte(it.Event), Status: it.Status, Attempts: it.Attempts, LastStatusCode: it.StatusCode, LastError: it.LastError,
		CreatedAt: it.Created, UpdatedAt: it.Updated, WindowStart: it.WindowStart, NextAttemptAt: it.Next}
}

// CreateWebhook implements webhook.Store.
func (s *WebhookStore) CreateWebhook(ctx context.Context, w webhook.Webhook) error {
	existing, err := s.Webhooks(ctx, w.ProjectID)
	if err != nil {
		return err
	}
	if len(existing) >= webhook.MaxPerProject {
		return errs.Conflict("the project has %d webhooks, the most it may have; delete one first", len(existing))
	}
	item, err := marshal(webhookItem{PK: webhooksPK(w.ProjectID), SK: webhookSK(w.ID), ID: w.ID, URL: w.URL, Format: w.Format,
		Events: w.Events, Secret: w.Secret, Created: w.CreatedAt.UnixMicro(), CreatedBy: w.CreatedBy})
	if err != nil {
		return err
	}
	_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")})
	if err != nil {
		return storageErr("put webhook", err)
	}
	return nil
}

// Webhooks implements webhook.Store.
func (s *WebhookStore) Webhooks(ctx context.Context, projectID string) ([]webhook.Webhook, error) {
	var items []webhookItem
	if err := s.t.query(ctx, partition(webhooksPK(projectID)), queryOpts{}, decodeInto(&items)); err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	out := make([]webhook.Webhook, len(items))
	for i, it := range items {
		out[i] = it.toWebhook(projectID)
	}
	return out, nil
}

// Webhook implements webhook.Store with one strongly consistent GetItem.
func (s *WebhookStore) Webhook(ctx context.Context, projectID, id string) (webhook.Webhook, error) {
	var it webhookItem
	found, err := s.t.get(ctx, webhooksPK(projectID), webhookSK(id), &it)
	if err != nil {
		return webhook.Webhook{}, fmt.Errorf("read webhook %s: %w", id, err)
	}
	if !found {
		return webhook.Webhook{}, errs.NotFound("webhook %q not found", id)
	}
	return it.toWebhook(projectID), nil
}

// DeleteWebhook implements webhook.Store with one conditional DeleteItem.
func (s *WebhookStore) DeleteWebhook(ctx context.Context, projectID, id string) error {
	_, err := s.t.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.t.name, Key: key(webhooksPK(projectID), webhookSK(id)),
		ConditionExpression: aws.String("attribute_exists(PK)")})
	if errors.As(err, new(*types.ConditionalCheckFailedException)) {
		return errs.NotFound("webhook %q not found", id)
	}
	if err != nil {
		return storageErr("delete webhook", err)
	}
	return nil
}

// PutDelivery implements webhook.Store with one conditional PutItem: when the delivery
// exists, the refusal carries it (ReturnValuesOnConditionCheckFailure ALL_OLD), so telling a
// new delivery from one stored before costs no read.
func (s *WebhookStore) PutDelivery(ctx context.Context, d webhook.Delivery) (webhook.Delivery, bool, error) {
	item, err := marshal(toDeliveryItem(d))
	if err != nil {
		return webhook.Delivery{}, false, err
	}
	_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var failed *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return d, true, nil
	case !errors.As(err, &failed):
		return webhook.Delivery{}, false, storageErr("put delivery", err)
	}
	raw := failed.Item
	if raw == nil {
		// An endpoint that ignores ReturnValuesOnConditionCheckFailure: read the item.
		got, err := s.t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name, Key: key(deliveriesPK(d.ProjectID, d.WebhookID), deliverySK(d.ID)),
			ConsistentRead: aws.Bool(true)})
		if err != nil {
			return webhook.Delivery{}, false, storageErr("read delivery "+d.ID, err)
		}
		if raw = got.Item; raw == nil {
			return webhook.Delivery{}, false, fmt.Errorf("delivery %s: refused as existing, then not found", d.ID)
		}
	}
	var it deliveryItem
	if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
		return webhook.Delivery{}, false, fmt.Errorf("decode delivery: %w", err)
	}
	return it.toDelivery(d.ProjectID), false, nil
}

// Delivery implements webhook.Store with one BatchGetItem.
func (s *WebhookStore) Delivery(ctx context.Context, projectID, webhookID, id string) (webhook.Delivery, *webhook.Webhook, error) {
	dk, wk := key(deliveriesPK(projectID, webhookID), deliverySK(id)), key(webhooksPK(projectID), webhookSK(webhookID))
	items, err := s.t.batchGet(ctx, []map[string]types.AttributeValue{dk, wk})
	if err != nil {
		return webhook.Delivery{}, nil, fmt.Errorf("read delivery %s: %w", id, err)
	}
	raw, ok := items[keyString(dk)]
	if !ok {
		return webhook.Delivery{}, nil, errs.NotFound("delivery %q of webhook %q not found", id, webhookID)
	}
	var it deliveryItem
	if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
		return webhook.Delivery{}, nil, fmt.Errorf("decode delivery: %w", err)
	}
	var w *webhook.Webhook
	if raw, ok := items[keyString(wk)]; ok {
		var wi webhookItem
		if err := attributevalue.UnmarshalMap(raw, &wi); err != nil {
			return webhook.Delivery{}, nil, fmt.Errorf("decode webhook: %w", err)
		}
		hook := wi.toWebhook(projectID)
		w = &hook
	}
	return it.toDelivery(projectID), w, nil
}

// RecordAttempt implements webhook.Store with one PutItem of the whole delivery (it is small),
// conditioned on its existence so that an expired delivery is not written back.
func (s *WebhookStore) RecordAttempt(ctx context.Context, d webhook.Delivery) error {
	item, err := marshal(toDeliveryItem(d))
	if err != nil {
		return err
	}
	_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_exists(PK)")})
	if errors.As(err, new(*types.ConditionalCheckFailedException)) {
		return errs.NotFound("delivery %q not found", d.ID)
	}
	if err != nil {
		return storageErr("record delivery attempt", err)
	}
	return nil
}

// Deliveries implements webhook.Store with one Query, newest first.
func (s *WebhookStore) Deliveries(ctx context.Context, projectID, webhookID string, limit int) ([]webhook.Delivery, error) {
	cond := partition(deliveriesPK(projectID, webhookID)).And(expression.Key(infra.AttrSK).BeginsWith(prefixDelivery))
	in, err := s.t.queryInput(cond, queryOpts{reverse: true, limit: int32(limit)})
	if err != nil {
		return nil, err
	}
	out, err := s.t.api.Query(ctx, in)
	if err != nil {
		return nil, storageErr("list deliveries", err)
	}
	var items []deliveryItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, fmt.Errorf("decode deliveries: %w", err)
	}
	ds := make([]webhook.Delivery, len(items))
	for i, it := range items {
		ds[i] = it.toDelivery(projectID)
	}
	return ds, nil
}
