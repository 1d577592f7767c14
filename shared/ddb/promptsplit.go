package ddb

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/signal"
)

// splitItem is the split of a tag (SPLIT#<tag> in the prompt's partition), beside the tag it
// splits so that a fetch reads both in one BatchGetItem. Ends is EndsAt in Unix seconds, for
// the condition that lets a split replace one that has ended.
type splitItem struct {
	PK           string             `dynamodbav:"PK"`
	SK           string             `dynamodbav:"SK"`
	Test         string             `dynamodbav:"test"`
	Tag          string             `dynamodbav:"tag"`
	Variants     []splitVariantAttr `dynamodbav:"variants"`
	DurationDays int                `dynamodbav:"duration_days"`
	StartedAt    time.Time          `dynamodbav:"started_at"`
	EndsAt       time.Time          `dynamodbav:"ends_at"`
	Ends         int64              `dynamodbav:"ends"`
	StartedBy    string             `dynamodbav:"started_by,omitempty"`
}

type splitVariantAttr struct {
	Version   int     `dynamodbav:"n"`
	VersionID string  `dynamodbav:"id"`
	Weight    float64 `dynamodbav:"w"`
}

func toSplitItem(projectID string, s prompt.Split) splitItem {
	it := splitItem{PK: promptPK(projectID, s.Slug), SK: splitSK(s.Tag), Test: s.Test, Tag: s.Tag, DurationDays: s.DurationDays,
		StartedAt: s.StartedAt, EndsAt: s.EndsAt, Ends: s.EndsAt.Unix(), StartedBy: s.StartedBy}
	for _, v := range s.Variants {
		it.Variants = append(it.Variants, splitVariantAttr{Version: v.Version, VersionID: v.VersionID, Weight: v.Weight})
	}
	return it
}

func (it splitItem) toSplit(slug string) *prompt.Split {
	s := &prompt.Split{Test: it.Test, Slug: slug, Tag: it.Tag, DurationDays: it.DurationDays, StartedAt: it.StartedAt,
		EndsAt: it.EndsAt, StartedBy: it.StartedBy}
	for _, v := range it.Variants {
		s.Variants = append(s.Variants, prompt.SplitVariant{Version: v.Version, VersionID: v.VersionID, Weight: v.Weight})
	}
	return s
}

// splitTest is the A/B test of a split: a variant per version, keyed "v<n>", valued its id.
func splitTest(s prompt.Split) signal.Test {
	t := signal.Test{Name: s.Test, DurationDays: s.DurationDays, StartedAt: s.StartedAt, EndsAt: s.EndsAt, Prompt: s.Slug, Tag: s.Tag}
	for _, v := range s.Variants {
		t.Variants = append(t.Variants, signal.Variant{Key: v.Key(), Value: v.VersionID, Weight: v.Weight})
	}
	return t
}

// TagByName implements prompt.Store with one BatchGetItem of the head, the tag and its split.
func (s *PromptStore) TagByName(ctx context.Context, projectID, slug, tag string) (prompt.Tag, int, error) {
	pk := promptPK(projectID, slug)
	items, err := s.t.batchGet(ctx, []map[string]types.AttributeValue{key(pk, skPrompt), key(pk, tagSK(tag)), key(pk, splitSK(tag))})
	if err != nil {
		return prompt.Tag{}, 0, err
	}
	var head promptHead
	var t tagItem
	var sp splitItem
	for sk, out := range map[string]any{skPrompt: &head, tagSK(tag): &t, splitSK(tag): &sp} {
		if err := decodeFound(items, pk, sk, out); err != nil {
			return prompt.Tag{}, 0, err
		}
	}
	switch {
	case head.ID == "":
		return prompt.Tag{}, 0, promptNotFound(slug)
	case t.Number == 0:
		return prompt.Tag{}, 0, errs.NotFound("prompt %q has no tag %q", slug, tag)
	}
	out := prompt.Tag{Name: t.Name, Version: t.Number, VersionID: t.VersionID, UpdatedAt: t.UpdatedAt, UpdatedBy: t.UpdatedBy}
	if sp.Test != "" {
		out.Split = sp.toSplit(slug)
	}
	return out, head.LatestVersion, nil
}

