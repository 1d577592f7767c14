package tracing_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// AWS list prices (us-east-1, on-demand, checked 2026-11-21) and the assumptions behind the
// dollars per million spans that docs/tracing.md reports.
const (
	apiGatewayPerMillion = 1.00         // HTTP API, per million requests
	lambdaPerMillion     = 0.20         // per million invocations
	lambdaPerGBSecond    = 0.0000133334 // arm64
	lambdaMemoryGB       = 0.5          // TracingIngestFunction MemorySize 512
	s3PutPerThousand     = 0.005        // PUT requests
	s3GetPerThousand     = 0.0004
	writeUnitPerMillion  = 0.625 // DynamoDB on-demand write request units
	readUnitPerMillion   = 0.125 // DynamoDB on-demand read request units
)

// lambdaSeconds is the assumed billed duration of one batch (not measured here: DynamoDB Local
// and gofakes3 are not AWS). It is generous for ~1 + batch/16 rounds of 5-10 ms AWS calls.
var lambdaSeconds = map[int]float64{20: 0.08, 100: 0.25}

// TestIngestCostPerSpan sends 1,000 realistic spans (llm spans with ~1 KB input and output,
// generic tool spans) as the SDKs batch them and counts what AWS would bill.
func TestIngestCostPerSpan(t *testing.T) {
	// The bounds price the request path: one summary per span, and nothing else. The trace and
	// session aggregates are the change stream consumer's, priced with the rest of the stream
	// by shared/ddb's TestIngestCostPerMillionSpans (docs/tracing.md, What ingestion costs).
	// With the aggregates on the request path (pending deltas and heals) a batch of 20 cost
	// 2.21 write units per span here and a batch of 100 1.15.
	tests := []struct {
		batch, tracesPerBatch int
		maxDollars, maxUnits  float64 // per million spans; write units per span
		// linked gives the llm spans the prompt linkage the SDKs' prompt helper sets, which
		// also indexes them among the prompt's completions.
		linked bool
	}{
		{batch: 20, tracesPerBatch: 2, maxDollars: 1.00, maxUnits: 1.05},  // Python SDK: every second, spans of the traces in flight
		{batch: 100, tracesPerBatch: 1, maxDollars: 0.75, maxUnits: 1.05}, // TypeScript SDK: 100 spans of one trace
		{batch: 20, tracesPerBatch: 2, maxDollars: 1.00, maxUnits: 1.05, linked: true},
		{batch: 100, tracesPerBatch: 1, maxDollars: 0.75, maxUnits: 1.05, linked: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("batch %d linked %v", tt.batch, tt.linked), func(t *testing.T) {
			api := newTestAPI(t)
			api.ddb.Reset()
			api.s3.Reset()
			const total = 1000
			perTrace := tt.batch / tt.tracesPerBatch * 2 // each trace spans two batches
			io := strings.Repeat("lorem ipsum dolor sit amet ", 40)
			var traces [][]map[string]any
			for ti := range total / perTrace {
				traceID, rootID := uuid.NewString(), uuid.NewString()
				session := fmt.Sprintf("conversation-%d", ti/5)
				start := time.Now().Add(-time.Hour)
				var spans []map[string]any
				for si := range perTrace {
					sp := map[string]any{
						"id": uuid.NewString(), "trace_id": traceID, "session_id": session,
						"name": "tool.search", "kind": "generic", "parent_span_id": rootID,
						"started_at":  float64(start.Add(time.Duration(si)*time.Second).UnixMicro()) / 1e6,
						"duration_ms": 850.5, "status": "ok", "tags": map[string]string{"env": "prod"},
					}
					if si == perTrace-1 { // the root comes last: children before parents
						sp["id"], sp["name"] = rootID, "handle_request"
						delete(sp, "parent_span_id")
					}
					if si%2 == 0 {
						sp["name"], sp["kind"] = "openai.chat.completions.create", "llm"
						sp["input_data"], sp["output_data"] = io, io
						attrs := map[string]any{"provider": "openai", "model": "gpt-4o-mini", "inputTokens": 1250, "outputTokens": 87}
						if tt.linked {
							attrs["zeroeval"] = map[string]any{"task": "support-bot", "prompt_slug": "support-bot", "prompt_version": 3, "prompt_version_id": "3c1f4f7d-8a4b-4d59-9a57-5f0c7f4e2a10"}
						}
						sp["attributes"] = attrs
					}
					spans = append(spans, sp)
				}
				traces = append(traces, spans)
			}
			// Each batch carries half of each of tracesPerBatch traces.
			var batches [][]map[string]any
			half := perTrace / 2
			for g := 0; g < len(traces); g += tt.tracesPerBatch {
				for part := range 2 {
					var b []map[string]any
					for _, tr := range traces[g:min(len(traces), g+tt.tracesPerBatch)] {
						b = append(b, tr[part*half:(part+1)*half]...)
					}
					batches = append(batches, b)
				}
			}
			sent := 0
			for _, b := range batches {
				res := api.do(t, "POST", "/spans", api.a.key, b)
				require.Equal(t, http.StatusOK, res.status, string(res.raw))
				sent += len(b)
			}
			require.Equal(t, total, sent)

			// The first round of a batch reads nothing (its spans are taken for new).
			reads, writes := api.ddb.Units()
			requests := api.ddb.Total() - 1 // less the one key lookup of a cold auth cache
			puts, gets := api.s3.Count("PutObject"), api.s3.Count("GetObject")
			invocations := float64(len(batches))
			perMillion := 1e6 / total
			dollars := perMillion * (invocations*apiGatewayPerMillion/1e6 +
				invocations*lambdaPerMillion/1e6 + invocations*lambdaSeconds[tt.batch]*lambdaMemoryGB*lambdaPerGBSecond +
				float64(puts)*s3PutPerThousand/1e3 + float64(gets)*s3GetPerThousand/1e3 +
				writes*writeUnitPerMillion/1e6 + reads*readUnitPerMillion/1e6)
			t.Logf("per 1,000 spans at batch %d: %d requests, %d DynamoDB requests, %.0f write units (%.2f per span), %.0f read units, %d S3 PUTs, %d S3 GETs -> $%.3f per million spans",
				tt.batch, len(batches), requests, writes, writes/total, reads, puts, gets, dollars)
			t.Logf("write and read units by operation: %v; requests: %v", api.ddb.UnitsByOperation(), api.ddb.Counts())
			assert.LessOrEqual(t, writes/total, tt.maxUnits, "DynamoDB write units per span")
			assert.LessOrEqual(t, dollars, tt.maxDollars)
			assert.Equal(t, len(batches), puts, "one S3 object per batch")
		})
	}
}
