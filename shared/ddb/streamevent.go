package ddb

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// streamEvent is what Lambda invokes a stream consumer (RollupFunction, EventsFunction) with: a
// batch of one shard's records, with the tumbling window's fields (TumblingWindowInSeconds in
// template.yaml): the shard, which makes a record's sequence number comparable to another's,
// and the window's state and end.
type streamEvent struct {
	Records         []streamRecordJSON `json:"Records"`
	ShardID         string             `json:"shardId"`
	State           map[string]string  `json:"state"`
	FinalInvoke     bool               `json:"isFinalInvokeForWindow"`
	TerminatedEarly bool               `json:"isWindowTerminatedEarly"`
}

// streamRecordJSON is a change record as Lambda's events and the Streams API's GetRecords
// write it.
type streamRecordJSON struct {
	EventName string `json:"eventName"`
	DynamoDB  struct {
		SequenceNumber string                     `json:"SequenceNumber"`
		OldImage       map[string]json.RawMessage `json:"OldImage"`
		NewImage       map[string]json.RawMessage `json:"NewImage"`
		// ApproximateCreationDateTime is when the change was made, in seconds since the epoch.
		ApproximateCreationDateTime float64 `json:"ApproximateCreationDateTime"`
	} `json:"dynamodb"`
}

// DecodeStreamEvent reads a stream event into its shard and records.
func DecodeStreamEvent(raw []byte) (string, []StreamRecord, error) {
	shard, records, _, err := DecodeStreamWindow(raw)
	return shard, records, err
}

// DecodeStreamWindow reads a stream event into its shard, its records and its tumbling
// window's part: the state and whether the window ends (its last invocation, or one Lambda
// ended early).
func DecodeStreamWindow(raw []byte) (string, []StreamRecord, StreamWindow, error) {
	var ev streamEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return "", nil, StreamWindow{}, fmt.Errorf("decode the stream event: %w", err)
	}
	records := make([]StreamRecord, len(ev.Records))
	for i, r := range ev.Records {
		var err error
		if records[i], err = r.record(); err != nil {
			return "", nil, StreamWindow{}, err
		}
	}
	return ev.ShardID, records, StreamWindow{State: ev.State, Final: ev.FinalInvoke || ev.TerminatedEarly}, nil
}

// record is r as a StreamRecord.
func (r streamRecordJSON) record() (StreamRecord, error) {
	old, err := image(r.DynamoDB.OldImage)
	if err != nil {
		return StreamRecord{}, err
	}
	img, err := image(r.DynamoDB.NewImage)
	if err != nil {
		return StreamRecord{}, err
	}
	out := StreamRecord{EventName: r.EventName, Sequence: r.DynamoDB.SequenceNumber, Old: old, New: img}
	if sec := r.DynamoDB.ApproximateCreationDateTime; sec > 0 {
		out.At = time.UnixMilli(int64(sec * 1000)).UTC()
	}
	return out, nil
}

// image reads an item image in DynamoDB's JSON form ({"S": "..."}, {"N": "1"}, ...).
func image(raw map[string]json.RawMessage) (map[string]types.AttributeValue, error) {
	if raw == nil {
		return nil, nil
	}
	out := make(map[string]types.AttributeValue, len(raw))
	for name, v := range raw {
		av, err := attributeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		out[name] = av
	}
	return out, nil
}

// attributeValue reads one attribute value in DynamoDB's JSON form.
func attributeValue(raw json.RawMessage) (types.AttributeValue, error) {
	var v struct {
		S    *string
		N    *string
		B    *string
		BOOL *bool
		NULL *bool
		M    map[string]json.RawMessage
		L    []json.RawMessage
		SS   []string
		NS   []string
		BS   []string
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	switch {
	case v.S != nil:
		return &types.AttributeValueMemberS{Value: *v.S}, nil
	case v.N != nil:
		return &types.AttributeValueMemberN{Value: *v.N}, nil
	case v.B != nil:
		b, err := base64.StdEncoding.DecodeString(*v.B)
		return &types.AttributeValueMemberB{Value: b}, err
	case v.BOOL != nil:
		return &types.AttributeValueMemberBOOL{Value: *v.BOOL}, nil
	case v.NULL != nil:
		return &types.AttributeValueMemberNULL{Value: *v.NULL}, nil
	case v.M != nil:
		m, err := image(v.M)
		return &types.AttributeValueMemberM{Value: m}, err
	case v.L != nil:
		l := make([]types.AttributeValue, len(v.L))
		for i, e := range v.L {
			av, err := attributeValue(e)
			if err != nil {
				return nil, err
			}
			l[i] = av
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case v.SS != nil:
		return &types.AttributeValueMemberSS{Value: v.SS}, nil
	case v.NS != nil:
		return &types.AttributeValueMemberNS{Value: v.NS}, nil
	case v.BS != nil:
		bs := make([][]byte, len(v.BS))
		for i, s := range v.BS {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, err
			}
			bs[i] = b
		}
		return &types.AttributeValueMemberBS{Value: bs}, nil
	}
	return nil, fmt.Errorf("unknown attribute value %s", raw)
}
