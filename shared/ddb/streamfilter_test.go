package ddb_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/ddb"
)

func TestStreamFilterPassesItsKeysInserted(t *testing.T) {
	change := func(event, sk string) ddb.StreamRecord {
		img := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "P#p"}, "SK": &types.AttributeValueMemberS{Value: sk}}
		r := ddb.StreamRecord{EventName: event, Sequence: sk}
		if event == "REMOVE" {
			r.Old = img
		} else {
			r.New = img
		}
		return r
	}
	batch := []ddb.StreamRecord{
		change("INSERT", "SPAN"), change("MODIFY", "TRACE"), change("REMOVE", "SPAN"),
		change("INSERT", "EVAL#j1"), change("MODIFY", "EVAL"), change("INSERT", "SPANS"), change("INSERT", "FB#u"),
	}
	f := ddb.StreamFilter{Keys: []string{"SPAN", "TRACE"}, Prefixes: []string{"EVAL#", "FB#"}}
	var passed []string
	for _, r := range f.Pass(batch) {
		passed = append(passed, r.EventName+" "+r.Sequence)
	}
	assert.Equal(t, []string{"INSERT SPAN", "MODIFY TRACE", "INSERT EVAL#j1", "INSERT FB#u"}, passed)
	assert.Empty(t, f.Pass(nil))

	monitor := func(state string) ddb.StreamRecord {
		r := change("REMOVE", "MON#m1")
		r.Old["st"] = &types.AttributeValueMemberS{Value: state}
		return r
	}
	f.Removals = []ddb.StreamRemoval{{Prefix: "MON#", Attr: "st", Value: "alerting"}}
	assert.Equal(t, []ddb.StreamRecord{monitor("alerting")}, f.Pass([]ddb.StreamRecord{monitor("ok"), monitor("alerting"), change("REMOVE", "SPAN")}),
		"only the deletion of an alerting monitor")
}
