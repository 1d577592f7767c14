package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// spanStart is when the spans of these tests start; each lasts spanLength.
var (
	spanStart  = time.Date(2026, 3, 14, 9, 26, 53, 589_793_000, time.UTC)
	spanLength = 1500 * time.Millisecond
)

func (h *harness) traceStore() *ddb.TraceStore {
	return ddb.NewTraceStore(ddb.NewTable(h.client, h.table))
}

// ingest stores one span costing 0.5 in traceID, of sessionID unless it is "", through the
// service the tracing function uses.
func (h *harness) ingest(project, traceID, sessionID string) {
	h.t.Helper()
	blobs, _, _ := blobtest.New(h.t)
	end, ms, cost := spanStart.Add(spanLength), float64(spanLength.Milliseconds()), 0.5
	sp := trace.Span{
		ID: uuid.NewString(), TraceID: traceID, Name: "root", Kind: trace.KindGeneric,
		StartedAt: spanStart, EndedAt: &end, DurationMS: &ms, Cost: &cost, Attributes: json.RawMessage(`{}`),
		CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC(),
	}
	if sessionID != "" {
		sp.SessionID = &sessionID
	}
	_, err := trace.NewService(h.traceStore(), blobs, nil).Ingest(context.Background(), project, []trace.Span{sp})
	require.NoError(h.t, err)
}

// addGhost records, without applying it, a pending delta of one span costing 9 that was never
// stored.
func (h *harness) addGhost(project, traceID string) {
	h.t.Helper()
	_, err := h.traceStore().WriteTrace(context.Background(), project, trace.TraceWrite{
		ID:    uuid.Must(uuid.NewV7()).String(),
		Delta: trace.TraceDelta{TraceID: traceID, Spans: 1, Cost: 9, At: time.Now().UTC()},
	})
	require.NoError(h.t, err)
}

// drift makes traceID's stored aggregates count a span that was never stored: a ghost delta
// applied (what a crash between the two writes of ingestion before pending deltas left). The
// trace's session, if any, takes the ghost's cost too, as it does any delta.
func (h *harness) drift(project, traceID string) {
	h.t.Helper()
	h.addGhost(project, traceID)
	healed, err := h.traceStore().HealTrace(context.Background(), project, traceID)
	require.NoError(h.t, err)
	if healed.Session != "" {
		require.NoError(h.t, h.traceStore().HealSession(context.Background(), project, healed.Session))
	}
}

func (h *harness) recountTrace(project, traceID string) trace.Recount {
	h.t.Helper()
	r, err := h.traceStore().RecountTrace(context.Background(), project, traceID)
	require.NoError(h.t, err)
	return r
}

func (h *harness) recountSession(project, sessionID string) trace.Recount {
	h.t.Helper()
	r, err := h.traceStore().RecountSession(context.Background(), project, sessionID)
	require.NoError(h.t, err)
	return r
}

// recomputed is one element of recompute-trace's and recompute-session's JSON output.
type recomputed struct {
	Kind         string `json:"kind"`
	ID           string `json:"id"`
	Exact        bool   `json:"exact"`
	Fixed        bool   `json:"fixed"`
	Pending      int    `json:"pending"`
	StillPending int    `json:"still_pending"`
	Stored       map[string]any
	Recomputed   map[string]any
	Differences  []struct {
		Field      string `json:"field"`
		Stored     any    `json:"stored"`
		Recomputed any    `json:"recomputed"`
	} `json:"differences"`
}

func (h *harness) recomputeJSON(args ...string) []recomputed {
	h.t.Helper()
	var out []recomputed
	stdout := h.ok(append([]string{"--output", "json", "admin"}, args...)...)
	require.NoError(h.t, json.Unmarshal([]byte(stdout), &out), stdout)
	return out
}

// fields returns the rows of a text table under a header starting with FIELD: field -> cells.
func fields(t *testing.T, out string) map[string][]string {
	t.Helper()
	rows := map[string][]string{}
	in := false
	for line := range strings.Lines(out) {
		cells := strings.Fields(line)
		switch {
		case len(cells) > 0 && cells[0] == "FIELD":
			in = true
		case in && len(cells) > 1:
			rows[cells[0]] = cells[1:]
		default:
			in = false
		}
	}
	return rows
}

