package asyncinvoke_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/asyncinvoke"
	"github.com/plumehq/plume/shared/deadletter"
	"github.com/plumehq/plume/shared/lambdaemu/emutest"
)

// TestEmulatedFunction drives a real bootstrap (lambdaemu's echo function) through an
// Invoker: a function error is retried, and its record carries the error the runtime posted.
func TestEmulatedFunction(t *testing.T) {
	emu := emutest.Start(t, t.Context(), "../lambdaemu/testdata/echo", nil)
	dest := &destination{}
	inv := asyncinvoke.New(func(ctx context.Context, payload []byte) error {
		_, err := emu.Invoke(ctx, payload)
		return err
	}, asyncinvoke.Config{
		FunctionArn: arn,
		Delay:       func(int) time.Duration { return time.Millisecond },
		OnFailure:   dest.send,
		Logger:      (&logs{}).logger(),
	})
	inv.Invoke([]byte(`{"fail":"judge model unavailable"}`))
	inv.Invoke([]byte(`{"key":"spans/a"}`))
	require.NoError(t, inv.Close(t.Context()))

	assert.Equal(t, asyncinvoke.Stats{Invocations: 2, Retries: 2, Successes: 1, Failures: 1}, inv.Stats())
	require.Len(t, dest.records, 1)
	r := dest.records[0]
	assert.Equal(t, deadletter.ConditionRetriesExhausted, r.RequestContext.Condition)
	assert.Equal(t, 3, r.RequestContext.ApproximateInvokeCount)
	assert.JSONEq(t, `{"fail":"judge model unavailable"}`, string(r.RequestPayload))
	assert.JSONEq(t, `{"errorMessage":"judge model unavailable","errorType":"EchoError"}`, string(r.ResponsePayload))
}
