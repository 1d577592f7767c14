package ddb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/signal"
)

// SignalStore keeps entity records, A/B tests and their aggregates (keys.go says where).
// A record is written whole with a condition on its version, and in the same transaction
// every aggregate its change moves is updated with ADD: the record's version is what makes a
// retried write count nothing twice, so no transaction token is needed. Aggregates hold their
// sums as DynamoDB numbers (exact decimals).
//
// An entity's record expires retention after its last write (never when 0), as the spans it
// joins do; the tests and their aggregates stay.
type SignalStore struct {
	t         *Table
	retention time.Duration
}

var _ signal.Store = (*SignalStore)(nil)

// NewSignalStore returns the signal store in t, whose entity records expire retention after
// their last write (0: never).
func NewSignalStore(t *Table, retention time.Duration) *SignalStore {
	return &SignalStore{t: t, retention: retention}
}

type entityItem struct {
	PK      string                `dynamodbav:"PK"`
	SK      string                `dynamodbav:"SK"`
	Type    string                `dynamodbav:"entity_type"`
	ID      string                `dynamodbav:"entity_id"`
	Signals map[string]signalAttr `dynamodbav:"sig,omitempty"`
	Choices map[string]choiceAttr `dynamodbav:"ab,omitempty"`
	Version int64                 `dynamodbav:"ver"`
	TTL     int64                 `dynamodbav:"ttl,omitempty"`
}

type signalAttr struct {
	Type      string    `dynamodbav:"t"`
	Value     string    `dynamodbav:"v"`
	CreatedAt time.Time `dynamodbav:"c"`
	UpdatedAt time.Time `dynamodbav:"u"`
}

type choiceAttr struct {
	Variant string    `dynamodbav:"k"`
	ID      string    `dynamodbav:"id"`
	At      time.Time `dynamodbav:"at"`
	Carried bool      `dynamodbav:"cr,omitempty"`
}

func toEntityItem(projectID string, e signal.Entity) entityItem {
	it := entityItem{PK: entityPK(projectID, e.Ref.Type, e.Ref.ID), SK: skEntity, Type: e.Ref.Type, ID: e.Ref.ID, Version: e.Version,
		Signals: map[string]signalAttr{}, Choices: map[string]choiceAttr{}}
	for n, s := range e.Signals {
		it.Signals[n] = signalAttr{Type: s.Type, Value: s.Value, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	}
	for n, c := range e.Choices {
		it.Choices[n] = choiceAttr{Variant: c.Variant, ID: c.ID, At: c.At, Carried: c.Carried}
	}
	return it
}

func (it entityItem) toEntity(ref signal.EntityRef) signal.Entity {
	e := signal.Entity{Ref: ref, Version: it.Version, Signals: map[string]signal.Signal{}, Choices: map[string]signal.Choice{}}
	for n, s := range it.Signals {
		e.Signals[n] = signal.Signal{Name: n, Type: s.Type, Value: s.Value, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	}
	for n, c := range it.Choices {
		e.Choices[n] = signal.Choice{Test: n, Variant: c.Variant, ID: c.ID, At: c.At, Carried: c.Carried}
	}
	return e
}

// Entities implements signal.Store with BatchGetItem (100 records a request).
func (s *SignalStore) Entities(ctx context.Context, projectID string, refs []signal.EntityRef) (map[signal.EntityRef]signal.Entity, error) {
	keys := make([]map[string]types.AttributeValue, len(refs))
	for i, r := range refs {
		keys[i] = key(entityPK(projectID, r.Type, r.ID), skEntity)
	}
	found, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[signal.EntityRef]signal.Entity, len(refs))
	for i, r := range refs {
		var it entityItem
		if av, ok := found[keyString(keys[i])]; ok {
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return nil, fmt.Errorf("decode entity record: %w", err)
			}
		}
		out[r] = it.toEntity(r)
	}
	return out, nil
}

