package ddb

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
)

// ClaimStore keeps judge claims: the record, one per judge and span (P#<project>#S#<span> /
// CLAIM#<judge>, beside the span's summary and the judge's evaluation), that lets the judge
// runner call a judge's model at most once per content of a span although the same span batch
// is delivered several times, at once or later (Lambda async retries, duplicate S3 events).
//
// The runner's protocol, per judge and span:
//
//	c := Claim(hash)         // Busy or Done: skip the span
//	answer := model(...)     // on failure: Release(c.Token), so a retry takes over at once
//	PutEvaluations(...)      // idempotent: same item, id and creation time when written again
//	Complete(c.Token)        // ErrClaimLost: log it; the evaluation written stays
//
// The evaluation is written before Complete, so a crash between the two costs at most a second
// model call after the lease expires, never a lost evaluation. A worker whose lease expired and
// was taken over learns it only at Complete (ErrClaimLost), after its evaluation write; that
// write is the same item the new owner writes, so it is harmless for the same content. Only if
// the span changed in between can a late worker's older evaluation land after the newer one.
// Workers run in Lambda, which ends an invocation at its timeout: with a lease at least the
// function's timeout, an expired lease means a dead worker, and late workers do not exist.
//
// A worker that dies holding a lease (out of memory, killed) without releasing it makes the
// redelivery of its own event see Busy until the lease expires: a runner that must not lose
// that evaluation treats Busy as "retry after Claim.LeaseExpiry" rather than "skip".
//
// Claims carry the table's TTL attribute (ClaimTTL after their claim), so they do not outlive
// the redeliveries they guard against; a claim read by a span-partition Query is ignored by
// every reader (its sort key is neither SPAN, EVAL# nor FB#).
type ClaimStore struct{ t *Table }

// NewClaimStore returns the claim store in t.
func NewClaimStore(t *Table) *ClaimStore { return &ClaimStore{t: t} }

// ClaimTTL is how long after its last claim a claim item lives: far longer than any
// redelivery (Lambda's async retries end within 6 hours). After it, DynamoDB deletes the item
// and a duplicate event would call the model again.
const ClaimTTL = 30 * 24 * time.Hour

// ErrClaimLost is returned (wrapped) by Complete and Release when the caller's token no longer
// owns the claim: its lease expired and another worker took it over, it was released or
// completed already (Release), or the claim expired. Its code is errs.CodeConflict, so a
// consumer can test it with errors.Is(err, ddb.ErrClaimLost) or errs.CodeOf.
var ErrClaimLost = errs.Conflict("the judge claim is no longer held by this worker")

// Claim states as stored.
const (
	claimRunning = "running"
	claimDone    = "done"
)

// claimItem is a judge claim. Lease is epoch milliseconds; a released claim has Lease 0 and no
// token. TTL is epoch seconds (infra.AttrTTL).
type claimItem struct {
	PK       string `dynamodbav:"PK"`
	SK       string `dynamodbav:"SK"`
	Hash     string `dynamodbav:"h"`
	State    string `dynamodbav:"st"`
	Token    string `dynamodbav:"tok,omitempty"`
	Lease    int64  `dynamodbav:"ls"`
	Attempts int    `dynamodbav:"at"`
	TTL      int64  `dynamodbav:"ttl"`
}

// maxClaimAttempts bounds the rounds of a Claim that found no item to explain its failed
// condition (the item expired between the write and the read).
const maxClaimAttempts = 3

