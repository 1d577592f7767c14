package evaluator_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On-demand prices (us-east-1, USD) behind the cost figures: DynamoDB per write and read
// request unit, Lambda (arm64) per GB-second and per request, S3 per GET.
const (
	priceWRU       = 0.625e-6
	priceRRU       = 0.125e-6
	priceGBSecond  = 0.0000133334
	priceInvoke    = 0.2e-6
	priceS3Get     = 0.4e-6
	evaluatorGB    = 0.25 // FunctionMemorySize's default, 256 MB
	modelLatency   = 1.5  // seconds a judge model call takes, for the duration estimate
	callsInFlight  = 8    // JudgeConcurrency's default
	spansPerBatch  = 100
	batchesPerTest = 1
)

// TestRequestsPerEvaluatedSpan pins what one batch of 100 llm spans costs the evaluator with
// one judge that takes them all, and reports it per evaluated span and per 1,000 evaluations:
//
//	per batch: Query (judges), Query (calibrations), BatchGetItem (summaries, 100 keys),
//	           GetObject (the batch)
//	per span:  UpdateItem (claim), model call, UpdateItem (complete)
//	per 99:    TransactWriteItems (evaluations and the judge's counters), after a BatchGetItem
//	           per 50 of them (the spans and earlier evaluations the write checks) and one of
//	           their traces (their sessions, where GSI3 indexes them): 100 evaluations are a
//	           chunk of 99 (3 BatchGetItem) and one of 1 (2 BatchGetItem)
func TestRequestsPerEvaluatedSpan(t *testing.T) {
	w := newWorld(t)
	w.judge(t, map[string]any{"name": "every span"})
	var spans []map[string]any
	for range spansPerBatch {
		spans = append(spans, span("support", nil, "a question of average length about an order"))
	}
	w.ingest(t, spans...)
	keys := w.takeKeys()
	require.Len(t, keys, batchesPerTest)
	w.api.DDB.Reset()
	w.api.S3.Reset()
	calls := w.fake.Count()

	require.NoError(t, w.runner.Handle(context.Background(), eventFor(t, keys[0], time.Now())))

	assert.Equal(t, spansPerBatch, w.fake.Count()-calls, "one model call per evaluation")
	assert.Equal(t, map[string]int{
		"Query": 2, "BatchGetItem": 1 + 3 + 2, "UpdateItem": 2 * spansPerBatch, "TransactWriteItems": 2,
	}, w.api.DDB.Counts())
	assert.Equal(t, 1, w.api.S3.Count("GetObject"))

	read, write := w.api.DDB.Units()
	requests := float64(w.api.DDB.Total()) / spansPerBatch
	ddbPer1000 := (read*priceRRU + write*priceWRU) * 1000 / spansPerBatch
	// The invocation waits for the model: spansPerBatch calls, callsInFlight at a time.
	seconds := modelLatency * spansPerBatch / callsInFlight
	lambdaPer1000 := (seconds*evaluatorGB*priceGBSecond + priceInvoke) * 1000 / spansPerBatch
	s3Per1000 := priceS3Get * 1000 / spansPerBatch
	t.Logf("per evaluated span: %.2f DynamoDB requests, %.2f RRU, %.2f WRU, 1 model call", requests, read/spansPerBatch, write/spansPerBatch)
	t.Logf("AWS cost per 1,000 evaluations (model tokens excluded): DynamoDB $%.5f + Lambda $%.5f + S3 $%.6f = $%.5f",
		ddbPer1000, lambdaPer1000, s3Per1000, ddbPer1000+lambdaPer1000+s3Per1000)
	assert.LessOrEqual(t, ddbPer1000+lambdaPer1000+s3Per1000, 0.01, "a thousand evaluations cost under a cent of AWS")
}
