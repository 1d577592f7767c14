package ddb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/prompt"
)

// PromptStore keeps the prompt registry. One partition per prompt (P#<project>#PROMPT#<slug>)
// holds the head item (PROMPT: the version counter and the newest version's id), a hash guard
// per content hash (HASH#<sha256>), every version (V#<n>) and every tag (TAG#<name>). A pointer
// item per version id (P#<project>#PV#<id>) carries the slug, number and bound model, so that
// the model endpoint is one read.
//
// Requests per operation: get latest 1 Query; get by number 1 BatchGetItem; get by tag 1
// BatchGetItem + 1 GetItem; ensure of existing content 1 BatchGetItem + 1 GetItem; ensure of new
// content 1 BatchGetItem + 1 TransactWriteItems (4 items), plus one of each per lost race; pin
// 1 GetItem + 1 PutItem; pinned ensure of existing content 1 BatchGetItem + 1 GetItem + 1
// PutItem; pinned ensure of new content 1 BatchGetItem + 1 TransactWriteItems (5 items).
type PromptStore struct{ t *Table }

var _ prompt.Store = (*PromptStore)(nil)

// NewPromptStore returns the prompt registry in t.
func NewPromptStore(t *Table) *PromptStore { return &PromptStore{t: t} }

// ensureTimeout bounds how long EnsureVersion keeps retrying under contention, inside the API's
// 29 s integration timeout.
const ensureTimeout = 20 * time.Second

type promptHead struct {
	PK              string    `dynamodbav:"PK"`
	SK              string    `dynamodbav:"SK"`
	GSI1PK          string    `dynamodbav:"GSI1PK"`
	GSI1SK          string    `dynamodbav:"GSI1SK"`
	ID              string    `dynamodbav:"id"`
	Slug            string    `dynamodbav:"slug"`
	LatestVersion   int       `dynamodbav:"latest_version"`
	LatestVersionID string    `dynamodbav:"latest_version_id"`
	CreatedAt       time.Time `dynamodbav:"created_at"`
	UpdatedAt       time.Time `dynamodbav:"updated_at"`
}

type versionItem struct {
	PK          string    `dynamodbav:"PK"`
	SK          string    `dynamodbav:"SK"`
	ID          string    `dynamodbav:"id"`
	PromptID    string    `dynamodbav:"prompt_id"`
	ProjectID   string    `dynamodbav:"project_id"`
	Slug        string    `dynamodbav:"slug"`
	Number      int       `dynamodbav:"version"`
	Content     string    `dynamodbav:"content"`
	ContentHash string    `dynamodbav:"content_hash"`
	ModelID     *string   `dynamodbav:"model_id,omitempty"`
	Metadata    string    `dynamodbav:"metadata,omitempty"` // JSON text: keeps numbers and nesting exact
	CreatedAt   time.Time `dynamodbav:"created_at"`
	CreatedBy   string    `dynamodbav:"created_by,omitempty"`
	UpdatedAt   time.Time `dynamodbav:"updated_at"`
	UpdatedBy   string    `dynamodbav:"updated_by,omitempty"`
}

type hashItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Number    int    `dynamodbav:"version"`
	VersionID string `dynamodbav:"version_id"`
}

type tagItem struct {
	PK        string    `dynamodbav:"PK"`
	SK        string    `dynamodbav:"SK"`
	Name      string    `dynamodbav:"tag"`
	Number    int       `dynamodbav:"version"`
	VersionID string    `dynamodbav:"version_id"`
	UpdatedAt time.Time `dynamodbav:"updated_at"`
	UpdatedBy string    `dynamodbav:"updated_by,omitempty"`
}

type pointerItem struct {
	PK      string  `dynamodbav:"PK"`
	SK      string  `dynamodbav:"SK"`
	Slug    string  `dynamodbav:"slug"`
	Number  int     `dynamodbav:"version"`
	ModelID *string `dynamodbav:"model_id,omitempty"`
}

