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
// notes below), so the cost is one small write per Lambda instance, project, index and day;
// writers of one day at once (a stream batch's traces) wait for the first one's write.
type dayRegistry struct {
	t     *Table
	notes sync.Map // projectID|kind|day -> *dayNote
}

// dayNote is the write of a day: done closes when it ends, err says how.
type dayNote struct {
	done chan struct{}
	err  error
}

func dayOf(t time.Time) string { return t.UTC().Format("20060102") }

// note records that kind has an entry on the day of at.
func (r *dayRegistry) note(ctx context.Context, projectID, kind string, at time.Time) error {
	day := dayOf(at)
	k := projectID + "|" + kind + "|" + day
	note := &dayNote{done: make(chan struct{})}
	for {
		prev, loaded := r.notes.LoadOrStore(k, note)
		if !loaded {
			break
		}
		p := prev.(*dayNote)
		select {
		case <-p.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if p.err == nil {
			return nil
		}
		r.notes.CompareAndDelete(k, p) // it failed (and stays until a writer replaces it)
	}
	_, err := r.t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &r.t.name, Key: key(projectPK(projectID), daysSK(kind)),
		UpdateExpression:          aws.String("ADD d :day"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":day": &types.AttributeValueMemberSS{Value: []string{day}}},
	})
	if err != nil {
		note.err = storageErr("note index day", err)
	}
	close(note.done)
	return note.err
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
