package ddb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
)

// AuthStore keeps projects and API keys.
//
// Items: the project at P#<id> / PROJECT (also in GSI1 under PROJECTS, for the operator's list);
// each key twice, written in one transaction: P#<project> / KEY#<key id> for listing and
// revocation, and APIKEY#<sha256> / APIKEY for the lookup on every request.
type AuthStore struct{ t *Table }

var _ auth.KeyFinder = (*AuthStore)(nil)

// NewAuthStore returns the store of projects and keys in t.
func NewAuthStore(t *Table) *AuthStore { return &AuthStore{t: t} }

type projectItem struct {
	PK        string    `dynamodbav:"PK"`
	SK        string    `dynamodbav:"SK"`
	GSI1PK    string    `dynamodbav:"GSI1PK"`
	GSI1SK    string    `dynamodbav:"GSI1SK"`
	ID        string    `dynamodbav:"id"`
	Name      string    `dynamodbav:"name"`
	CreatedAt time.Time `dynamodbav:"created_at"`
}

type keyItem struct {
	PK        string     `dynamodbav:"PK"`
	SK        string     `dynamodbav:"SK"`
	ID        string     `dynamodbav:"id"`
	ProjectID string     `dynamodbav:"project_id"`
	Hash      string     `dynamodbav:"hash"`
	Display   string     `dynamodbav:"display"`
	Label     string     `dynamodbav:"label,omitempty"`
	Role      string     `dynamodbav:"role,omitempty"` // absent on keys issued before roles
	UserID    string     `dynamodbav:"user_id"`
	UserEmail string     `dynamodbav:"user_email,omitempty"`
	UserName  string     `dynamodbav:"user_name,omitempty"`
	CreatedAt time.Time  `dynamodbav:"created_at"`
	ExpiresAt *time.Time `dynamodbav:"expires_at,omitempty"`
	RevokedAt *time.Time `dynamodbav:"revoked_at,omitempty"`
}

func toKeyItem(pk, sk string, k auth.Key) keyItem {
	return keyItem{
		PK: pk, SK: sk, ID: k.ID, ProjectID: k.ProjectID, Hash: k.Hash, Display: k.Display, Label: k.Label,
		Role: string(k.Role), UserID: k.User.ID, UserEmail: k.User.Email, UserName: k.User.Name,
		CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
	}
}

// toKey reads a key item; one without a role (issued before roles existed) is auth.DefaultRole.
func (it keyItem) toKey() auth.Key {
	return auth.Key{
		ID: it.ID, ProjectID: it.ProjectID, Hash: it.Hash, Display: it.Display, Label: it.Label,
		Role:      auth.Role(cmp.Or(it.Role, string(auth.DefaultRole))),
		User:      auth.User{ID: it.UserID, Email: it.UserEmail, Name: it.UserName},
		CreatedAt: it.CreatedAt, ExpiresAt: it.ExpiresAt, RevokedAt: it.RevokedAt,
	}
}

// CreateProject stores a new project. It returns errs.CodeConflict when the id is taken.
func (s *AuthStore) CreateProject(ctx context.Context, p auth.Project) error {
	item, err := marshal(projectItem{
		PK: projectPK(p.ID), SK: skProject, GSI1PK: gsiProjects, GSI1SK: p.ID,
		ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt,
	})
	if err != nil {
		return err
	}
	_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return errs.Conflict("project %s already exists", p.ID)
	}
	if err != nil {
		return storageErr("put project", err)
	}
	return nil
}

// Project returns the project with id, or errs.CodeNotFound.
func (s *AuthStore) Project(ctx context.Context, id string) (auth.Project, error) {
	var it projectItem
	ok, err := s.t.get(ctx, projectPK(id), skProject, &it)
	if err != nil {
		return auth.Project{}, err
	}
	if !ok {
		return auth.Project{}, errs.NotFound("project %s not found", id)
	}
	return auth.Project{ID: it.ID, Name: it.Name, CreatedAt: it.CreatedAt}, nil
}

// Projects lists every project (operators only; GSI1 is eventually consistent).
func (s *AuthStore) Projects(ctx context.Context) ([]auth.Project, error) {
	var items []projectItem
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(gsiProjects))
	if err := s.t.query(ctx, cond, queryOpts{index: infra.IndexGSI1}, decodeInto(&items)); err != nil {
		return nil, err
	}
	out := make([]auth.Project, len(items))
	for i, it := range items {
		out[i] = auth.Project{ID: it.ID, Name: it.Name, CreatedAt: it.CreatedAt}
	}
	return out, nil
}

// CreateKey stores k in one transaction: the project must exist (else errs.CodeNotFound) and
// the key hash must be new (else errs.CodeConflict).
func (s *AuthStore) CreateKey(ctx context.Context, k auth.Key) error {
	lookup, err := marshal(toKeyItem(apiKeyPK(k.Hash), skAPIKey, k))
	if err != nil {
		return err
	}
	listed, err := marshal(toKeyItem(projectPK(k.ProjectID), keySK(k.ID), k))
	if err != nil {
		return err
	}
	notExists := aws.String("attribute_not_exists(PK)")
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{
			TableName: &s.t.name, Key: key(projectPK(k.ProjectID), skProject),
			ConditionExpression: aws.String("attribute_exists(PK)"),
		}},
		{Put: &types.Put{TableName: &s.t.name, Item: lookup, ConditionExpression: notExists}},
		{Put: &types.Put{TableName: &s.t.name, Item: listed, ConditionExpression: notExists}},
	}})
	if codes := cancellationCodes(err); codes != nil {
		switch {
		case codes[0] == "ConditionalCheckFailed":
			return errs.NotFound("project %s not found", k.ProjectID)
		case codes[1] == "ConditionalCheckFailed":
			return errs.Conflict("this key is already registered")
		}
	}
	if err != nil {
		return storageErr("put key", err)
	}
	return nil
}