func toVersionItem(v prompt.Version) versionItem {
	return versionItem{
		PK: promptPK(v.ProjectID, v.Slug), SK: versionSK(v.Number),
		ID: v.ID, PromptID: v.PromptID, ProjectID: v.ProjectID, Slug: v.Slug, Number: v.Number,
		Content: v.Content, ContentHash: v.ContentHash, ModelID: v.ModelID, Metadata: string(v.Metadata),
		CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy, UpdatedAt: v.UpdatedAt, UpdatedBy: v.UpdatedBy,
	}
}

func (it versionItem) toVersion() prompt.Version {
	var meta json.RawMessage
	if it.Metadata != "" {
		meta = json.RawMessage(it.Metadata)
	}
	return prompt.Version{
		ID: it.ID, PromptID: it.PromptID, ProjectID: it.ProjectID, Slug: it.Slug, Number: it.Number,
		Content: it.Content, ContentHash: it.ContentHash, ModelID: it.ModelID, Metadata: meta,
		CreatedAt: it.CreatedAt, CreatedBy: it.CreatedBy, UpdatedAt: it.UpdatedAt, UpdatedBy: it.UpdatedBy,
	}
}

// versionsOf is the key condition for every version of a prompt.
func versionsOf(projectID, slug string) expression.KeyConditionBuilder {
	return partition(promptPK(projectID, slug)).And(expression.Key(infra.AttrSK).BeginsWith(prefixVersion))
}

func promptNotFound(slug string) error { return errs.NotFound("prompt %q not found", slug) }

// EnsureVersion implements prompt.Store with ensure.
func (s *PromptStore) EnsureVersion(ctx context.Context, v prompt.Version) (prompt.Version, bool, error) {
	return s.ensure(ctx, v, nil)
}

// EnsureVersionPinned implements prompt.Store. A new version is written by ensure with the tag
// as one more item of its transaction, under PinTag's condition, so a tag that moved cancels
// the version too. Content that has a version already is pinned as PinTag pins it, the version
// being read already.
func (s *PromptStore) EnsureVersionPinned(ctx context.Context, v prompt.Version, t prompt.Tag, expected int) (prompt.Version, prompt.Tag, int, error) {
	stored, created, err := s.ensure(ctx, v, &pin{tag: t, expected: expected})
	if err != nil {
		return prompt.Version{}, prompt.Tag{}, 0, err
	}
	t.Version, t.VersionID = stored.Number, stored.ID
	if created {
		// The condition held and no tag can point at a version not yet written: the tag was at
		// expected.
		return stored, t, expected, nil
	}
	pinned, previous, err := s.putTag(ctx, v.ProjectID, v.Slug, t, &expected)
	if err != nil {
		return prompt.Version{}, prompt.Tag{}, 0, err
	}
	return stored, pinned, previous, nil
}

// pin is a tag to point at a new version in the transaction that writes it: the tag's name,
// UpdatedAt and UpdatedBy, and PinTag's precondition.
type pin struct {
	tag      prompt.Tag
	expected int
}

// pinItem is the index of the pin's write in putNewVersion's transaction.
const pinItem = 4

