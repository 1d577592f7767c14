package sweeper_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/sweeper"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

// TestSweepHealsSettledDeltas: the job built from the Env, as SweeperFunction builds it,
// applies a pending delta older than the grace to its trace and session, and leaves a younger
// one (its request may still be writing) until a later run finds it old enough.
func TestSweepHealsSettledDeltas(t *testing.T) {
	client, counter, name := ddbtest.NewTable(t)
	now := time.Now().UTC().Truncate(time.Second)
	clock := now
	env := app.NewEnv(config.Config{Table: name}, app.Clients{DynamoDB: client}, app.WithClock(func() time.Time { return clock }))
	sweep, err := sweeper.Function.Build(env)
	require.NoError(t, err)
	store, ctx, project := env.Traces(), context.Background(), uuid.NewString()

	// Two requests that stopped after their writes, before their heals: one long ago, one
	// that may still be running.
	settled, sessionID := uuid.NewString(), uuid.NewString()
	writeUnhealed(t, store, project, settled, sessionID, now.Add(-sweeper.Grace-time.Minute))
	recent := uuid.NewString()
	writeUnhealed(t, store, project, recent, "", now.Add(-sweeper.Grace/2))

	counter.Reset()
	require.NoError(t, sweep(ctx, nil))
	// What SweeperFunction's policy in template.yaml grants (a transaction is authorised per
	// contained action): a heal that starts sending another request needs it granted there.
	assert.Subset(t, []string{"BatchGetItem", "Query", "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"},
		slices.Collect(maps.Keys(counter.Counts())), "requests of a sweep")

	traces, err := store.Traces(ctx, project, []string{settled, recent})
	require.NoError(t, err)
	require.Len(t, traces, 1, "only the settled trace is applied")
	got := traces[0]
	assert.Equal(t, settled, got.ID)
	assert.Equal(t, 1, got.SpanCount)
	assert.Equal(t, 1, got.ErrorCount)
	assert.InDelta(t, 0.25, got.Cost, 1e-12)
	sessions, err := store.Sessions(ctx, project, []string{sessionID})
	require.NoError(t, err)
	require.Len(t, sessions, 1, "the trace's session is healed too")
	assert.Equal(t, 1, sessions[0].TraceCount)
	assert.InDelta(t, 0.25, sessions[0].Cost, 1e-12)

	r, err := store.RecountTrace(ctx, project, settled)
	require.NoError(t, err)
	assert.Zero(t, r.Pending)
	assert.True(t, r.Exact(), "%+v", r)
	r, err = store.RecountTrace(ctx, project, recent)
	require.NoError(t, err)
	assert.Equal(t, 1, r.Pending, "younger than the grace: left alone")

	clock = now.Add(sweeper.Grace) // a later run
	require.NoError(t, sweep(ctx, nil))
	traces, err = store.Traces(ctx, project, []string{recent})
	require.NoError(t, err)
	require.Len(t, traces, 1, "applied once old enough")
	assert.Equal(t, 1, traces[0].SpanCount)
}

// writeUnhealed writes one span of a trace as a request does, recording its pending delta at
// at and putting its summary, and stops there: nothing heals it.
func writeUnhealed(t *testing.T, store *ddb.TraceStore, project, traceID, sessionID string, at time.Time) {
	t.Helper()
	start := at.Add(-time.Second)
	end := start.Add(500 * time.Millisecond)
	spanID := uuid.NewString()
	sum := trace.Summary{
		SpanID: spanID, TraceID: traceID, Name: "chat", Kind: "generic", Status: "error", HasError: true,
		StartedAt: start, EndedAt: &end, Cost: ptr(0.25), SessionID: sessionID, CreatedAt: at, UpdatedAt: at,
		Location: trace.Location{Key: "spans/unhealed.ndjson", Length: 100},
	}
	_, err := store.WriteTrace(context.Background(), project, trace.TraceWrite{
		ID: uuid.Must(uuid.NewV7()).String(),
		Delta: trace.TraceDelta{
			TraceID: traceID, SessionID: sessionID, MinStart: start, MaxEnd: &end, FirstName: "chat", At: at,
			Root:    &trace.RootSpan{SpanID: spanID, Name: "chat", Status: "error"},
			Changes: []trace.SpanChange{{SpanID: spanID, New: true, Errors: 1, Cost: 0.25}},
		},
		Puts: []trace.SummaryPut{{Summary: sum}},
	})
	require.NoError(t, err)
}

// stubSweeper answers a sweep with fixed results, for the job's decisions.
type stubSweeper struct {
	healed int
	err    error
	before time.Time
}

func (s *stubSweeper) Sweep(_ context.Context, before time.Time) (int, error) {
	s.before = before
	return s.healed, s.err
}

// TestJobErrors: a run is an error for the runtime only when it healed nothing and something
// failed; every outcome is logged.
func TestJobErrors(t *testing.T) {
	failed := errors.New("heal P#p#T#t: throttled")
	tests := []struct {
		name    string
		healed  int
		err     error
		wantErr bool
		wantLog string
	}{
		{name: "nothing pending", wantLog: `"level":"INFO","msg":"sweep done","healed":0`},
		{name: "all healed", healed: 3, wantLog: `"level":"INFO","msg":"sweep done","healed":3`},
		{name: "some failed", healed: 2, err: failed, wantLog: `"level":"ERROR","msg":"sweep healed some, others failed","healed":2`},
		{name: "every one failed, or the listing", err: failed, wantErr: true, wantLog: `"level":"ERROR","msg":"sweep failed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			prev := slog.Default()
			slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
			t.Cleanup(func() { slog.SetDefault(prev) })
			now := time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC)
			s := &stubSweeper{healed: tt.healed, err: tt.err}

			err := sweeper.NewJob(s, func() time.Time { return now })(context.Background(), nil)

			if tt.wantErr {
				assert.ErrorIs(t, err, failed)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, now.Add(-sweeper.Grace), s.before)
			assert.Contains(t, logs.String(), tt.wantLog)
			if tt.err != nil {
				assert.Contains(t, logs.String(), "throttled", "the cause is logged")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