// Version implements prompt.Store with one GetItem.
func (s *PromptStore) Version(ctx context.Context, projectID, slug string, n int) (prompt.Version, error) {
	return s.version(ctx, projectID, slug, n)
}

// StartSplit implements prompt.Store: one BatchGetItem (the head, the tag, its split and the
// versions), then one TransactWriteItems that creates the test (which must be new) and the
// split (which must be new or past its end).
func (s *PromptStore) StartSplit(ctx context.Context, projectID string, sp prompt.Split) (prompt.Split, error) {
	pk := promptPK(projectID, sp.Slug)
	keys := []map[string]types.AttributeValue{key(pk, skPrompt), key(pk, tagSK(sp.Tag)), key(pk, splitSK(sp.Tag))}
	for _, v := range sp.Variants {
		keys = append(keys, key(pk, versionSK(v.Version)))
	}
	items, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return prompt.Split{}, err
	}
	var head promptHead
	var t tagItem
	var old splitItem
	for sk, out := range map[string]any{skPrompt: &head, tagSK(sp.Tag): &t, splitSK(sp.Tag): &old} {
		if err := decodeFound(items, pk, sk, out); err != nil {
			return prompt.Split{}, err
		}
	}
	switch {
	case head.ID == "":
		return prompt.Split{}, promptNotFound(sp.Slug)
	case t.Number == 0:
		return prompt.Split{}, errs.NotFound("prompt %q has no tag %q: pin the tag before splitting it", sp.Slug, sp.Tag)
	case old.Test != "" && sp.StartedAt.Before(old.EndsAt):
		return prompt.Split{}, errs.Conflict("tag %q of prompt %q has a running split (A/B test %q): end it first", sp.Tag, sp.Slug, old.Test)
	}
	for i, v := range sp.Variants {
		var it versionItem
		if err := decodeFound(items, pk, versionSK(v.Version), &it); err != nil {
			return prompt.Split{}, err
		}
		if it.ID == "" {
			return prompt.Split{}, errs.NotFound("version %d of prompt %q not found (latest is %d)", v.Version, sp.Slug, head.LatestVersion)
		}
		sp.Variants[i].VersionID = it.ID
	}
	testAV, err := marshal(toABTestItem(projectID, splitTest(sp)))
	if err != nil {
		return prompt.Split{}, err
	}
	splitAV, err := marshal(toSplitItem(projectID, sp))
	if err != nil {
		return prompt.Split{}, err
	}
	cond := expression.AttributeNotExists(expression.Name("PK")).Or(expression.Name("ends").LessThanEqual(expression.Value(sp.StartedAt.Unix())))
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return prompt.Split{}, fmt.Errorf("build split condition: %w", err)
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.t.name, Item: testAV, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		{Put: &types.Put{TableName: &s.t.name, Item: splitAV, ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}},
	}})
	codes := cancellationCodes(err)
	switch {
	case len(codes) > 0 && codes[0] == "ConditionalCheckFailed":
		return prompt.Split{}, errs.Conflict("the project has an A/B test named %q: name the split otherwise", sp.Test)
	case len(codes) > 1 && codes[1] == "ConditionalCheckFailed":
		return prompt.Split{}, errs.Conflict("tag %q of prompt %q has a running split: end it first", sp.Tag, sp.Slug)
	case err != nil:
		return prompt.Split{}, storageErr("start split", err)
	}
	return sp, nil
}