// ensure returns the version of slug whose content hash is v.ContentHash, or writes v as the
// next one, with p (if any) in the same transaction. The new version, its hash guard, its id
// pointer and the head's counter are written in one transaction conditioned on the hash being
// new and the counter being unchanged since it was read; a lost race reads again and either
// finds the winner's version (same content) or takes the next number. A failed condition on
// the pin is PinTag's conflict.
func (s *PromptStore) ensure(ctx context.Context, v prompt.Version, p *pin) (prompt.Version, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, ensureTimeout)
	defer cancel()
	pk := promptPK(v.ProjectID, v.Slug)
	for attempt := 1; ; attempt++ {
		items, err := s.t.batchGet(ctx, []map[string]types.AttributeValue{key(pk, skPrompt), key(pk, hashSK(v.ContentHash))})
		if err != nil {
			return prompt.Version{}, false, fmt.Errorf("ensure %q: %w", v.Slug, err)
		}
		if raw, ok := items[pk+"\x00"+hashSK(v.ContentHash)]; ok {
			var guard hashItem
			if err := attributevalue.UnmarshalMap(raw, &guard); err != nil {
				return prompt.Version{}, false, fmt.Errorf("decode hash guard: %w", err)
			}
			existing, err := s.version(ctx, v.ProjectID, v.Slug, guard.Number)
			return existing, false, err
		}
		var head *promptHead
		if raw, ok := items[pk+"\x00"+skPrompt]; ok {
			head = new(promptHead)
			if err := attributevalue.UnmarshalMap(raw, head); err != nil {
				return prompt.Version{}, false, fmt.Errorf("decode prompt head: %w", err)
			}
		}
		created, err := s.putNewVersion(ctx, head, v, p)
		if err == nil {
			return created, true, nil
		}
		if raw, failed := failedCondition(err, pinItem); p != nil && failed {
			return prompt.Version{}, false, s.pinConflict(ctx, pk, v.Slug, p.tag.Name, p.expected, raw)
		}
		if !isContention(err) {
			return prompt.Version{}, false, fmt.Errorf("ensure %q: %w", v.Slug, storageErr("put version", err))
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return prompt.Version{}, false, errs.Unavailable("too many concurrent writes to prompt %q; retry", v.Slug)
		}
	}
}

