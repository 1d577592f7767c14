package ddbtest

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemSize is an item's size as DynamoDB bills it: attribute names plus values (strings and
// binaries by length, numbers at most 21 bytes, maps and lists 3 bytes plus 1 per element).
func ItemSize(av map[string]types.AttributeValue) int {
	n := 0
	for name, v := range av {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return min(len(v.Value)/2+2, 21)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += len(k) + valueSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += valueSize(e) + 1
		}
		return n
	}
	return 0
}

// transactionUnits estimates the write units AWS bills for a transaction: two per 1 KB of each
// item. DynamoDB Local under-reports transactions, so Counter counts them with this instead.
// A put is billed by its item; an update by what it writes (the stored item may be larger, so
// the estimate is low by the unchanged attributes); a delete or condition check by its key.
func transactionUnits(in *dynamodb.TransactWriteItemsInput) float64 {
	units := 0.0
	for _, it := range in.TransactItems {
		size := 0
		switch {
		case it.Put != nil:
			size = ItemSize(it.Put.Item)
		case it.Update != nil:
			size = ItemSize(it.Update.Key) + ItemSize(it.Update.ExpressionAttributeValues)
		case it.Delete != nil:
			size = ItemSize(it.Delete.Key)
		case it.ConditionCheck != nil:
			size = ItemSize(it.ConditionCheck.Key)
		}
		units += 2 * float64((size+1023)/1024)
	}
	return units
}