// EndSplit implements prompt.Store: one GetItem of the split, then one TransactWriteItems that
// moves its end and its test's to at, if it is still that split (the item stays, ended, as a
// record: PromptsFunction deletes nothing).
func (s *PromptStore) EndSplit(ctx context.Context, projectID, slug, tag string, at time.Time) (prompt.Split, error) {
	pk := promptPK(projectID, slug)
	var it splitItem
	ok, err := s.t.get(ctx, pk, splitSK(tag), &it)
	if err != nil {
		return prompt.Split{}, err
	}
	if !ok || !at.Before(it.EndsAt) {
		return prompt.Split{}, errs.NotFound("tag %q of prompt %q has no running split", tag, slug)
	}
	end, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("ends_at"), expression.Value(at)).Set(expression.Name("ends"), expression.Value(at.Unix()))).
		WithCondition(expression.Name("test").Equal(expression.Value(it.Test)).And(expression.Name("ends").Equal(expression.Value(it.Ends)))).Build()
	if err != nil {
		return prompt.Split{}, fmt.Errorf("build split update: %w", err)
	}
	endTest, err := expression.NewBuilder().WithUpdate(expression.Set(expression.Name("ends_at"), expression.Value(at))).
		WithCondition(expression.AttributeExists(expression.Name("PK"))).Build()
	if err != nil {
		return prompt.Split{}, fmt.Errorf("build test update: %w", err)
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: &s.t.name, Key: key(pk, splitSK(tag)), UpdateExpression: end.Update(),
			ConditionExpression: end.Condition(), ExpressionAttributeNames: end.Names(), ExpressionAttributeValues: end.Values()}},
		{Update: &types.Update{TableName: &s.t.name, Key: key(abTestPK(projectID, it.Test), skABTest), UpdateExpression: endTest.Update(),
			ConditionExpression: endTest.Condition(), ExpressionAttributeNames: endTest.Names(), ExpressionAttributeValues: endTest.Values()}},
	}})
	if codes := cancellationCodes(err); slices.Contains(codes, "ConditionalCheckFailed") {
		return prompt.Split{}, errs.Conflict("the split of tag %q changed meanwhile: read it again", tag)
	}
	if err != nil {
		return prompt.Split{}, storageErr("end split", err)
	}
	sp := it.toSplit(slug)
	sp.EndsAt = at
	return *sp, nil
}

// PromptChoices records the choices that prompt splits serve (prompt.ChoiceRecorder): the
// version a sticky caller is served is read with the caller's entity record in one
// BatchGetItem, and the choice is written on the record (signal.Service.RecordOn) only when
// the record has no choice of the test yet, so a caller's later fetches write nothing.
type PromptChoices struct {
	prompts *PromptStore
	svc     *signal.Service
}

var _ prompt.ChoiceRecorder = (*PromptChoices)(nil)

// NewPromptChoices returns the recorder over the prompt store and the signal service of the
// same table.
func NewPromptChoices(prompts *PromptStore, svc *signal.Service) *PromptChoices {
	return &PromptChoices{prompts: prompts, svc: svc}
}

// ServeVersion implements prompt.ChoiceRecorder. The choice is recorded on the entity's
// canonical ref (signal.EntityRef.Canonical: a session named by the SDK's id or its uuid5 is
// one session). An entity already in signal.MaxChoices tests is served without a record.
func (c *PromptChoices) ServeVersion(ctx context.Context, projectID, slug string, n int, ch prompt.ServedChoice) (prompt.Version, string, error) {
	pk := promptPK(projectID, slug)
	ref := signal.EntityRef{Type: ch.EntityType, ID: ch.ID}.Canonical()
	ek := key(entityPK(projectID, ref.Type, ref.ID), skEntity)
	items, err := c.prompts.t.batchGet(ctx, []map[string]types.AttributeValue{key(pk, versionSK(n)), ek})
	if err != nil {
		return prompt.Version{}, "", err
	}
	var v versionItem
	if err := decodeFound(items, pk, versionSK(n), &v); err != nil {
		return prompt.Version{}, "", err
	}
	if v.ID == "" {
		return prompt.Version{}, "", errs.NotFound("version %d of prompt %q not found", n, slug)
	}
	var rec entityItem
	if av, ok := items[keyString(ek)]; ok {
		if err := attributevalue.UnmarshalMap(av, &rec); err != nil {
			return prompt.Version{}, "", fmt.Errorf("decode entity record: %w", err)
		}
	}
	id, err := c.svc.RecordOn(ctx, projectID, rec.toEntity(ref), ch.Test, ch.Variant)
	if errs.Is(err, errs.CodeInvalid) {
		return v.toVersion(), "", nil
	}
	if err != nil {
		return prompt.Version{}, "", err
	}
	return v.toVersion(), id, nil
}