// putNewVersion writes v as the version after head (nil: the prompt's first version), and p
// (if any) as item pinItem of the same transaction.
func (s *PromptStore) putNewVersion(ctx context.Context, head *promptHead, v prompt.Version, p *pin) (prompt.Version, error) {
	pk := promptPK(v.ProjectID, v.Slug)
	v.Number = 1
	headCond := expression.AttributeNotExists(expression.Name(infra.AttrPK))
	if head != nil {
		v.Number = head.LatestVersion + 1
		v.PromptID = head.ID
		headCond = expression.Name("latest_version").Equal(expression.Value(head.LatestVersion))
	}
	createdAt := v.CreatedAt
	if head != nil {
		createdAt = head.CreatedAt
	}
	headUpdate := expression.Set(expression.Name("id"), expression.Value(v.PromptID)).
		Set(expression.Name("slug"), expression.Value(v.Slug)).
		Set(expression.Name("latest_version"), expression.Value(v.Number)).
		Set(expression.Name("latest_version_id"), expression.Value(v.ID)).
		Set(expression.Name("created_at"), expression.Value(createdAt)).
		Set(expression.Name("updated_at"), expression.Value(v.CreatedAt)).
		Set(expression.Name(infra.AttrGSI1PK), expression.Value(promptsGSI1PK(v.ProjectID))).
		Set(expression.Name(infra.AttrGSI1SK), expression.Value(v.Slug))
	headExpr, err := expression.NewBuilder().WithCondition(headCond).WithUpdate(headUpdate).Build()
	if err != nil {
		return prompt.Version{}, fmt.Errorf("build head update: %w", err)
	}
	versionAV, err := marshal(toVersionItem(v))
	if err != nil {
		return prompt.Version{}, err
	}
	guardAV, err := marshal(hashItem{PK: pk, SK: hashSK(v.ContentHash), Number: v.Number, VersionID: v.ID})
	if err != nil {
		return prompt.Version{}, err
	}
	pointerAV, err := marshal(pointerItem{
		PK: versionPointerPK(v.ProjectID, v.ID), SK: skVersionPointer, Slug: v.Slug, Number: v.Number, ModelID: v.ModelID,
	})
	if err != nil {
		return prompt.Version{}, err
	}
	notExists := aws.String("attribute_not_exists(PK)")
	writes := []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.t.name, Item: guardAV, ConditionExpression: notExists}},
		{Update: &types.Update{
			TableName: &s.t.name, Key: key(pk, skPrompt),
			UpdateExpression: headExpr.Update(), ConditionExpression: headExpr.Condition(),
			ExpressionAttributeNames: headExpr.Names(), ExpressionAttributeValues: headExpr.Values(),
		}},
		{Put: &types.Put{TableName: &s.t.name, Item: versionAV, ConditionExpression: notExists}},
		{Put: &types.Put{TableName: &s.t.name, Item: pointerAV, ConditionExpression: notExists}},
	}
	if p != nil {
		t := p.tag
		t.Version, t.VersionID = v.Number, v.ID
		tagAV, err := marshal(toTagItem(pk, t))
		if err != nil {
			return prompt.Version{}, err
		}
		cond, err := pinExpression(p.expected, v.Number)
		if err != nil {
			return prompt.Version{}, err
		}
		writes = append(writes, types.TransactWriteItem{Put: &types.Put{
			TableName: &s.t.name, Item: tagAV, ConditionExpression: cond.Condition(),
			ExpressionAttributeNames: cond.Names(), ExpressionAttributeValues: cond.Values(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}})
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
	if err != nil {
		return prompt.Version{}, err
	}
	return v, nil
}

// version reads version n of slug.
func (s *PromptStore) version(ctx context.Context, projectID, slug string, n int) (prompt.Version, error) {
	var it versionItem
	ok, err := s.t.get(ctx, promptPK(projectID, slug), versionSK(n), &it)
	if err != nil {
		return prompt.Version{}, err
	}
	if !ok {
		return prompt.Version{}, errs.NotFound("version %d of prompt %q not found", n, slug)
	}
	return it.toVersion(), nil
}

// VersionByHash implements prompt.Store.
func (s *PromptStore) VersionByHash(ctx context.Context, projectID, slug, hash string) (prompt.Version, error) {
	var guard hashItem
	ok, err := s.t.get(ctx, promptPK(projectID, slug), hashSK(hash), &guard)
	if err != nil {
		return prompt.Version{}, err
	}
	if !ok {
		return prompt.Version{}, errs.NotFound("prompt %q has no version with content hash %s", slug, hash)
	}
	return s.version(ctx, projectID, slug, guard.Number)
}

// LatestVersion implements prompt.Store with one Query for the last V# item.
func (s *PromptStore) LatestVersion(ctx context.Context, projectID, slug string) (prompt.Version, error) {
	in, err := s.t.queryInput(versionsOf(projectID, slug), queryOpts{reverse: true, limit: 1})
	if err != nil {
		return prompt.Version{}, err
	}
	res, err := s.t.api.Query(ctx, in)
	if err != nil {
		return prompt.Version{}, storageErr("query latest", err)
	}
	if len(res.Items) == 0 {
		return prompt.Version{}, promptNotFound(slug)
	}
	var it versionItem
	if err := attributevalue.UnmarshalMap(res.Items[0], &it); err != nil {
		return prompt.Version{}, fmt.Errorf("decode version: %w", err)
	}
	return it.toVersion(), nil
}

// VersionByNumber implements prompt.Store with one BatchGetItem of the head and the version.
func (s *PromptStore) VersionByNumber(ctx context.Context, projectID, slug string, n int) (prompt.Version, int, error) {
	pk := promptPK(projectID, slug)
	items, err := s.t.batchGet(ctx, []map[string]types.AttributeValue{key(pk, skPrompt), key(pk, versionSK(n))})
	if err != nil {
		return prompt.Version{}, 0, err
	}
	var head promptHead
	if err := decodeFound(items, pk, skPrompt, &head); err != nil {
		return prompt.Version{}, 0, err
	}
	if head.ID == "" {
		return prompt.Version{}, 0, promptNotFound(slug)
	}
	var it versionItem
	if err := decodeFound(items, pk, versionSK(n), &it); err != nil {
		return prompt.Version{}, 0, err
	}
	if it.ID == "" {
		return prompt.Version{}, 0, errs.NotFound("version %d of prompt %q not found (latest is %d)", n, slug, head.LatestVersion)
	}
	return it.toVersion(), head.LatestVersion, nil
}

// decodeFound decodes the item pk/sk of a batchGet result into out, leaving out untouched when
// the item was not found.
func decodeFound(items map[string]map[string]types.AttributeValue, pk, sk string, out any) error {
	raw, ok := items[pk+"\x00"+sk]
	if !ok {
		return nil
	}
	if err := attributevalue.UnmarshalMap(raw, out); err != nil {
		return fmt.Errorf("decode %s: %w", sk, err)
	}
	return nil
}

// PinTag implements prompt.Store. Versions are never deleted, so reading the version and then
// writing the tag is safe without a transaction; the write returns the old tag, which gives
// the previous version for free.
//
// With expected, the write is conditioned on the tag item itself (no read before it): the tag
// must point at *expected (0: must not exist) or already at t.Version, so a retry of a pin that
// succeeded but whose answer was lost succeeds again. A failed condition returns the tag as it
// is (ReturnValuesOnConditionCheckFailure ALL_OLD) for the conflict's message, so a pin is two
// requests whatever the outcome.
func (s *PromptStore) PinTag(ctx context.Context, projectID, slug string, t prompt.Tag, expected *int) (prompt.Tag, int, error) {
	pk := promptPK(projectID, slug)
	v, err := s.version(ctx, projectID, slug, t.Version)
	if errs.Is(err, errs.CodeNotFound) {
		var head promptHead
		if ok, herr := s.t.get(ctx, pk, skPrompt, &head); herr != nil {
			return prompt.Tag{}, 0, herr
		} else if !ok {
			return prompt.Tag{}, 0, promptNotFound(slug)
		}
		return prompt.Tag{}, 0, errs.NotFound("version %d of prompt %q not found (latest is %d)", t.Version, slug, head.LatestVersion)
	}
	if err != nil {
		return prompt.Tag{}, 0, err
	}
	t.VersionID = v.ID
	return s.putTag(ctx, projectID, slug, t, expected)
}

// putTag writes tag t, which names its version (Version and VersionID), with PinTag's
// precondition when expected is given, and returns it and the version it pointed at before.
func (s *PromptStore) putTag(ctx context.Context, projectID, slug string, t prompt.Tag, expected *int) (prompt.Tag, int, error) {
	pk := promptPK(projectID, slug)
	item, err := marshal(toTagItem(pk, t))
	if err != nil {
		return prompt.Tag{}, 0, err
	}
	in := &dynamodb.PutItemInput{TableName: &s.t.name, Item: item, ReturnValues: types.ReturnValueAllOld}
	if expected != nil {
		expr, err := pinExpression(*expected, t.Version)
		if err != nil {
			return prompt.Tag{}, 0, err
		}
		in.ConditionExpression = expr.Condition()
		in.ExpressionAttributeNames, in.ExpressionAttributeValues = expr.Names(), expr.Values()
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	res, err := s.t.api.PutItem(ctx, in)
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return prompt.Tag{}, 0, s.pinConflict(ctx, pk, slug, t.Name, *expected, failed.Item)
	}
	if err != nil {
		return prompt.Tag{}, 0, storageErr("put tag", err)
	}
	var old tagItem
	if res.Attributes != nil {
		if err := attributevalue.UnmarshalMap(res.Attributes, &old); err != nil {
			return prompt.Tag{}, 0, fmt.Errorf("decode previous tag: %w", err)
		}
	}
	return t, old.Number, nil
}

// toTagItem is the item of tag t of the prompt in partition pk.
func toTagItem(pk string, t prompt.Tag) tagItem {
	return tagItem{PK: pk, SK: tagSK(t.Name), Name: t.Name, Number: t.Version, VersionID: t.VersionID, UpdatedAt: t.UpdatedAt, UpdatedBy: t.UpdatedBy}
}

// pinExpression is pinCondition, built.
func pinExpression(expected, target int) (expression.Expression, error) {
	expr, err := expression.NewBuilder().WithCondition(pinCondition(expected, target)).Build()
	if err != nil {
		return expression.Expression{}, fmt.Errorf("build pin condition: %w", err)
	}
	return expr, nil
}

// pinCondition holds when the tag points at expected (0: the tag does not exist) or already at
// target.
func pinCondition(expected, target int) expression.ConditionBuilder {
	number := expression.Name("version")
	at := number.Equal(expression.Value(target))
	if expected == 0 {
		return expression.AttributeNotExists(expression.Name(infra.AttrPK)).Or(at)
	}
	return number.Equal(expression.Value(expected)).Or(at)
}

// pinConflict is the errs.CodeConflict of a pin whose precondition failed, naming where the tag
// is now: raw is the tag item returned by the failed write, read when the endpoint did not
// return it.
func (s *PromptStore) pinConflict(ctx context.Context, pk, slug, tag string, expected int, raw map[string]types.AttributeValue) error {
	var cur tagItem
	if raw == nil {
		if _, err := s.t.get(ctx, pk, tagSK(tag), &cur); err != nil {
			return err
		}
	} else if err := attributevalue.UnmarshalMap(raw, &cur); err != nil {
		return fmt.Errorf("decode current tag: %w", err)
	}
	want := "not to exist"
	if expected > 0 {
		want = fmt.Sprintf("to be at version %d", expected)
	}
	if cur.Number == 0 {
		return errs.Conflict("tag %q of prompt %q does not exist (expected it %s)", tag, slug, want)
	}
	return errs.Conflict("tag %q of prompt %q is at version %d (expected it %s)", tag, slug, cur.Number, want)
}

// Versions implements prompt.Store.
func (s *PromptStore) Versions(ctx context.Context, projectID, slug string) ([]prompt.Version, error) {
	var items []versionItem
	if err := s.t.query(ctx, versionsOf(projectID, slug), queryOpts{}, decodeInto(&items)); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, promptNotFound(slug)
	}
	out := make([]prompt.Version, len(items))
	for i, it := range items {
		out[i] = it.toVersion()
	}
	return out, nil
}

