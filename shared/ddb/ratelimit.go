package ddb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/errs"
)

// RateLimitStore keeps the counters of the gateway's per-project limits (the Store of package
// shared/ratelimit, which explains the sharding). Shard s of a project is the partition
// P#<project>#RL#<s>; in it, M#<yyyymmddhhmm> counts the requests (n) and tokens (tok) of a UTC
// minute, and D#<yyyymmdd> the spend in picodollars (pusd) of a UTC day. Every write is one
// UpdateItem with ADD, so concurrent writers never lose a count; items carry the table's TTL
// attribute (an hour after their minute, two days after their day), so old windows cost no
// storage. Expiry never matters to a count: a window's key names its window.
type RateLimitStore struct{ t *Table }

// NewRateLimitStore returns the rate limit store in t.
func NewRateLimitStore(t *Table) *RateLimitStore { return &RateLimitStore{t: t} }

// How long items outlive their window.
const (
	rateMinuteRetention = time.Hour
	rateDayRetention    = 48 * time.Hour
)

// maxRateShards bounds the shards of a counter: a sum is one BatchGetItem of at most 100 keys.
const maxRateShards = 50

// Attributes of the counter items.
const (
	attrRateRequests = "n"
	attrRateTokens   = "tok"
	attrRatePicoUSD  = "pusd"
)

// TakeRequest adds 1 to the requests of shard in the minute of at if they are below quota
// (ratelimit.Store). Cost: one conditional UpdateItem, taken or not (a failed condition is
// billed as a write). Errors: errs.Invalid for a shard out of range; storage errors.
func (s *RateLimitStore) TakeRequest(ctx context.Context, projectID string, at time.Time, shard, quota int) (int, bool, error) {
	if err := checkShard(shard); err != nil {
		return 0, false, err
	}
	if quota <= 0 {
		return 0, false, nil
	}
	minute := at.UTC().Truncate(time.Minute)
	res, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &s.t.name,
		Key:                      key(rateLimitPK(projectID, shard), rateMinuteSK(minute)),
		UpdateExpression:         aws.String("ADD #n :one SET #ttl = :ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(#n) OR #n < :quota"),
		ExpressionAttributeNames: map[string]string{"#n": attrRateRequests, "#ttl": infra.AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": num(1), ":quota": num(int64(quota)),
			":ttl": num(minute.Add(time.Minute + rateMinuteRetention).Unix()),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		return quota, false, nil
	case err != nil:
		return 0, false, storageErr("count a request", err)
	}
	n, ok := intAttr(res.Attributes, attrRateRequests)
	if !ok {
		return 0, false, fmt.Errorf("count a request: the answer has no count")
	}
	return int(n), true, nil
}

// AddUsage adds tokens to shard's minute of at and picoUSD to its day of at
// (ratelimit.Store). Cost: one UpdateItem per amount that is not zero. Errors: errs.Invalid for
// a negative amount or a shard out of range; storage errors.
func (s *RateLimitStore) AddUsage(ctx context.Context, projectID string, at time.Time, shard int, tokens, picoUSD int64) error {
	if err := checkShard(shard); err != nil {
		return err
	}
	if tokens < 0 || picoUSD < 0 {
		return errs.Invalid("usage cannot be negative: %d tokens, %d picodollars", tokens, picoUSD)
	}
	minute := at.UTC().Truncate(time.Minute)
	if tokens > 0 {
		ttl := minute.Add(time.Minute + rateMinuteRetention)
		if err := s.add(ctx, rateLimitPK(projectID, shard), rateMinuteSK(minute), attrRateTokens, tokens, ttl); err != nil {
			return err
		}
	}
	if picoUSD > 0 {
		day := time.Date(minute.Year(), minute.Month(), minute.Day(), 0, 0, 0, 0, time.UTC)
		ttl := day.AddDate(0, 0, 1).Add(rateDayRetention)
		if err := s.add(ctx, rateLimitPK(projectID, shard), rateDaySK(day), attrRatePicoUSD, picoUSD, ttl); err != nil {
			return err
		}
	}
	return nil
}

func (s *RateLimitStore) add(ctx context.Context, pk, sk, attr string, n int64, ttl time.Time) error {
	_, err := s.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.t.name,
		Key:                       key(pk, sk),
		UpdateExpression:          aws.String("ADD #a :n SET #ttl = :ttl"),
		ExpressionAttributeNames:  map[string]string{"#a": attr, "#ttl": infra.AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": num(n), ":ttl": num(ttl.Unix())},
	})
	if err != nil {
		return storageErr("add "+attr+" to "+sk, err)
	}
	return nil
}

// Usage sums the tokens of the minute of at over tokenShards shards and the spend of its day
// over spendShards shards (ratelimit.Store). Sums past the largest int64 stop there. Cost: one
// BatchGetItem of tokenShards+spendShards strongly consistent reads (each billed as one read
// unit, whether the item exists or not); none when both are 0. Errors: errs.Invalid for a
// number of shards out of range; storage errors.
func (s *RateLimitStore) Usage(ctx context.Context, projectID string, at time.Time, tokenShards, spendShards int) (int64, int64, error) {
	if tokenShards < 0 || tokenShards > maxRateShards || spendShards < 0 || spendShards > maxRateShards {
		return 0, 0, errs.Invalid("a counter has from 0 to %d shards, not %d and %d", maxRateShards, tokenShards, spendShards)
	}
	if tokenShards == 0 && spendShards == 0 {
		return 0, 0, nil
	}
	keys := make([]map[string]types.AttributeValue, 0, tokenShards+spendShards)
	for shard := range tokenShards {
		keys = append(keys, key(rateLimitPK(projectID, shard), rateMinuteSK(at)))
	}
	for shard := range spendShards {
		keys = append(keys, key(rateLimitPK(projectID, shard), rateDaySK(at)))
	}
	found, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return 0, 0, err
	}
	var tokens, picoUSD int64
	for _, item := range found {
		tokens = addCount(tokens, item[attrRateTokens])
		picoUSD = addCount(picoUSD, item[attrRatePicoUSD])
	}
	return tokens, picoUSD, nil
}

// addCount adds a stored count (absent: 0) to sum, stopping at the largest int64.
func addCount(sum int64, av types.AttributeValue) int64 {
	v, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return sum
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil || sum > math.MaxInt64-n {
		return math.MaxInt64 // past int64 (counts are never negative): as good as any limit
	}
	return sum + n
}

func checkShard(shard int) error {
	if shard < 0 || shard >= maxRateShards {
		return errs.Invalid("a counter shard is from 0 to %d, not %d", maxRateShards-1, shard)
	}
	return nil
}