// Signals reads the signals of one entity, by name, with one GetItem of its record ([] when
// nothing was recorded on it): what a span, trace or session answer shows of its signals.
func (s *SignalStore) Signals(ctx context.Context, projectID string, ref signal.EntityRef) ([]api.Signal, error) {
	var it entityItem
	if _, err := s.t.get(ctx, entityPK(projectID, ref.Type, ref.ID), skEntity, &it); err != nil {
		return nil, err
	}
	return it.toEntity(ref).Wire(), nil
}

// Save implements signal.Store: the changes are packed, in order, into transactions of at
// most maxTransactItems actions, each the record with the changes so far (version + 1) and the
// aggregates those changes move. A PutItem when no change moves an aggregate.
func (s *SignalStore) Save(ctx context.Context, projectID string, e signal.Entity, changes []signal.Change) error {
	for len(changes) > 0 {
		n, deltas := pack(changes)
		next := apply(e, changes[:n])
		if err := s.saveOne(ctx, projectID, e.Version, next, s.expiry(changes[:n]), deltas); err != nil {
			return err
		}
		e, changes = next, changes[n:]
	}
	return nil
}

// pack takes the longest prefix of changes whose deltas, merged per aggregate, fit one
// transaction beside the record, and returns its length and the merged deltas.
func pack(changes []signal.Change) (int, []signal.Delta) {
	var deltas []signal.Delta
	for i, c := range changes {
		merged := mergeDeltas(append(slices.Clone(deltas), c.Deltas...))
		if i > 0 && 1+len(merged) > maxTransactItems {
			return i, deltas
		}
		deltas = merged
	}
	return len(changes), deltas
}

// mergeDeltas adds up the deltas of the same aggregate, keeping their first order.
func mergeDeltas(ds []signal.Delta) []signal.Delta {
	var out []signal.Delta
	at := map[[3]string]int{}
	for _, d := range ds {
		k := [3]string{d.Test, d.Variant, d.Signal}
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			out = append(out, d)
			continue
		}
		out[i] = signal.AddDeltas(out[i], d)
	}
	return out
}

// apply returns e with changes applied and its version advanced.
func apply(e signal.Entity, changes []signal.Change) signal.Entity {
	e.Signals, e.Choices = maps.Clone(e.Signals), maps.Clone(e.Choices)
	if e.Signals == nil {
		e.Signals = map[string]signal.Signal{}
	}
	if e.Choices == nil {
		e.Choices = map[string]signal.Choice{}
	}
	for _, c := range changes {
		if c.Signal != nil {
			e.Signals[c.Signal.Name] = *c.Signal
		}
		if c.Choice != nil {
			e.Choices[c.Choice.Test] = *c.Choice
		}
	}
	e.Version++
	return e
}

// expiry is the TTL of a record written with changes: retention after the latest of their
// times; 0 with retention off.
func (s *SignalStore) expiry(changes []signal.Change) int64 {
	if s.retention <= 0 {
		return 0
	}
	var at time.Time
	for _, c := range changes {
		if c.Signal != nil && c.Signal.UpdatedAt.After(at) {
			at = c.Signal.UpdatedAt
		}
		if c.Choice != nil && c.Choice.At.After(at) {
			at = c.Choice.At
		}
	}
	return at.Add(s.retention).Unix()
}

// saveOne writes the record next, expiring at ttl, on the condition that it is still at
// version, with deltas.
func (s *SignalStore) saveOne(ctx context.Context, projectID string, version int64, next signal.Entity, ttl int64, deltas []signal.Delta) error {
	it := toEntityItem(projectID, next)
	it.TTL = ttl
	item, err := marshal(it)
	if err != nil {
		return err
	}
	cond := expression.Name(infra.AttrPK).AttributeNotExists()
	if version > 0 {
		cond = expression.Name("ver").Equal(expression.Value(version))
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("build record condition: %w", err)
	}
	put := &types.Put{TableName: &s.t.name, Item: item, ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
	if len(deltas) == 0 {
		_, err := s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: put.TableName, Item: put.Item,
			ConditionExpression: put.ConditionExpression, ExpressionAttributeNames: put.ExpressionAttributeNames,
			ExpressionAttributeValues: put.ExpressionAttributeValues})
		if errors.As(err, new(*types.ConditionalCheckFailedException)) {
			return signal.ErrStale
		}
		if err != nil {
			return storageErr("put entity record", err)
		}
		return nil
	}
	items := []types.TransactWriteItem{{Put: put}}
	for _, d := range deltas {
		u, err := s.aggregateUpdate(projectID, d)
		if err != nil {
			return err
		}
		items = append(items, types.TransactWriteItem{Update: u})
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if codes := cancellationCodes(err); len(codes) > 0 && codes[0] == "ConditionalCheckFailed" {
		return signal.ErrStale
	}
	if err != nil {
		return storageErr("save entity record", err)
	}
	return nil
}

