package ddb

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/eventlog"
)

// EventLogStore keeps the projects' event logs: a partition per project (eventsPK), an item
// per event (eventSK: its time, then its id) holding the event's JSON, expiring
// eventlog.Retention after the event's time.
//
// Requests per operation: append 1 PutItem per event; a page 1 Query, up to maxEventQueries
// when a types filter skips events.
type EventLogStore struct{ t *Table }

var _ eventlog.Store = (*EventLogStore)(nil)

// NewEventLogStore returns the event logs of t.
func NewEventLogStore(t *Table) *EventLogStore { return &EventLogStore{t: t} }

// maxEventQueries bounds the Queries of one page: a types filter that skips many events
// answers a short page with a cursor rather than reading on.
const maxEventQueries = 4

type eventItem struct {
	PK    string `dynamodbav:"PK"`
	SK    string `dynamodbav:"SK"`
	Type  string `dynamodbav:"type"`
	Event string `dynamodbav:"ev"`
	TTL   int64  `dynamodbav:"ttl"`
}

// Append implements eventlog.Store with one PutItem per event, conditioned on the item's
// absence: an event logged already (a retried batch) is not written again.
func (s *EventLogStore) Append(ctx context.Context, events []api.Event) error {
	for _, ev := range events {
		body, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("encode event %s: %w", ev.ID, err)
		}
		item, err := marshal(eventItem{PK: eventsPK(ev.ProjectID), SK: eventSK(ev.Time, ev.ID), Type: ev.Type, Event: string(body),
			TTL: ev.Time.Add(eventlog.Retention).Unix()})
		if err != nil {
			return err
		}
		_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")})
		if err != nil && !errors.As(err, new(*types.ConditionalCheckFailedException)) {
			return storageErr("log event "+ev.ID, err)
		}
	}
	return nil
}

// Events implements eventlog.Store: newest first, or oldest after q.Since, continuing after
// q.Cursor (the sort key of the last event of the previous page).
func (s *EventLogStore) Events(ctx context.Context, projectID string, q eventlog.Query) (eventlog.Page, error) {
	after, err := decodeEventCursor(q.Cursor)
	if err != nil {
		return eventlog.Page{}, err
	}
	sk := expression.Key(infra.AttrSK)
	cond := partition(eventsPK(projectID))
	forward := q.Since != nil
	switch {
	case forward:
		// After the last event of since's instant: '~' sorts after every id.
		from := prefixEvent + q.Since.UTC().Format(eventTimeLayout) + "#~"
		if after > from {
			from = after
		}
		cond = cond.And(sk.GreaterThan(expression.Value(from)))
	case after != "":
		cond = cond.And(sk.Between(expression.Value(prefixEvent), expression.Value(after)))
	default:
		cond = cond.And(sk.BeginsWith(prefixEvent))
	}
	b := expression.NewBuilder().WithKeyCondition(cond)
	if len(q.Types) > 0 {
		types := make([]expression.OperandBuilder, len(q.Types))
		for i, t := range q.Types {
			types[i] = expression.Value(t)
		}
		b = b.WithFilter(expression.Name("type").In(types[0], types[1:]...))
	}
	expr, err := b.Build()
	if err != nil {
		return eventlog.Page{}, fmt.Errorf("build the events query: %w", err)
	}
	in := &dynamodb.QueryInput{TableName: &s.t.name, KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ScanIndexForward: aws.Bool(forward)}
	var page eventlog.Page
	for range maxEventQueries {
		in.Limit = aws.Int32(int32(q.Limit - len(page.Events)))
		out, err := s.t.api.Query(ctx, in)
		if err != nil {
			return eventlog.Page{}, storageErr("read the event log", err)
		}
		for _, raw := range out.Items {
			var it eventItem
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return eventlog.Page{}, fmt.Errorf("decode event: %w", err)
			}
			if !forward && after != "" && it.SK == after {
				continue // Between includes its bound
			}
			var ev api.Event
			if err := json.Unmarshal([]byte(it.Event), &ev); err != nil {
				return eventlog.Page{}, fmt.Errorf("decode event %s: %w", it.SK, err)
			}
			page.Events = append(page.Events, ev)
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		if out.LastEvaluatedKey == nil {
			return page, nil
		}
		if len(page.Events) >= q.Limit {
			break
		}
	}
	var last struct {
		SK string `dynamodbav:"SK"`
	}
	if err := attributevalue.UnmarshalMap(in.ExclusiveStartKey, &last); err != nil {
		return eventlog.Page{}, fmt.Errorf("decode the last key: %w", err)
	}
	page.Next = encodeEventCursor(last.SK)
	return page, nil
}

// encodeEventCursor is a page's cursor: its last sort key, base64url.
func encodeEventCursor(sk string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strings.TrimPrefix(sk, prefixEvent)))
}

// decodeEventCursor is the sort key a cursor continues after ("" for none).
func decodeEventCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < len(eventTimeLayout)+2 || !strings.Contains(string(b), "#") {
		return "", errs.Invalid("cursor is not one this list answered (%s)", api.NextCursorHeader)
	}
	return prefixEvent + string(b), nil
}
