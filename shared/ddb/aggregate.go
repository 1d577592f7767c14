package ddb

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
)

// aggregate is the part of a trace or session item that the change stream's consumer computes
// (aggregate_stream.go): the counters and the times, read, changed in Go and written back under
// a condition on the version v.
type aggregate struct {
	exists  bool
	version *int64
	count   int64 // span_count of a trace, trace_count of a session
	errors  int64
	cost    float64
	start   *int64
	end     *int64
	session string
	name    string
}

func aggregateOf(item map[string]types.AttributeValue, countAttr string) aggregate {
	a := aggregate{exists: item != nil}
	if item == nil {
		return a
	}
	if v, ok := intAttr(item, "v"); ok {
		a.version = &v
	}
	a.count, a.errors, a.cost = intOr(item, countAttr), intOr(item, "ec"), floatAttr(item, "cost")
	if v, ok := intAttr(item, "sa"); ok {
		a.start = &v
	}
	if v, ok := intAttr(item, "ea"); ok {
		a.end = &v
	}
	a.session, a.name = strAttr(item, "ss"), strAttr(item, "n")
	return a
}

// guard is the condition of an aggregate's update: the aggregate is still as read.
func (a aggregate) guard() expression.ConditionBuilder {
	switch {
	case !a.exists:
		return expression.AttributeNotExists(expression.Name(infra.AttrPK))
	case a.version == nil:
		return expression.AttributeExists(expression.Name(infra.AttrPK)).And(expression.AttributeNotExists(expression.Name("v")))
	default:
		return expression.Name("v").Equal(expression.Value(*a.version))
	}
}

// set writes the counters, times and next version.
func (a aggregate) set(up expression.UpdateBuilder, countAttr string) expression.UpdateBuilder {
	next := int64(1)
	if a.version != nil {
		next = *a.version + 1
	}
	up = up.Set(expression.Name("v"), expression.Value(next)).
		Set(expression.Name(countAttr), expression.Value(a.count)).
		Set(expression.Name("ec"), expression.Value(a.errors)).
		Set(expression.Name("cost"), expression.Value(costSum(a.cost)))
	if a.start != nil {
		up = up.Set(expression.Name("sa"), expression.Value(*a.start))
	}
	if a.end != nil {
		up = up.Set(expression.Name("ea"), expression.Value(*a.end))
	}
	return up
}

func (a *aggregate) widen(start, end *int64) {
	if start != nil && (a.start == nil || *start < *a.start) {
		a.start = start
	}
	if end != nil && (a.end == nil || *end > *a.end) {
		a.end = end
	}
}

func micros(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.UnixMicro()
	return &v
}

func optMicros(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	return micros(*t)
}

func minPtr(a, b *int64) *int64 {
	if a == nil || (b != nil && *b < *a) {
		return b
	}
	return a
}

func maxPtr(a, b *int64) *int64 {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}
