package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
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

// TestDirective: a record is byte for byte the line the JSON handler wrote when the directive
// was a struct encoded by encoding/json (emitStructs, kept here as the oracle): crafted values
// (HTML, quotes, control characters, invalid UTF-8, line separators, the largest floats) and
// random ones.
func TestDirective(t *testing.T) {
	crafted := [][]Value{
		{Count(ModelCalls, 1)},
		{Count(ModelCalls, 1), Amount(ModelCostUSD, 0.000123), Count(ModelTokens, 1234567)},
		{Amount("a<b>&c", 1e21), {Name: `q"uo\te`, Value: -0.0, Unit: "tab\there"}},
		{{Name: "bad\xffutf8\u2028\u2029", Value: 1e-7, Unit: "\x00\x1f\x7f"}, {Name: "", Value: 3.5, Unit: ""}},
		{{Name: "ünïcødé 名前", Value: 1.7976931348623157e308, Unit: UnitNone}},
	}
	rng := rand.New(rand.NewPCG(31, 4))
	alphabet := []rune("aZ09 _<>&\"\\\t\n\u2028é名\x7f")
	word := func() string {
		r := make([]rune, rng.IntN(12))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if rng.IntN(8) == 0 {
			return string(r) + "\xfe"
		}
		return string(r)
	}
	for range 500 {
		values := make([]Value, 1+rng.IntN(4))
		for i := range values {
			values[i] = Value{Name: word(), Value: rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20)), Unit: word()}
		}
		crafted = append(crafted, values)
	}
	at := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	for i, values := range crafted {
		for _, project := range []string{"", "5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10", "p<&>\"1"} {
			var got, want bytes.Buffer
			Emit(context.Background(), slog.New(slog.NewJSONHandler(&got, &slog.HandlerOptions{ReplaceAttr: noTime})), at.Add(time.Duration(i)*time.Millisecond), project, values...)
			emitStructs(context.Background(), slog.New(slog.NewJSONHandler(&want, &slog.HandlerOptions{ReplaceAttr: noTime})), at.Add(time.Duration(i)*time.Millisecond), project, values...)
			require.NotEmpty(t, want.String())
			require.Equal(t, want.String(), got.String(), "values %q, project %q", values, project)
			d := directive{timestamp: int64(i), values: values}
			raw, err := d.MarshalJSON()
			require.NoError(t, err)
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, raw))
			require.Equal(t, compact.String(), string(d.AppendJSON([]byte("x"))[1:]), "compact, as the logger copies it")
		}
	}
}

// noTime drops a record's time, which differs between two records.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// emitStructs is Emit as it was before the directive wrote itself: the oracle of TestDirective.
func emitStructs(ctx context.Context, logger *slog.Logger, now time.Time, projectID string, values ...Value) {
	type metricSpec struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	type metricsBlock struct {
		Namespace  string       `json:"Namespace"`
		Dimensions [][]string   `json:"Dimensions"`
		Metrics    []metricSpec `json:"Metrics"`
	}
	type directive struct {
		Timestamp         int64          `json:"Timestamp"`
		CloudWatchMetrics []metricsBlock `json:"CloudWatchMetrics"`
	}
	d := directive{Timestamp: now.UnixMilli(), CloudWatchMetrics: []metricsBlock{{
		Namespace: Namespace, Dimensions: [][]string{{"Function"}}, Metrics: make([]metricSpec, len(values)),
	}}}
	attrs := []any{"_aws", d, "Function", function}
	if projectID != "" {
		attrs = append(attrs, "project_id", projectID)
	}
	for i, v := range values {
		d.CloudWatchMetrics[0].Metrics[i] = metricSpec{Name: v.Name, Unit: v.Unit}
		attrs = append(attrs, v.Name, v.Value)
	}
	logger.InfoContext(ctx, "metrics", attrs...)
}

// BenchmarkEmit is one record of the gateway's (a call, its tokens and cost).
func BenchmarkEmit(b *testing.B) {
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	at := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		Emit(context.Background(), logger, at, "5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10", Count(ModelCalls, 1), Count(ModelTokens, 59), Amount(ModelCostUSD, 0.0001))
	}
}