// KeyByHash returns the key whose secret hashes to hash, or errs.CodeNotFound.
func (s *AuthStore) KeyByHash(ctx context.Context, hash string) (auth.Key, error) {
	var it keyItem
	ok, err := s.t.get(ctx, apiKeyPK(hash), skAPIKey, &it)
	if err != nil {
		return auth.Key{}, err
	}
	if !ok {
		return auth.Key{}, errs.NotFound("key not found")
	}
	return it.toKey(), nil
}

// Keys lists the keys of a project, revoked and expired ones included.
func (s *AuthStore) Keys(ctx context.Context, projectID string) ([]auth.Key, error) {
	var items []keyItem
	cond := partition(projectPK(projectID)).And(expression.Key(infra.AttrSK).BeginsWith(prefixKey))
	if err := s.t.query(ctx, cond, queryOpts{}, decodeInto(&items)); err != nil {
		return nil, err
	}
	out := make([]auth.Key, len(items))
	for i, it := range items {
		out[i] = it.toKey()
	}
	return out, nil
}

// RevokeKey marks a key of the project revoked at `at`, on both of its items in one
// transaction, with no guard: it may revoke a project's last admin key (the operator's
// `plume admin revoke-key`, which must be able to shut every key out in an emergency; the API
// uses RevokeKeyKeeping). Revoking a revoked key changes nothing and returns it. It returns
// errs.CodeNotFound for a key id that the project does not have.
func (s *AuthStore) RevokeKey(ctx context.Context, projectID, keyID string, at time.Time) (auth.Key, error) {
	var it keyItem
	ok, err := s.t.get(ctx, projectPK(projectID), keySK(keyID), &it)
	if err != nil {
		return auth.Key{}, err
	}
	if !ok {
		return auth.Key{}, errs.NotFound("key %s not found in project %s", keyID, projectID)
	}
	k := it.toKey()
	if k.RevokedAt != nil {
		return k, nil
	}
	_, err = s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: s.revokeItems(k, at)})
	if err != nil {
		return auth.Key{}, storageErr("revoke key", err)
	}
	return revoked(k, at), nil
}

// RevokeKeyKeeping marks k revoked at `at`, k being a key not yet revoked as Keys just listed
// it, in one transaction that also checks that the project's key keepID is still not revoked
// (no check when keepID is empty). The transaction is serializable, so of two requests each
// revoking one key while keeping the other, at most one succeeds: a caller that picks keepID
// among the project's usable admin keys never revokes the last one. Whether keepID is an
// unexpired admin key the caller decides from the listing: role and expiry never change.
//
// One request (TransactWriteItems). It returns errs.CodeConflict when k or keepID was revoked
// or deleted since it was listed, or when a concurrent transaction touched either: list the
// keys again and decide again.
func (s *AuthStore) RevokeKeyKeeping(ctx context.Context, k auth.Key, keepID string, at time.Time) (auth.Key, error) {
	items := s.revokeItems(k, at)
	items[0].Update.ConditionExpression = aws.String("attribute_exists(PK) AND attribute_not_exists(revoked_at)")
	if keepID != "" {
		items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName: &s.t.name, Key: key(projectPK(k.ProjectID), keySK(keepID)),
			ConditionExpression: aws.String("attribute_exists(PK) AND attribute_not_exists(revoked_at)"),
		}})
	}
	_, err := s.t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if isContention(err) {
		return auth.Key{}, fmt.Errorf("revoke key %s keeping %s: %w: %w", k.ID, keepID,
			errs.Conflict("the project's keys changed while key %s was being revoked: try again", k.Display), err)
	}
	if err != nil {
		return auth.Key{}, storageErr("revoke key", err)
	}
	return revoked(k, at), nil
}

// revokeItems are the two updates that set revoked_at on both items of k: its listing first,
// then its lookup by hash.
func (s *AuthStore) revokeItems(k auth.Key, at time.Time) []types.TransactWriteItem {
	update := func(pk, sk string) *types.Update {
		return &types.Update{
			TableName: &s.t.name, Key: key(pk, sk),
			UpdateExpression:          aws.String("SET revoked_at = :at"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":at": &types.AttributeValueMemberS{Value: at.UTC().Format(time.RFC3339Nano)}},
		}
	}
	return []types.TransactWriteItem{
		{Update: update(projectPK(k.ProjectID), keySK(k.ID))},
		{Update: update(apiKeyPK(k.Hash), skAPIKey)},
	}
}

// revoked is k as revoked at `at`.
func revoked(k auth.Key, at time.Time) auth.Key {
	at = at.UTC()
	k.RevokedAt = &at
	return k
}