func TestRecomputeTrace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "recompute"))
	traceID := uuid.NewString()
	h.ingest(project, traceID, "")
	h.drift(project, traceID)
	drifted := h.recountTrace(project, traceID)
	require.False(t, drifted.Exact(), "%+v", drifted)
	require.Equal(t, 2, drifted.Stored.Count)
	start, end := spanStart.Format(time.RFC3339Nano), spanStart.Add(spanLength).Format(time.RFC3339Nano)

	// --dry-run: every field, stored and recomputed, and which differ; nothing changes.
	r := h.run("admin", "recompute-trace", "--project-id", project, "--trace-id", traceID, "--dry-run")
	require.Equal(t, exitOK, r.code, "a difference is no failure without --exit-code: %s", r)
	assert.Contains(t, r.stdout, "trace "+traceID+": 2 of 5 fields differ; no pending deltas")
	assert.Equal(t, map[string][]string{
		"span_count":  {"2", "1", "yes"},
		"error_count": {"0", "0", "no"},
		"cost":        {"9.5", "0.5", "yes"},
		"started_at":  {start, start, "no"},
		"ended_at":    {end, end, "no"},
	}, fields(t, r.stdout), r.stdout)
	assert.Equal(t, drifted, h.recountTrace(project, traceID), "a dry run changes nothing")

	r = h.run("admin", "recompute-trace", "--project-id", project, "--trace-id", traceID, "--dry-run", "--exit-code")
	assert.Equal(t, exitDiffers, r.code, "%s", r)
	assert.Empty(t, r.stderr, "a difference is not reported as an error")
	assert.Contains(t, r.stdout, "2 of 5 fields differ")

	got := h.recomputeJSON("recompute-trace", "--project-id", project, "--trace-id", traceID, "--dry-run")
	require.Len(t, got, 1)
	assert.Equal(t, "trace", got[0].Kind)
	assert.Equal(t, traceID, got[0].ID)
	assert.False(t, got[0].Exact)
	assert.False(t, got[0].Fixed)
	assert.Zero(t, got[0].Pending)
	assert.Equal(t, map[string]any{"span_count": 2.0, "error_count": 0.0, "cost": 9.5, "started_at": start, "ended_at": end}, got[0].Stored)
	assert.Equal(t, map[string]any{"span_count": 1.0, "error_count": 0.0, "cost": 0.5, "started_at": start, "ended_at": end}, got[0].Recomputed)
	require.Len(t, got[0].Differences, 2)
	assert.Equal(t, "span_count", got[0].Differences[0].Field)
	assert.Equal(t, []any{2.0, 1.0}, []any{got[0].Differences[0].Stored, got[0].Differences[0].Recomputed})
	assert.Equal(t, "cost", got[0].Differences[1].Field)
	assert.Equal(t, []any{9.5, 0.5}, []any{got[0].Differences[1].Stored, got[0].Differences[1].Recomputed})
	assert.Equal(t, drifted, h.recountTrace(project, traceID), "a dry run changes nothing")

	// The fix: what changed, then the trace is exact.
	r = h.run("admin", "recompute-trace", "--project-id", project, "--trace-id", traceID)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Contains(t, r.stdout, "trace "+traceID+": fixed\n")
	assert.Equal(t, map[string][]string{"span_count": {"2", "1"}, "cost": {"9.5", "0.5"}}, fields(t, r.stdout), r.stdout)
	fixed := h.recountTrace(project, traceID)
	assert.True(t, fixed.Exact(), "%+v", fixed)
	assert.Equal(t, 1, fixed.Stored.Count)
	assert.InDelta(t, 0.5, fixed.Stored.Cost, 1e-12)
	assert.NotContains(t, r.stderr, "recompute-session", "the trace has no session")

	// Again: nothing to do.
	r = h.run("admin", "recompute-trace", "--project-id", project, "--trace-id", traceID, "--exit-code")
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Equal(t, "trace "+traceID+": already exact\n", r.stdout)
	r = h.run("admin", "recompute-trace", "--project-id", project, "--trace-id", traceID, "--dry-run", "--exit-code")
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Contains(t, r.stdout, "trace "+traceID+": exact; no pending deltas")
	assert.Equal(t, []string{"1", "1", "no"}, fields(t, r.stdout)["span_count"])
	got = h.recomputeJSON("recompute-trace", "--project-id", project, "--trace-id", traceID)
	require.Len(t, got, 1)
	assert.True(t, got[0].Exact)
	assert.False(t, got[0].Fixed)
	assert.Empty(t, got[0].Differences)
	assert.NotNil(t, got[0].Differences, "an empty array, not null")
}