// Tags implements prompt.Store with one Query over the key range from PROMPT to the last TAG#,
// which holds the head (for "latest") and every tag and nothing else.
func (s *PromptStore) Tags(ctx context.Context, projectID, slug string) ([]prompt.Tag, error) {
	cond := partition(promptPK(projectID, slug)).
		And(expression.Key(infra.AttrSK).Between(expression.Value(skPrompt), expression.Value(tagRangeEnd)))
	var head *promptHead
	var tags []prompt.Tag
	splits := map[string]*prompt.Split{}
	err := s.t.query(ctx, cond, queryOpts{}, func(item map[string]types.AttributeValue) error {
		if keyString(item) == promptPK(projectID, slug)+"\x00"+skPrompt {
			head = new(promptHead)
			return attributevalue.UnmarshalMap(item, head)
		}
		if sk, _ := item[infra.AttrSK].(*types.AttributeValueMemberS); sk != nil && strings.HasPrefix(sk.Value, splitSK("")) {
			var sp splitItem
			if err := attributevalue.UnmarshalMap(item, &sp); err != nil {
				return fmt.Errorf("decode split: %w", err)
			}
			splits[sp.Tag] = sp.toSplit(slug)
			return nil
		}
		var t tagItem
		if err := attributevalue.UnmarshalMap(item, &t); err != nil {
			return fmt.Errorf("decode tag: %w", err)
		}
		tags = append(tags, prompt.Tag{Name: t.Name, Version: t.Number, VersionID: t.VersionID, UpdatedAt: t.UpdatedAt, UpdatedBy: t.UpdatedBy})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range tags {
		tags[i].Split = splits[tags[i].Name]
	}
	if head == nil {
		return nil, promptNotFound(slug)
	}
	latest := prompt.Tag{Name: prompt.LatestTag, Version: head.LatestVersion, VersionID: head.LatestVersionID, UpdatedAt: head.UpdatedAt}
	return append([]prompt.Tag{latest}, tags...), nil
}

// BindModel implements prompt.Store: the version and its id pointer change in one transaction.
func (s *PromptStore) BindModel(ctx context.Context, projectID, slug string, n int, model *string, by string, at time.Time) (prompt.Version, error) {
	v, err := s.version(ctx, projectID, slug, n)
	if err != nil {
		return prompt.Version{}, err
	}
	modelUpdate := expression.Remove(expression.Name("model_id"))
	if model != nil {
		modelUpdate = expression.Set(expression.Name("model_id"), expression.Value(*model))
	}
	exists := expression.AttributeExists(expression.Name(infra.AttrPK))
	versionExpr, err := expression.NewBuilder().WithCondition(exists).WithUpdate(
		modelUpdate.Set(expression.Name("updated_at"), expression.Value(at)).Set(expression.Name("updated_by"), expression.Value(by)),
	).Build()
	if err != nil {
		return prompt.Version{}, fmt.Errorf("build model update: %w", err)
	}
	pointerUpdate := expression.Remove(expression.Name("model_id"))
	if model != nil {
		pointerUpdate = expression.Set(expression.Name("model_id"), expression.Value(*model))
	}
	pointerExpr, err := expression.NewBuilder().WithCondition(exists).WithUpdate(pointerUpdate).Build()
	if err != nil {
		return prompt.Version{}, fmt.Errorf("build pointer update: %w", err)
	}
	update := func(pk, sk string, e expression.Expression) *types.Update {
		return &types.Update{
			TableName: &s.t.name, Key: key(pk, sk), UpdateExpression: e.Update(), ConditionExpression: e.Condition(),
			ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
		}
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: update(promptPK(projectID, slug), versionSK(n), versionExpr)},
		{Update: update(versionPointerPK(projectID, v.ID), skVersionPointer, pointerExpr)},
	}})
	if err != nil {
		return prompt.Version{}, storageErr("bind model", err)
	}
	v.ModelID, v.UpdatedAt, v.UpdatedBy = model, at, by
	return v, nil
}

