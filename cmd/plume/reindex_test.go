package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

// TestReindex runs plume admin reindex on a project whose records the stream's consumer
// indexed two days ago: a dry run counts them and changes nothing; a run rebuilds its day and
// moves the index's mark to the day's start; a late span of one of its traces, written now,
// makes the day's traces and sessions busy: exit 4 with when to run again.
//
// The command reaches S3 through the AWS SDK's configuration from the process's environment,
// so this test sets it (and cannot run in parallel).
func TestReindex(t *testing.T) {
	h := newHarness(t)
	blobs, _, endpoint := blobtest.New(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", blobtest.AccessKeyFor(t))
	t.Setenv("AWS_SECRET_ACCESS_KEY", blobtest.SecretKey)
	t.Setenv("AWS_REGION", "us-east-1")
	h.env["AWS_ENDPOINT_URL_S3"], h.env["BUCKET_NAME"] = endpoint, blobs.Bucket()
	ctx := context.Background()
	index := ddb.NewListIndexStore(ddb.NewTable(h.client, h.table), blobs, ddb.ListIndexConfig{})
	agg := ddb.NewAggregateStore(h.traceStore())
	o := h.client.Options()
	stream := &ddb.StreamPoller{DB: h.client, TableName: h.table,
		Streams: ddb.NewStreamsClient(aws.Config{Region: o.Region, Credentials: o.Credentials}, ddbtest.Endpoint(t)),
		Apply: func(ctx context.Context, shard string, rs []ddb.StreamRecord) error {
			if err := agg.Apply(ctx, shard, rs); err != nil {
				return err
			}
			return index.Apply(ctx, shard, rs)
		}}
	project, traceA, traceB, session := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	ingest := func(at time.Time, spans ...trace.Span) {
		t.Helper()
		for i := range spans {
			end, ms := spanStart.Add(spanLength), float64(spanLength.Milliseconds())
			spans[i].ID, spans[i].Name, spans[i].Kind, spans[i].StartedAt, spans[i].EndedAt, spans[i].DurationMS =
				uuid.NewString(), "step", trace.KindGeneric, spanStart, &end, &ms
			spans[i].Attributes, spans[i].CreatedAt, spans[i].UpdatedAt = json.RawMessage(`{}`), at, at
		}
		_, err := trace.NewService(h.traceStore(), blobs, nil).Ingest(ctx, project, spans)
		require.NoError(t, err)
		require.NoError(t, stream.Drain(ctx))
	}
	ingest(aged, trace.Span{TraceID: traceA, SessionID: &session}, trace.Span{TraceID: traceA, SessionID: &session},
		trace.Span{TraceID: traceB, SessionID: &session})
	day := aged.Truncate(24 * time.Hour)

	var got struct {
		Done               bool
		IndexedSinceBefore time.Time `json:"indexed_since_before"`
		IndexedSinceAfter  time.Time `json:"indexed_since_after"`
		Partitions         []struct {
			Day           string
			Kind          string
			Records, Runs int
			Busy          bool
		}
		RetryAfter *time.Time `json:"retry_after"`
	}
	r := h.run("admin", "reindex", "--project-id", project, "--dry-run")
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Contains(t, r.stdout, day.Format(time.DateOnly)+" spans    3 records")
	assert.Contains(t, r.stdout, day.Format(time.DateOnly)+" traces   2 records")
	assert.Contains(t, r.stdout, day.Format(time.DateOnly)+" sessions 1 records")
	assert.Contains(t, r.stderr, "Would rebuild 3 partitions of the 1 days")
	since, _, err := index.IndexedSince(ctx, project)
	require.NoError(t, err)
	assert.Equal(t, aged.UTC().Truncate(time.Microsecond), since, "a dry run moves no mark")

	r = h.run("admin", "reindex", "--project-id", project, "--output", "json")
	require.Equal(t, exitOK, r.code, "%s", r)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	assert.True(t, got.Done)
	assert.Equal(t, aged.UTC().Truncate(time.Microsecond), got.IndexedSinceBefore)
	assert.Equal(t, day, got.IndexedSinceAfter)
	require.Len(t, got.Partitions, 3)
	for _, p := range got.Partitions {
		assert.Equal(t, 1, p.Runs, "%s rebuilt", p.Kind)
	}
	since, _, err = index.IndexedSince(ctx, project)
	require.NoError(t, err)
	assert.Equal(t, day, since)

	// A late span of trace A, now: its trace changed; the day waits 25 hours.
	ingest(time.Now(), trace.Span{TraceID: traceA, SessionID: &session})
	r = h.run("admin", "reindex", "--project-id", project, "--output", "json")
	assert.Equal(t, exitRemote, r.code, "%s", r)
	assert.Contains(t, r.stderr, "run again after")
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	assert.False(t, got.Done)
	require.NotNil(t, got.RetryAfter)
	assert.WithinDuration(t, time.Now().Add(ddb.ReindexQuiet), *got.RetryAfter, time.Minute)
	busy := map[string]bool{}
	for _, p := range got.Partitions {
		busy[p.Kind] = p.Busy
	}
	assert.Equal(t, map[string]bool{"spans": false, "traces": true, "sessions": true}, busy, "its trace and session changed; its spans did not")
}
