package ddb

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
)

// WebSessionStore keeps dashboard sessions: one item per session at WEBSESSION#<sha256(id)> /
// WEBSESSION, deleted by DynamoDB's TTL once expired (TTL is lazy, so reads check the expiry).
type WebSessionStore struct{ t *Table }

// NewWebSessionStore returns the store of dashboard sessions in t.
func NewWebSessionStore(t *Table) *WebSessionStore { return &WebSessionStore{t: t} }

type webSessionItem struct {
	PK        string    `dynamodbav:"PK"`
	SK        string    `dynamodbav:"SK"`
	ProjectID string    `dynamodbav:"project_id"`
	KeyID     string    `dynamodbav:"key_id"`
	KeyHash   string    `dynamodbav:"key_hash"`
	UserID    string    `dynamodbav:"user_id"`
	UserEmail string    `dynamodbav:"user_email,omitempty"`
	UserName  string    `dynamodbav:"user_name,omitempty"`
	CSRF      string    `dynamodbav:"csrf"`
	CreatedAt time.Time `dynamodbav:"created_at"`
	ExpiresAt time.Time `dynamodbav:"expires_at"`
	TTL       int64     `dynamodbav:"ttl"`
}

func toWebSessionItem(idHash string, s auth.WebSession) webSessionItem {
	return webSessionItem{
		PK: webSessionPK(idHash), SK: skWebSession, ProjectID: s.ProjectID, KeyID: s.KeyID, KeyHash: s.KeyHash,
		UserID: s.User.ID, UserEmail: s.User.Email, UserName: s.User.Name, CSRF: s.CSRF,
		CreatedAt: s.CreatedAt.UTC(), ExpiresAt: s.ExpiresAt.UTC(), TTL: s.ExpiresAt.Unix(),
	}
}

func (it webSessionItem) toWebSession() auth.WebSession {
	return auth.WebSession{
		ProjectID: it.ProjectID, KeyID: it.KeyID, KeyHash: it.KeyHash,
		User: auth.User{ID: it.UserID, Email: it.UserEmail, Name: it.UserName}, CSRF: it.CSRF,
		CreatedAt: it.CreatedAt, ExpiresAt: it.ExpiresAt,
	}
}

// CreateWebSession stores s under idHash with one conditional PutItem; an existing session of
// the same hash is an errs.CodeConflict error (ids are 32 random bytes: it does not happen).
func (s *WebSessionStore) CreateWebSession(ctx context.Context, idHash string, ws auth.WebSession) error {
	item, err := marshal(toWebSessionItem(idHash, ws))
	if err != nil {
		return err
	}
	_, err = s.t.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.t.name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return errs.Conflict("session exists")
	}
	if err != nil {
		return storageErr("put web session", err)
	}
	return nil
}

// WebSession returns the session stored under idHash with one GetItem, or an errs.CodeNotFound
// error when there is none or it expired at or before now.
func (s *WebSessionStore) WebSession(ctx context.Context, idHash string, now time.Time) (auth.WebSession, error) {
	var it webSessionItem
	ok, err := s.t.get(ctx, webSessionPK(idHash), skWebSession, &it)
	if err != nil {
		return auth.WebSession{}, err
	}
	if !ok || !now.Before(it.ExpiresAt) {
		return auth.WebSession{}, errs.NotFound("no such session")
	}
	return it.toWebSession(), nil
}

// DeleteWebSession deletes the session stored under idHash with one DeleteItem; deleting a
// session that is gone is not an error.
func (s *WebSessionStore) DeleteWebSession(ctx context.Context, idHash string) error {
	_, err := s.t.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.t.name, Key: key(webSessionPK(idHash), skWebSession)})
	if err != nil {
		return storageErr("delete web session", err)
	}
	return nil
}
