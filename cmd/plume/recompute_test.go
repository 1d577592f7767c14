package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
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
// service the tracing function uses, applies the table's stream to the aggregates, and ages
// what it wrote by two days (aged): a fix writes only what has not changed for 25 hours.
func (h *harness) ingest(project, traceID, sessionID string) {
	h.t.Helper()
	h.ingestAt(project, traceID, sessionID, aged)
	h.age(tracePK(project, traceID), "TRACE")
	if sessionID != "" {
		h.age(sessionPK(project, sessionID), "SESSION")
	}
}

// aged is two days ago.
var aged = time.Now().UTC().Add(-48 * time.Hour)

func tracePK(project, traceID string) string     { return "P#" + project + "#T#" + traceID }
func sessionPK(project, sessionID string) string { return "P#" + project + "#SE#" + sessionID }

// ingestAt is ingest of a span written at at, not aged.
func (h *harness) ingestAt(project, traceID, sessionID string, at time.Time) {
	h.t.Helper()
	blobs, _, _ := blobtest.New(h.t)
	end, ms, cost := spanStart.Add(spanLength), float64(spanLength.Milliseconds()), 0.5
	sp := trace.Span{
		ID: uuid.NewString(), TraceID: traceID, Name: "root", Kind: trace.KindGeneric,
		StartedAt: spanStart, EndedAt: &end, DurationMS: &ms, Cost: &cost, Attributes: json.RawMessage(`{}`),
		CreatedAt: at, UpdatedAt: at,
	}
	if sessionID != "" {
		sp.SessionID = &sessionID
	}
	_, err := trace.NewService(h.traceStore(), blobs, nil).Ingest(context.Background(), project, []trace.Span{sp})
	require.NoError(h.t, err)
	h.applyAggregates()
}

// applyAggregates applies the table's stream, from where it left off, to the trace and session
// aggregates, as RollupFunction does a second or so after each write.
func (h *harness) applyAggregates() {
	h.t.Helper()
	if h.stream == nil {
		o := h.client.Options()
		h.stream = &ddb.StreamPoller{DB: h.client, TableName: h.table,
			Streams: ddb.NewStreamsClient(aws.Config{Region: o.Region, Credentials: o.Credentials}, ddbtest.Endpoint(h.t)),
			Apply:   ddb.NewAggregateStore(h.traceStore()).Apply}
	}
	require.NoError(h.t, h.stream.Drain(context.Background()), "apply the stream to the aggregates")
}

// update applies a DynamoDB update expression to the aggregate item pk/sk.
func (h *harness) update(pk, sk, expr string, values map[string]types.AttributeValue) {
	h.t.Helper()
	_, err := h.client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: &h.table, Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}},
		UpdateExpression: aws.String(expr), ExpressionAttributeValues: values,
	})
	require.NoError(h.t, err)
}

// age makes an aggregate item look last changed two days ago, with no record of the stream
// applied since (its marks gone: the stream keeps records 24 hours).
func (h *harness) age(pk, sk string) {
	h.t.Helper()
	h.update(pk, sk, "SET ua = :at REMOVE mk", map[string]types.AttributeValue{":at": &types.AttributeValueMemberN{Value: fmt.Sprint(aged.UnixMicro())}})
}

var nine = map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}, ":nine": &types.AttributeValueMemberN{Value: "9"}}

// drift makes traceID's stored aggregates count a span that was never stored (as data written
// before the aggregates came from the change stream could): one more span and 9 more cost. Its
// session, if any, takes the 9 from the stream, as it takes any change of its traces; both are
// then aged.
func (h *harness) drift(project, traceID string) {
	h.t.Helper()
	h.update(tracePK(project, traceID), "TRACE", "ADD sc :one, cost :nine", nine)
	h.age(tracePK(project, traceID), "TRACE")
	h.applyAggregates()
	traces, err := h.traceStore().Traces(context.Background(), project, []string{traceID})
	require.NoError(h.t, err)
	if s := traces[0].SessionID; s != nil {
		h.age(sessionPK(project, *s), "SESSION")
	}
}