// TestRecomputeFixJSONAndPending: a fix with --output json reports stored (before) and
// recomputed (now stored); pending deltas are shown by a dry run and applied by the fix.
func TestRecomputeFixJSONAndPending(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "pending"))
	traceID := uuid.NewString()
	h.ingest(project, traceID, "")
	h.addGhost(project, traceID) // pending, not applied

	r := h.run("admin", "recompute-trace", "--project-id", project, "--trace-id", traceID, "--dry-run")
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Contains(t, r.stdout, "trace "+traceID+": exact; 1 pending delta not applied yet")
	assert.Equal(t, 1, h.recountTrace(project, traceID).Pending, "a dry run applies nothing")

	got := h.recomputeJSON("recompute-trace", "--project-id", project, "--trace-id", traceID, "--exit-code")
	require.Len(t, got, 1)
	// The fix applies the ghost (a delta without span changes is applied as it is), then the
	// recount undoes it: net, nothing changed.
	assert.True(t, got[0].Exact, "%+v", got[0])
	assert.False(t, got[0].Fixed)
	assert.Equal(t, 1, got[0].Pending)
	assert.Zero(t, got[0].StillPending, "%+v", got[0])
	after := h.recountTrace(project, traceID)
	assert.True(t, after.Exact(), "%+v", after)
	assert.Zero(t, after.Pending)
	assert.Equal(t, 1, after.Stored.Count)
}

func TestRecomputeSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "sessions"))
	traceID, sessionID := uuid.NewString(), uuid.NewString()
	h.ingest(project, traceID, sessionID)
	h.drift(project, traceID)
	require.True(t, h.recountSession(project, sessionID).Exact(), "the session agrees with its trace as stored")

	// Fixing the trace leaves the session counting the ghost's cost; the command says to
	// recompute the session.
	r := h.run("admin", "recompute-trace", "--project-id", project, "--trace-id", traceID)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Contains(t, r.stderr, "plume admin recompute-session --project-id "+project+" --session-id "+sessionID)

	drifted := h.recountSession(project, sessionID)
	require.False(t, drifted.Exact(), "%+v", drifted)
	r = h.run("admin", "recompute-session", "--project-id", project, "--session-id", strings.ToUpper(sessionID), "--dry-run", "--exit-code")
	require.Equal(t, exitDiffers, r.code, "%s", r)
	assert.Contains(t, r.stdout, "session "+sessionID+": 1 of 5 fields differ", "ids are normalised")
	rows := fields(t, r.stdout)
	assert.Equal(t, []string{"1", "1", "no"}, rows["trace_count"])
	assert.Equal(t, []string{"9.5", "0.5", "yes"}, rows["cost"])
	assert.Equal(t, drifted, h.recountSession(project, sessionID), "a dry run changes nothing")

	got := h.recomputeJSON("recompute-session", "--project-id", project, sessionID)
	require.Len(t, got, 1)
	assert.Equal(t, "session", got[0].Kind)
	assert.True(t, got[0].Fixed)
	assert.Equal(t, 1.0, got[0].Recomputed["trace_count"])
	assert.NotContains(t, got[0].Recomputed, "span_count")
	require.Len(t, got[0].Differences, 1)
	assert.Equal(t, "cost", got[0].Differences[0].Field)
	fixed := h.recountSession(project, sessionID)
	assert.True(t, fixed.Exact(), "%+v", fixed)
	assert.InDelta(t, 0.5, fixed.Stored.Cost, 1e-12)

	r = h.run("admin", "recompute-session", "--project-id", project, "--session-id", sessionID)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Equal(t, "session "+sessionID+": already exact\n", r.stdout)
}