// aggregateUpdate adds a delta to its aggregate: the variant's count, or a signal's count, sum
// and sum of squares (numbers sent as the exact decimal text).
func (s *SignalStore) aggregateUpdate(projectID string, d signal.Delta) (*types.Update, error) {
	num := func(v string) expression.ValueBuilder {
		return expression.Value(&types.AttributeValueMemberN{Value: v})
	}
	u := expression.Add(expression.Name("n"), num(fmt.Sprint(d.N))).
		Set(expression.Name("variant"), expression.Value(d.Variant))
	if d.Signal != "" {
		u = u.Add(expression.Name("s"), num(d.Sum)).Add(expression.Name("q"), num(d.SumSq)).
			Set(expression.Name("signal"), expression.Value(d.Signal)).
			Set(expression.Name("t"), expression.Value(d.SignalType))
	}
	expr, err := expression.NewBuilder().WithUpdate(u).Build()
	if err != nil {
		return nil, fmt.Errorf("build aggregate update: %w", err)
	}
	return &types.Update{TableName: &s.t.name, Key: key(abTestPK(projectID, d.Test), abAggregateSK(d.Variant, d.Signal)),
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}, nil
}

type abTestItem struct {
	PK           string          `dynamodbav:"PK"`
	SK           string          `dynamodbav:"SK"`
	GSI1PK       string          `dynamodbav:"GSI1PK"`
	GSI1SK       string          `dynamodbav:"GSI1SK"`
	Name         string          `dynamodbav:"name"`
	Variants     []abVariantAttr `dynamodbav:"variants"`
	DurationDays int             `dynamodbav:"duration_days"`
	StartedAt    time.Time       `dynamodbav:"started_at"`
	EndsAt       time.Time       `dynamodbav:"ends_at"`
	Prompt       string          `dynamodbav:"prompt,omitempty"`
	Tag          string          `dynamodbav:"tag,omitempty"`
}

type abVariantAttr struct {
	Key    string  `dynamodbav:"k"`
	Value  string  `dynamodbav:"v"`
	Weight float64 `dynamodbav:"w"`
}

func (it abTestItem) toTest() signal.Test {
	t := signal.Test{Name: it.Name, DurationDays: it.DurationDays, StartedAt: it.StartedAt, EndsAt: it.EndsAt, Prompt: it.Prompt, Tag: it.Tag}
	for _, v := range it.Variants {
		t.Variants = append(t.Variants, signal.Variant{Key: v.Key, Value: v.Value, Weight: v.Weight})
	}
	return t
}

