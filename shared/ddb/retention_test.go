package ddb

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/infra"
)

// TestLaterExpiry: a heal that applies an old delta after newer ones keeps the later TTL, and
// retention off writes none.
func TestLaterExpiry(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	stored := func(ttl time.Time) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{infra.AttrTTL: num(ttl.Unix())}
	}
	tests := []struct {
		name      string
		retention time.Duration
		cur       map[string]types.AttributeValue
		want      int64
	}{
		{"off", 0, stored(at.Add(10 * day)), 0},
		{"new item", 7 * day, nil, at.Add(7 * day).Unix()},
		{"item without TTL (written before retention)", 7 * day, map[string]types.AttributeValue{}, at.Add(7 * day).Unix()},
		{"refreshed", 7 * day, stored(at.Add(6 * day)), at.Add(7 * day).Unix()},
		{"never lowered", 7 * day, stored(at.Add(8 * day)), at.Add(8 * day).Unix()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewTraceStore(nil, WithRetention(tt.retention))
			assert.Equal(t, tt.want, s.laterExpiry(tt.cur, at))
		})
	}
}
