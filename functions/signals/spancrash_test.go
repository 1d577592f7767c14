package signals_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/internal/faultproxy"
	"github.com/plumehq/plume/shared/judge"
)

// TestSpanChoicesCrashAndReplay fails DynamoDB under the stream consumer while it joins spans'
// carried choices and verdicts to their variants: each operation the join uses fails once
// before it takes effect, and each write takes effect with its answer lost (the SDK's retry
// meets its effect); every failed batch is applied again, and every drain replays the whole
// stream from its oldest record, as Lambda's retries and a replayed shard do. The report still
// counts each span's verdict once, in its carried variant, and each recorded choice once.
func TestSpanChoicesCrashAndReplay(t *testing.T) {
	srv := apitest.New(t, apitest.Options{Faults: true})
	a := srv.A
	ctx := context.Background()
	const test = "crash_test"
	traceB, sessionA := uuid.NewString(), uuid.NewString()
	onTrace := choiceID(t, srv, a.Key, "trace", traceB, test, "b")
	onSession := choiceID(t, srv, a.Key, "session", sessionA, test, "a")
	res := srv.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "helpful", "template": "Helpful? {{output}}"})
	judgeID := res.Map(t)["id"].(string)
	j, err := srv.Env.JudgeStore().Judge(ctx, a.ProjectID, judgeID)
	require.NoError(t, err)

	// Each rule fires on a request and on the SDK's retry of it (Retries: whatever concurrent
	// requests of the operation come between), so the batch fails.
	faults := []faultproxy.Rule{
		{Op: "BatchGetItem", Fault: faultproxy.ServerError, Retries: true},
		{Op: "PutItem", Fault: faultproxy.ServerError, Retries: true},
		{Op: "PutItem", Fault: faultproxy.DropAfterForward, Retries: true},
		{Op: "TransactWriteItems", Fault: faultproxy.ServerError, Retries: true},
		{Op: "TransactWriteItems", Fault: faultproxy.DropAfterForward, Retries: true},
		{Op: "Query", Fault: faultproxy.ServerError, Retries: true},
	}
	failures := 0
	for _, rule := range faults {
		inB, inA := uuid.NewString(), uuid.NewString()
		payload := "[" + pythonSpan(inB, traceB, uuid.NewString(), carried(onTrace, test, "b")) + ", " +
			pythonSpan(inA, uuid.NewString(), sessionA, carried(onSession, test, "a")) + "]"
		res := srv.Do(t, "POST", "/spans", a.Key, payload)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		_, err := srv.Env.JudgeStore().PutEvaluations(ctx, j, []judge.Evaluation{
			{ID: uuid.NewString(), SpanID: inB, JudgeID: judgeID, EvaluationType: "binary", Result: true, CreatedAt: time.Now().UTC()},
			{ID: uuid.NewString(), SpanID: inA, JudgeID: judgeID, EvaluationType: "binary", Result: false, CreatedAt: time.Now().UTC()},
		})
		require.NoError(t, err)
		srv.DDBFaults.Reset()
		srv.DDBFaults.Fail(rule)
		failures += replayTolerating(t, srv)
		assert.Positive(t, srv.DDBFaults.Count(rule.Op), "%s was used", rule.Op)
		srv.DDBFaults.Reset()
	}
	assert.Positive(t, failures, "batches failed and were applied again")
	replayTolerating(t, srv)

	rounds := int64(len(faults))
	rep := report(t, srv, a, test)
	want := map[string]api.ABVariantResult{
		"a": {Key: "a", Choices: 1, Judges: []api.ABJudgeStats{{JudgeID: judgeID, Evaluations: rounds, Passed: 0, PassRate: 0}}},
		"b": {Key: "b", Choices: 1, Judges: []api.ABJudgeStats{{JudgeID: judgeID, Evaluations: rounds, Passed: rounds, PassRate: 1}}},
	}
	require.Len(t, rep.Results, 2)
	for _, r := range rep.Results {
		assert.Equal(t, want[r.Key].Choices, r.Choices, "choices of %s", r.Key)
		assert.Equal(t, want[r.Key].Judges, r.Judges, "judges of %s", r.Key)
	}
}

// replayTolerating applies the whole stream to the stream consumer as RollupFunction does (each
// batch a window of its own), a failed batch applied again, and returns how many batches
// failed.
func replayTolerating(t *testing.T, srv *apitest.API) int {
	t.Helper()
	apply, err := srv.Env.StreamConsumer()
	require.NoError(t, err)
	return srv.ReplayTolerating(t, app.ApplyEach(apply), nil)
}
