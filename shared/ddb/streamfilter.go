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
	if r.EventName != "INSERT" && r.EventName != "MODIFY" {
		return false
	}
	sk, ok := r.New["SK"].(*types.AttributeValueMemberS)
	if !ok {
		return false
	}
	return slices.Contains(f.Keys, sk.Value) || slices.ContainsFunc(f.Prefixes, func(p string) bool { return strings.HasPrefix(sk.Value, p) })
}