// Claim tries to take the lease on judgeID's evaluation of spanID's content, identified by
// contentHash (the caller's hash of what the model is shown), for lease from now. It acquires
// when there is no claim, when the claim is for another content hash (the span changed, even
// if that content was done), or when the claim is running with an expired or released lease;
// otherwise it reports Done or Busy.
//
// Cost: one conditional UpdateItem, whatever the outcome: a failed condition returns the item
// (ReturnValuesOnConditionCheckFailure ALL_OLD), which tells Done from Busy without a read.
// Errors: errs.Invalid for empty ids or hash or a lease that is not positive; storage errors.
func (s *ClaimStore) Claim(ctx context.Context, projectID, judgeID, spanID, contentHash string, lease time.Duration, now time.Time) (judge.Claim, error) {
	if projectID == "" || judgeID == "" || spanID == "" || contentHash == "" {
		return judge.Claim{}, errs.Invalid("a claim needs a project, judge, span and content hash")
	}
	if lease <= 0 {
		return judge.Claim{}, errs.Invalid("a claim's lease must be positive, not %s", lease)
	}
	token := rand.Text()
	expiry := now.Add(lease)
	hash := expression.Value(contentHash)
	cond := expression.AttributeNotExists(expression.Name(infra.AttrPK)).
		Or(expression.Name("h").NotEqual(hash),
			expression.Name("st").Equal(expression.Value(claimRunning)).
				And(expression.Name("ls").LessThan(expression.Value(now.UnixMilli()))))
	up := expression.Set(expression.Name("h"), hash).
		Set(expression.Name("st"), expression.Value(claimRunning)).
		Set(expression.Name("tok"), expression.Value(token)).
		Set(expression.Name("ls"), expression.Value(expiry.UnixMilli())).
		Set(expression.Name(infra.AttrTTL), expression.Value(now.Add(ClaimTTL).Unix())).
		Set(expression.Name("at"), expression.Plus(expression.IfNotExists(expression.Name("at"), expression.Value(0)), expression.Value(1)))
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(up).Build()
	if err != nil {
		return judge.Claim{}, fmt.Errorf("build claim update: %w", err)
	}
	k := key(spanPK(projectID, spanID), claimSK(judgeID))
	for range maxClaimAttempts {
		res, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &s.t.name, Key: k,
			UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnValues:                        types.ReturnValueUpdatedNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		var failed *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			var it claimItem
			if err := attributevalue.UnmarshalMap(res.Attributes, &it); err != nil {
				return judge.Claim{}, fmt.Errorf("decode claim: %w", err)
			}
			return judge.Claim{State: judge.ClaimAcquired, Token: token, LeaseExpiry: time.UnixMilli(expiry.UnixMilli()).UTC(), Attempts: it.Attempts}, nil
		case !errors.As(err, &failed):
			return judge.Claim{}, storageErr("claim judge "+judgeID+" on span "+spanID, err)
		}
		raw := failed.Item
		if raw == nil {
			// An endpoint that ignores ReturnValuesOnConditionCheckFailure: read the item.
			got, err := s.t.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name, Key: k, ConsistentRead: aws.Bool(true)})
			if err != nil {
				return judge.Claim{}, storageErr("read claim of judge "+judgeID+" on span "+spanID, err)
			}
			if raw = got.Item; raw == nil {
				continue // gone since the write: try again
			}
		}
		var it claimItem
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return judge.Claim{}, fmt.Errorf("decode claim: %w", err)
		}
		switch {
		case it.Hash != contentHash:
			continue // changed since the write: try again
		case it.State == claimDone:
			return judge.Claim{State: judge.ClaimDone}, nil
		default:
			return judge.Claim{State: judge.ClaimBusy, LeaseExpiry: time.UnixMilli(it.Lease).UTC(), Attempts: it.Attempts}, nil
		}
	}
	return judge.Claim{}, errs.Unavailable("the claim of judge %s on span %s keeps changing; retry shortly", judgeID, spanID)
}

// Complete marks the claim done for the content it was acquired for, if token still owns it;
// later Claims of that content report Done. Completing again with the same token succeeds, so
// a Complete whose answer was lost can be repeated.
//
// Cost: one conditional UpdateItem. Errors: ErrClaimLost (wrapped) when token no longer owns
// the claim; storage errors.
func (s *ClaimStore) Complete(ctx context.Context, projectID, judgeID, spanID, token string) error {
	up := expression.Set(expression.Name("st"), expression.Value(claimDone)).Remove(expression.Name("at"))
	return s.owned(ctx, "complete", projectID, judgeID, spanID, token, up, false)
}

// Release gives up a running claim after a failed model call: the lease ends now, so the next
// Claim of any worker acquires at once; the attempt stays counted.
//
// Cost: one conditional UpdateItem. Errors: ErrClaimLost (wrapped) when token no longer owns a
// running claim (taken over, released or completed already); storage errors.
func (s *ClaimStore) Release(ctx context.Context, projectID, judgeID, spanID, token string) error {
	up := expression.Set(expression.Name("ls"), expression.Value(0)).Remove(expression.Name("tok"))
	return s.owned(ctx, "release", projectID, judgeID, spanID, token, up, true)
}

// owned applies up to the claim if token owns it (and, when running, the claim is running).
func (s *ClaimStore) owned(ctx context.Context, op, projectID, judgeID, spanID, token string, up expression.UpdateBuilder, running bool) error {
	if token == "" {
		return fmt.Errorf("%s claim of judge %s on span %s: %w", op, judgeID, spanID, ErrClaimLost)
	}
	cond := expression.Name("tok").Equal(expression.Value(token))
	if running {
		cond = cond.And(expression.Name("st").Equal(expression.Value(claimRunning)))
	}
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(up).Build()
	if err != nil {
		return fmt.Errorf("build claim %s: %w", op, err)
	}
	_, err = s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.t.name, Key: key(spanPK(projectID, spanID), claimSK(judgeID)),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		return fmt.Errorf("%s claim of judge %s on span %s: %w", op, judgeID, spanID, ErrClaimLost)
	case err != nil:
		return storageErr(op+" claim of judge "+judgeID+" on span "+spanID, err)
	}
	return nil
}
