package ddb_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/ddb"
)

// TestDecodeStreamEventTime: a record's time is its ApproximateCreationDateTime (seconds since
// the epoch), what the event of a deletion is dated with.
func TestDecodeStreamEventTime(t *testing.T) {
	raw, err := os.ReadFile("../../events/webhooks/stream-batch.json")
	require.NoError(t, err)
	_, records, err := ddb.DecodeStreamEvent(raw)
	require.NoError(t, err)
	require.NotEmpty(t, records)
	assert.Equal(t, time.Unix(1764644400, 0).UTC(), records[0].At)
}
