package ddb

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// dayRegistry remembers, per project and time index, the days that have entries: one item per
// project and index with a string set of days. A writer adds its day once per process (the
// cache below), so the cost is one small write per Lambda instance, project, index and day.
type dayRegistry struct {
	t    *Table
	seen sync.Map // projectID|kind|day -> struct{}
}

func dayOf(t time.Time) string { return t.UTC().Format("20060102") }

// note records that kind has an entry on the day of at.
func (r *dayRegistry) note(ctx context.Context, projectID, kind string, at time.Time) error {
	day := dayOf(at)
	k := projectID + "|" + kind + "|" + day
	if _, ok := r.seen.Load(k); ok {
		return nil
	}
	_, err := r.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &r.t.name, Key: key(projectPK(projectID), daysSK(kind)),
		UpdateExpression:          aws.String("ADD d :day"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":day": &types.AttributeValueMemberSS{Value: []string{day}}},
	})
	if err != nil {
		return storageErr("note index day", err)
	}
	r.seen.Store(k, struct{}{})
	return nil
}

// days returns the days of kind with entries in [from, to], newest first.
func (r *dayRegistry) days(ctx context.Context, projectID, kind string, from, to time.Time) ([]time.Time, error) {
	var item struct {
		Days []string `dynamodbav:"d,stringset"`
	}
	if _, err := r.t.get(ctx, projectPK(projectID), daysSK(kind), &item); err != nil {
		return nil, err
	}
	lo, hi := dayOf(from), dayOf(to)
	var out []time.Time
	for _, d := range item.Days {
		if d < lo || d > hi {
			continue
		}
		if t, err := time.Parse("20060102", d); err == nil {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return b.Compare(a) })
	return out, nil
}