// TestRecomputeSeveral: ids from repeated and comma-separated flags and arguments, done in
// order, repeats once; the first error stops the command after printing what was done.
func TestRecomputeSeveral(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "several"))
	a, b, c := uuid.NewString(), uuid.NewString(), uuid.NewString()
	for _, id := range []string{a, b, c} {
		h.ingest(project, id, "")
	}
	h.drift(project, a)
	h.drift(project, c)

	got := h.recomputeJSON("recompute-trace", "--project-id", project, "--trace-id", a+","+b, "--trace-id", c, a, "--dry-run")
	require.Len(t, got, 3)
	assert.Equal(t, []string{a, b, c}, []string{got[0].ID, got[1].ID, got[2].ID})
	assert.Equal(t, []bool{false, true, false}, []bool{got[0].Exact, got[1].Exact, got[2].Exact})

	unknown := uuid.NewString()
	r := h.run("admin", "recompute-trace", "--project-id", project, a, unknown, c)
	assert.Equal(t, exitUsage, r.code, "%s", r)
	assert.Contains(t, r.stdout, "trace "+a+": fixed")
	assert.NotContains(t, r.stdout, c, "stopped at the unknown trace")
	assert.Contains(t, r.stderr, "error: trace "+unknown+" not found")
	assert.True(t, h.recountTrace(project, a).Exact())
	assert.False(t, h.recountTrace(project, c).Exact())

	r = h.run("--output", "json", "admin", "recompute-trace", "--project-id", project, c, unknown)
	assert.Equal(t, exitUsage, r.code, "%s", r)
	var done []recomputed
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &done), "what was done is printed: %s", r)
	require.Len(t, done, 1)
	assert.True(t, done[0].Fixed)
	var body jsonError
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &body), r.stderr)
	assert.Equal(t, string(errs.CodeNotFound), body.Error.Code)
}

func TestRecomputeErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "errors"))
	id := uuid.NewString()

	tests := []struct {
		name   string
		args   []string
		code   errs.Code
		stderr string
	}{
		{"unknown trace", []string{"recompute-trace", "--project-id", project, "--trace-id", id}, errs.CodeNotFound, "trace " + id + " not found"},
		{"unknown trace, dry run", []string{"recompute-trace", "--project-id", project, "--trace-id", id, "--dry-run"}, errs.CodeNotFound, "trace " + id + " not found"},
		{"unknown session", []string{"recompute-session", "--project-id", project, "--session-id", id}, errs.CodeNotFound, "session " + id + " not found"},
		{"unknown project", []string{"recompute-trace", "--project-id", id, "--trace-id", id}, errs.CodeNotFound, "project " + id + " not found"},
		{"missing project id", []string{"recompute-trace", "--trace-id", id}, errs.CodeInvalid, "--project-id is required"},
		{"missing trace id", []string{"recompute-trace", "--project-id", project}, errs.CodeInvalid, "--trace-id is required"},
		{"missing session id", []string{"recompute-session", "--project-id", project, "--dry-run"}, errs.CodeInvalid, "--session-id is required"},
		{"malformed project id", []string{"recompute-trace", "--project-id", "acme", "--trace-id", id}, errs.CodeInvalid, `project id "acme" is not a UUID`},
		{"malformed trace id", []string{"recompute-trace", "--project-id", project, "--trace-id", id, "t-1"}, errs.CodeInvalid, `trace id "t-1" is not a UUID`},
		{"malformed session id", []string{"recompute-session", "--project-id", project, "--session-id", "conv-42"}, errs.CodeInvalid, `session id "conv-42" is not a UUID`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			r := h.run(append([]string{"admin"}, tt.args...)...)
			assert.Equal(t, exitUsage, r.code, "%s", r)
			assert.Empty(t, r.stdout)
			assert.True(t, strings.HasPrefix(r.stderr, "error: "), "%s", r)
			assert.Contains(t, r.stderr, tt.stderr)

			r = h.run(append([]string{"--output", "json", "admin"}, tt.args...)...)
			assert.Equal(t, exitUsage, r.code, "%s", r)
			assert.Empty(t, r.stdout)
			var body jsonError
			require.NoError(t, json.Unmarshal([]byte(r.stderr), &body), "stderr is not JSON: %s", r.stderr)
			assert.Equal(t, string(tt.code), body.Error.Code)
			assert.Contains(t, body.Error.Message, tt.stderr)
		})
	}
}
