package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmit: a record is one JSON line that is a valid EMF document: the _aws directive names
// every metric with its unit, in the namespace with the Function dimension, and every metric and
// dimension is a top-level member of the line.
func TestEmit(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&out, nil))
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	Emit(context.Background(), logger, at, "p1", Count(SpansIngested, 20), Count(SpansRejected, 0), Amount(ModelCostUSD, 0.0042))

	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 1, "one line: %s", out.Bytes())
	var rec map[string]any
	require.NoError(t, json.Unmarshal(lines[0], &rec))
	aws, ok := rec["_aws"].(map[string]any)
	require.True(t, ok, "an _aws member: %s", lines[0])
	assert.EqualValues(t, at.UnixMilli(), aws["Timestamp"])
	blocks := aws["CloudWatchMetrics"].([]any)
	require.Len(t, blocks, 1)
	block := blocks[0].(map[string]any)
	assert.Equal(t, Namespace, block["Namespace"])
	assert.Equal(t, []any{[]any{"Function"}}, block["Dimensions"])
	assert.Equal(t, []any{
		map[string]any{"Name": SpansIngested, "Unit": UnitCount},
		map[string]any{"Name": SpansRejected, "Unit": UnitCount},
		map[string]any{"Name": ModelCostUSD, "Unit": UnitNone},
	}, block["Metrics"])
	assert.Equal(t, "local", rec["Function"], "outside Lambda")
	assert.Equal(t, "p1", rec["project_id"], "a property, not a dimension")
	assert.EqualValues(t, 20, rec[SpansIngested])
	assert.EqualValues(t, 0, rec[SpansRejected], "zeros are published")
	assert.InDelta(t, 0.0042, rec[ModelCostUSD], 1e-12)

	out.Reset()
	Emit(context.Background(), logger, at, "p1")
	assert.Empty(t, out.Bytes(), "no values, no record")
}

func TestFunctionName(t *testing.T) {
	assert.Equal(t, "plume-Tracing-abc", functionName(func(k string) string {
		if k == "AWS_LAMBDA_FUNCTION_NAME" {
			return "plume-Tracing-abc"
		}
		return ""
	}))
	assert.Equal(t, "local", functionName(func(string) string { return "" }))
}