// driftSession makes a session's stored cost 9 more than its traces', two days ago.
func (h *harness) driftSession(project, sessionID string) {
	h.t.Helper()
	h.update(sessionPK(project, sessionID), "SESSION", "ADD cost :nine", map[string]types.AttributeValue{":nine": nine[":nine"]})
	h.age(sessionPK(project, sessionID), "SESSION")
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
	Kind        string    `json:"kind"`
	ID          string    `json:"id"`
	Exact       bool      `json:"exact"`
	Fixed       bool      `json:"fixed"`
	LastChange  time.Time `json:"last_change"`
	Stored      map[string]any
	Recomputed  map[string]any
	Differences []struct {
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
	assert.Contains(t, r.stdout, "trace "+traceID+": 2 of 5 fields differ; last changed ")
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
	assert.WithinDuration(t, aged, got[0].LastChange, time.Second)
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
	assert.Contains(t, r.stdout, "trace "+traceID+": exact; last changed ")
	assert.Equal(t, []string{"1", "1", "no"}, fields(t, r.stdout)["span_count"])
	got = h.recomputeJSON("recompute-trace", "--project-id", project, "--trace-id", traceID)
	require.Len(t, got, 1)
	assert.True(t, got[0].Exact)
	assert.False(t, got[0].Fixed)
	assert.Empty(t, got[0].Differences)
	assert.NotNil(t, got[0].Differences, "an empty array, not null")
}

// TestRecomputeRefusesRecentChanges: a trace that changed within 25 hours may still have
// changes in the change stream, which would count them again after a fix: the fix is refused
// as unavailable, and a dry run says when the trace last changed.
func TestRecomputeRefusesRecentChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "recent"))
	traceID := uuid.NewString()
	h.ingestAt(project, traceID, "", time.Now().UTC())
	h.drift(project, traceID)

	got := h.recomputeJSON("recompute-trace", "--project-id", project, "--trace-id", traceID, "--dry-run")
	require.Len(t, got, 1)
	assert.False(t, got[0].Exact)
	assert.WithinDuration(t, time.Now(), got[0].LastChange, time.Hour, "its span was written now")

	r := h.run("admin", "recompute-trace", "--project-id", project, "--trace-id", traceID)
	assert.Equal(t, exitRemote, r.code, "%s", r)
	assert.Contains(t, r.stderr, "the change stream may still be adding that change")
	assert.False(t, h.recountTrace(project, traceID).Exact(), "nothing written")
}

func TestRecomputeSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "sessions"))
	traceID, sessionID := uuid.NewString(), uuid.NewString()
	h.ingest(project, traceID, sessionID)
	h.drift(project, traceID)
	require.True(t, h.recountSession(project, sessionID).Exact(), "the session agrees with its trace as stored")

	// Fixing the trace fixes the session through the change stream, as any change of a trace.
	r := h.run("admin", "recompute-trace", "--project-id", project, "--trace-id", traceID)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Contains(t, r.stderr, "take the fix from the change stream")
	h.applyAggregates()
	fixed := h.recountSession(project, sessionID)
	assert.True(t, fixed.Exact(), "%+v", fixed)
	assert.InDelta(t, 0.5, fixed.Stored.Cost, 1e-12)

	// A session that drifted on its own, its trace unchanged for two days.
	other, otherSession := uuid.NewString(), uuid.NewString()
	h.ingest(project, other, otherSession)
	h.driftSession(project, otherSession)
	drifted := h.recountSession(project, otherSession)
	require.False(t, drifted.Exact(), "%+v", drifted)
	r = h.run("admin", "recompute-session", "--project-id", project, "--session-id", strings.ToUpper(otherSession), "--dry-run", "--exit-code")
	require.Equal(t, exitDiffers, r.code, "%s", r)
	assert.Contains(t, r.stdout, "session "+otherSession+": 1 of 5 fields differ", "ids are normalised")
	rows := fields(t, r.stdout)
	assert.Equal(t, []string{"1", "1", "no"}, rows["trace_count"])
	assert.Equal(t, []string{"9.5", "0.5", "yes"}, rows["cost"])
	assert.Equal(t, drifted, h.recountSession(project, otherSession), "a dry run changes nothing")

	got := h.recomputeJSON("recompute-session", "--project-id", project, otherSession)
	require.Len(t, got, 1)
	assert.Equal(t, "session", got[0].Kind)
	assert.True(t, got[0].Fixed)
	assert.Equal(t, 1.0, got[0].Recomputed["trace_count"])
	assert.NotContains(t, got[0].Recomputed, "span_count")
	require.Len(t, got[0].Differences, 1)
	assert.Equal(t, "cost", got[0].Differences[0].Field)
	fixed = h.recountSession(project, otherSession)
	assert.True(t, fixed.Exact(), "%+v", fixed)
	assert.InDelta(t, 0.5, fixed.Stored.Cost, 1e-12)

	r = h.run("admin", "recompute-session", "--project-id", project, "--session-id", otherSession)
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Equal(t, "session "+otherSession+": already exact\n", r.stdout)
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
