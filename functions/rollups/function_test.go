package rollups

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/rollup"
)

// TestFunctionAnswersItsWindow invokes RollupFunction's handler as Lambda does with a tumbling
// window: the sample batch (events/rollups) in a window's first invocation, which answers the
// state that holds its rollups and writes none, then the window's last invocation, without
// records, handed that state: it writes them and answers an empty state.
func TestFunctionAnswersItsWindow(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	job, err := Function.BuildAnswering(srv.Env)
	require.NoError(t, err)
	raw, err := os.ReadFile("../../events/rollups/stream-batch.json")
	require.NoError(t, err)
	var event map[string]any
	require.NoError(t, json.Unmarshal(raw, &event))
	ctx := context.Background()
	invoke := func(event map[string]any) map[string]string {
		t.Helper()
		in, err := json.Marshal(event)
		require.NoError(t, err)
		out, err := job(ctx, in)
		require.NoError(t, err)
		var answer struct {
			State map[string]string `json:"state"`
		}
		require.NoError(t, json.Unmarshal(out, &answer))
		require.NotNil(t, answer.State, "Lambda takes an answer without a state for a failure: %s", out)
		return answer.State
	}
	at := time.UnixMicro(1764644400000000).UTC()
	spans := func() int64 {
		m, err := rollup.Metrics(ctx, srv.Env.Rollups(), "events-sample",
			api.MetricsQuery{From: at.Truncate(time.Hour), To: at.Truncate(time.Hour).Add(time.Hour), Bucket: api.BucketHour})
		require.NoError(t, err)
		return m.Totals.Spans
	}

	event["isFinalInvokeForWindow"] = false
	state := invoke(event)
	assert.NotEmpty(t, state, "the window's state holds the batch's rollups")
	assert.Zero(t, spans(), "the rollups are written when the window ends")

	event["Records"], event["state"], event["isFinalInvokeForWindow"] = []any{}, state, true
	assert.Empty(t, invoke(event))
	assert.Equal(t, int64(1), spans())
}
