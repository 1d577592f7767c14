package ddb

import (
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// StreamFilter is what an event source mapping's filter on the table's stream lets through, in
// the one form template.yaml writes: the inserts and modifications of the items whose sort key
// is one of Keys or begins with one of Prefixes. A consumer applies its own filter too, so that
// plume-local's poller and the tests' DrainStream hand it what Lambda would, and a filter that
// drops what the consumer reads fails there rather than only in a deployment.
type StreamFilter struct {
	Keys, Prefixes []string
	// Removals are the deletions it lets through (by default none).
	Removals []StreamRemoval
}

// StreamRemoval lets through the deletions of the items whose sort key begins with Prefix and
// whose old image's string attribute Attr was Value.
type StreamRemoval struct {
	Prefix, Attr, Value string
}

// Pass is the records of batch that f lets through, in their order.
func (f StreamFilter) Pass(batch []StreamRecord) []StreamRecord {
	passed := make([]StreamRecord, 0, len(batch))
	for _, r := range batch {
		if f.passes(r) {
			passed = append(passed, r)
		}
	}
	return passed
}

func (f StreamFilter) passes(r StreamRecord) bool {
	if r.EventName == "REMOVE" {
		sk, ok := r.Old["SK"].(*types.AttributeValueMemberS)
		return ok && slices.ContainsFunc(f.Removals, func(rm StreamRemoval) bool {
			v, ok := r.Old[rm.Attr].(*types.AttributeValueMemberS)
			return ok && v.Value == rm.Value && strings.HasPrefix(sk.Value, rm.Prefix)
		})
	}
	if r.EventName != "INSERT" && r.EventName != "MODIFY" {
		return false
	}
	sk, ok := r.New["SK"].(*types.AttributeValueMemberS)
	if !ok {
		return false
	}
	return slices.Contains(f.Keys, sk.Value) || slices.ContainsFunc(f.Prefixes, func(p string) bool { return strings.HasPrefix(sk.Value, p) })
}