// Binding implements prompt.Store with one GetItem of the version's id pointer.
func (s *PromptStore) Binding(ctx context.Context, projectID, versionID string) (prompt.Binding, error) {
	var it pointerItem
	ok, err := s.t.get(ctx, versionPointerPK(projectID, versionID), skVersionPointer, &it)
	if err != nil {
		return prompt.Binding{}, err
	}
	if !ok {
		return prompt.Binding{}, errs.NotFound("prompt version %q not found", versionID)
	}
	return prompt.Binding{VersionID: versionID, ModelID: it.ModelID}, nil
}

// Prompts implements prompt.Store: the heads from GSI1 (eventually consistent: a prompt
// created a moment ago may be missing), then their newest versions in batches of 100.
func (s *PromptStore) Prompts(ctx context.Context, projectID string) ([]prompt.Prompt, error) {
	var heads []promptHead
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(promptsGSI1PK(projectID)))
	if err := s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI1}, decodeInto(&heads)); err != nil {
		return nil, err
	}
	keys := make([]map[string]types.AttributeValue, len(heads))
	for i, h := range heads {
		keys[i] = key(promptPK(projectID, h.Slug), versionSK(h.LatestVersion))
	}
	items, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]prompt.Prompt, 0, len(heads))
	for _, h := range heads {
		var it versionItem
		if err := decodeFound(items, promptPK(projectID, h.Slug), versionSK(h.LatestVersion), &it); err != nil {
			return nil, err
		}
		out = append(out, prompt.Prompt{
			ID: h.ID, ProjectID: projectID, Slug: h.Slug, Latest: it.toVersion(), CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt,
		})
	}
	slices.SortFunc(out, func(a, b prompt.Prompt) int { return strings.Compare(a.Slug, b.Slug) })
	return out, nil
}