// CreateTest implements signal.Store: one conditional PutItem, whose failure returns the test
// already stored (a GetItem where the endpoint does not return it).
func (s *SignalStore) CreateTest(ctx context.Context, projectID string, t signal.Test) (signal.Test, error) {
	it := toABTestItem(projectID, t)
	item, err := marshal(it)
	if err != nil {
		return signal.Test{}, err
	}
	_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.t.name, Item: item,
		ConditionExpression:                 aws.String("attribute_not_exists(PK)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var failed *types.ConditionalCheckFailedException
	if !errors.As(err, &failed) {
		if err != nil {
			return signal.Test{}, storageErr("create A/B test", err)
		}
		return t, nil
	}
	var old abTestItem
	if failed.Item != nil {
		if err := attributevalue.UnmarshalMap(failed.Item, &old); err != nil {
			return signal.Test{}, fmt.Errorf("decode A/B test: %w", err)
		}
		return old.toTest(), nil
	}
	if _, err := s.t.get(ctx, it.PK, skABTest, &old); err != nil {
		return signal.Test{}, err
	}
	return old.toTest(), nil
}

// toABTestItem is the item of test t.
func toABTestItem(projectID string, t signal.Test) abTestItem {
	it := abTestItem{PK: abTestPK(projectID, t.Name), SK: skABTest, GSI1PK: abTestsGSI1PK(projectID), GSI1SK: t.Name,
		Name: t.Name, DurationDays: t.DurationDays, StartedAt: t.StartedAt, EndsAt: t.EndsAt, Prompt: t.Prompt, Tag: t.Tag}
	for _, v := range t.Variants {
		it.Variants = append(it.Variants, abVariantAttr{Key: v.Key, Value: v.Value, Weight: v.Weight})
	}
	return it
}

// Tests implements signal.Store with a Query of GSI1 (paginated).
func (s *SignalStore) Tests(ctx context.Context, projectID string) ([]signal.Test, error) {
	var items []abTestItem
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(abTestsGSI1PK(projectID)))
	if err := s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI1}, decodeInto(&items)); err != nil {
		return nil, err
	}
	out := make([]signal.Test, len(items))
	for i, it := range items {
		out[i] = it.toTest()
	}
	return out, nil
}

// TestsNamed implements signal.Store with BatchGetItem (100 tests a request).
func (s *SignalStore) TestsNamed(ctx context.Context, projectID string, names []string) (map[string]signal.Test, error) {
	keys := make([]map[string]types.AttributeValue, len(names))
	for i, n := range names {
		keys[i] = key(abTestPK(projectID, n), skABTest)
	}
	found, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := map[string]signal.Test{}
	for _, av := range found {
		var it abTestItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, fmt.Errorf("decode A/B test: %w", err)
		}
		out[it.Name] = it.toTest()
	}
	return out, nil
}

type abAggregateItem struct {
	SK      string `dynamodbav:"SK"`
	Variant string `dynamodbav:"variant"`
	Signal  string `dynamodbav:"signal"`
	Type    string `dynamodbav:"t"`
	N       int64  `dynamodbav:"n"`
	Sum     string `dynamodbav:"-"`
	SumSq   string `dynamodbav:"-"`
}

// Aggregates implements signal.Store with one Query of the test's partition (strongly
// consistent, paginated): 1 + variants x (1 + signals) items.
func (s *SignalStore) Aggregates(ctx context.Context, projectID, name string) (signal.Test, []signal.Aggregate, error) {
	var t *signal.Test
	var aggs []signal.Aggregate
	err := s.t.query(ctx, partition(abTestPK(projectID, name)), queryOpts{}, func(av map[string]types.AttributeValue) error {
		if sk, _ := av[infra.AttrSK].(*types.AttributeValueMemberS); sk != nil && sk.Value == skABTest {
			var it abTestItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return fmt.Errorf("decode A/B test: %w", err)
			}
			test := it.toTest()
			t = &test
			return nil
		}
		var it abAggregateItem
		if err := unmarshalNumbersAsText(av, &it); err != nil {
			return err
		}
		aggs = append(aggs, signal.Aggregate{Variant: it.Variant, Signal: it.Signal, SignalType: it.Type, N: it.N, Sum: it.Sum, SumSq: it.SumSq})
		return nil
	})
	if err != nil {
		return signal.Test{}, nil, err
	}
	if t == nil {
		return signal.Test{}, nil, errs.NotFound("A/B test %q not found", name)
	}
	return *t, aggs, nil
}

// unmarshalNumbersAsText decodes an aggregate, reading its sums as their exact decimal text.
func unmarshalNumbersAsText(av map[string]types.AttributeValue, it *abAggregateItem) error {
	if err := attributevalue.UnmarshalMap(av, it); err != nil {
		return fmt.Errorf("decode A/B aggregate: %w", err)
	}
	for name, dst := range map[string]*string{"s": &it.Sum, "q": &it.SumSq} {
		if n, ok := av[name].(*types.AttributeValueMemberN); ok {
			*dst = n.Value
		}
	}
	return nil
}
