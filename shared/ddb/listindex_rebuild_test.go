package ddb

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/listindex"
	"github.com/plumehq/plume/shared/trace"
)

// TestReindexRebuildsTheDaysBeforeTheIndex: a project stored for three days before the list
// index existed (its records in the time index only), then indexed by the stream's consumer
// from the fourth, with changes of the older records (late spans of old traces, a span sent
// again, new traces of an old session). Its index then holds only those changes of the older
// records. Reindex refuses a day with a change of the last 25 hours and leaves it as it was;
// a dry run changes nothing; a change applied between a day's read and its replacement leaves
// the day as the consumer made it (busy) and no run behind; a reindex once every record is 25
// hours still makes the index
// hold exactly the keys of what is stored (read by a Scan of the table), moves both marks back
// to the first day, and stays exact under changes applied after it and when run again.
func TestReindexRebuildsTheDaysBeforeTheIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, _, table := ddbtest.NewStreamTable(t)
	blobs, _, _ := blobtest.New(t)
	store := NewTraceStore(NewTable(client, table))
	tap := newStreamTap(t, client, table, nil)
	var clock atomic.Pointer[time.Time]
	setClock := func(at time.Time) { clock.Store(&at) }
	now := func() time.Time { return *clock.Load() }
	setClock(lxDay0)
	svc := trace.NewService(store, blobs, nil, trace.WithClock(now))
	index := NewListIndexStore(NewTable(client, table), blobs, ListIndexConfig{Now: now, MaxRuns: 4})
	projectID := uuid.NewString()

	// A project from before the index: its time index has an entry before the index's mark.
	before := lxDay0.AddDate(0, 0, -1)
	seedTimeIndex(t, client, table, store, projectID, before)
	putIndexMarks(t, client, table, projectID, map[string]time.Time{attrLXSince: lxDay0.AddDate(0, 0, 30)})

	ingest := func(at time.Time, spans ...trace.Span) {
		t.Helper()
		setClock(at)
		for i := range spans {
			if spans[i].CreatedAt.IsZero() {
				spans[i].CreatedAt = at
			}
			spans[i].UpdatedAt = at
		}
		_, err := svc.Ingest(ctx, projectID, spans)
		require.NoError(t, err)
		tap.drain(t)
	}
	span := func(traceID, session string, at time.Time, i int) trace.Span {
		ms := float64(10 + 37*i)
		end := at.Add(time.Duration(ms) * time.Millisecond)
		sp := trace.Span{ID: uuid.NewString(), TraceID: traceID, Name: "step", Kind: trace.KindGeneric,
			StartedAt: at, EndedAt: &end, DurationMS: &ms, Attributes: json.RawMessage(`{}`),
			Tags: trace.Tags{{Key: "env", Value: []string{"prod", "dev"}[i%2]}}}
		if session != "" {
			sp.SessionID = &session
		}
		if i%2 == 1 {
			sp.Kind, sp.Cost = trace.KindLLM, ptrTo(float64(i)/100)
		}
		if i%5 == 4 {
			sp.Status, sp.ErrorCode = ptrTo("error"), ptrTo("timeout")
		}
		return sp
	}

	// Three days before the index: traces of three spans, two of them in sessions.
	var oldTraces []string
	var oldSpans []trace.Span
	for d := range 3 {
		for i := range 4 {
			at := lxDay0.AddDate(0, 0, d).Add(time.Duration(i) * time.Hour)
			traceID, session := uuid.NewString(), ""
			if i < 2 {
				session = fmt.Sprintf("conversation-%d", d)
			}
			spans := []trace.Span{span(traceID, session, at, i), span(traceID, session, at, i+1), span(traceID, session, at, i+2)}
			ingest(at, spans...)
			oldTraces = append(oldTraces, traceID)
			oldSpans = append(oldSpans, spans...)
		}
	}
	applied := len(tap.records) // none of them reach the index

	// The index from the fourth day: changes of older records, and new ones.
	day3 := lxDay0.AddDate(0, 0, 3)
	apply := func() {
		t.Helper()
		for b := range slices.Chunk(tap.records[applied:], 7) {
			require.NoError(t, index.Apply(ctx, tap.shard, b))
		}
		applied = len(tap.records)
	}
	late := span(oldTraces[0], "conversation-0", day3, 6)
	late.CreatedAt = day3
	ingest(day3, late, span(oldTraces[5], "conversation-1", day3, 7))
	again := oldSpans[4]
	again.DurationMS, again.Cost = ptrTo(5000.0), ptrTo(0.9)
	ingest(day3.Add(time.Hour), again)
	ingest(day3.Add(2*time.Hour), span(uuid.NewString(), "conversation-2", day3.Add(2*time.Hour), 1))
	ingest(day3.Add(3*time.Hour), span(uuid.NewString(), "", day3.Add(3*time.Hour), 2), span(uuid.NewString(), "", day3.Add(3*time.Hour), 3))
	apply()

	since, ok, err := index.IndexedSince(ctx, projectID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, day3, since, "indexed since the first record the consumer saw created")
	stored := storedState(t, client, table, projectID)
	require.NotEmpty(t, diffState(stored, index.state(t, projectID)), "the older records are not in the index yet")

	// A day with a change of the last 25 hours is not rebuilt, and nothing of it is left.
	setClock(day3.Add(20 * time.Hour))
	beforeReindex := index.state(t, projectID)
	r, err := index.Reindex(ctx, store, projectID, false, nil)
	require.NoError(t, err)
	assert.False(t, r.Done)
	require.NotEmpty(t, r.Days)
	assert.True(t, r.Days[0].Busy, "the newest day is busy")
	after := index.state(t, projectID)
	for _, d := range r.Days {
		if d.Busy {
			assert.Equal(t, dayKeys(beforeReindex[d.Kind], d.Day), dayKeys(after[d.Kind], d.Day), "%s left as it was", d)
		}
	}
	assert.Equal(t, r.SinceBefore, r.SinceAfter, "marks not moved")
	assertNoStrayRuns(t, client, table, blobs, index, projectID)

	// A dry run counts and changes nothing.
	setClock(day3.AddDate(0, 0, 2))
	beforeReindex = index.state(t, projectID)
	r, err = index.Reindex(ctx, store, projectID, true, nil)
	require.NoError(t, err)
	assert.True(t, r.Done)
	records := 0
	for _, d := range r.Days {
		records += d.Records
	}
	total := 0
	for _, kind := range lxKinds {
		total += countCreated(stored[kind])
	}
	assert.Equal(t, total, records, "every stored record found")
	assert.Equal(t, beforeReindex, index.state(t, projectID), "a dry run changes nothing")

	// A span of the newest day sent again, longer, while the day is rebuilt, applied before the
	// replacement: the partition's version moved, so it is not replaced (busy), and the runs
	// written for it are gone.
	var raced lxState
	race := &raceAPI{API: client, manifest: listIndexPK(projectID, listindex.Spans), before: func() {
		late.UpdatedAt, late.DurationMS = now(), ptrTo(999.0)
		ingest(now(), late)
		apply()
		raced = index.state(t, projectID)
	}}
	racing := NewListIndexStore(NewTable(race, table), blobs, ListIndexConfig{Now: now, MaxRuns: 4})
	r, err = racing.Reindex(ctx, store, projectID, false, nil)
	require.NoError(t, err)
	require.NotNil(t, raced, "raced")
	assert.False(t, r.Done)
	assert.True(t, r.Days[0].Busy, "the partition changed while rebuilt")
	assert.Equal(t, dayKeys(raced[listindex.Spans], day3), dayKeys(index.state(t, projectID)[listindex.Spans], day3), "left as the consumer made it")
	assert.Equal(t, r.SinceBefore, r.SinceAfter, "the mark's own day was not rebuilt")
	assertNoStrayRuns(t, client, table, blobs, index, projectID)

	// Every record quiet for 25 hours: every day rebuilt, the marks moved back.
	setClock(day3.AddDate(0, 0, 4))
	stored = storedState(t, client, table, projectID)
	var reported []DayRebuild
	r, err = index.Reindex(ctx, store, projectID, false, func(d DayRebuild) { reported = append(reported, d) })
	require.NoError(t, err)
	assert.True(t, r.Done)
	assert.Equal(t, r.Days, reported)
	assert.Equal(t, before.Truncate(24*time.Hour), r.From)
	assert.Equal(t, day3.Truncate(24*time.Hour), r.Through, "through the day of the later mark")
	assert.Equal(t, before.Truncate(24*time.Hour), r.SinceAfter)
	assert.Equal(t, before.Truncate(24*time.Hour), r.BandsAfter)
	assertExact(t, stored, index.state(t, projectID), "after the reindex")
	assertNoStrayRuns(t, client, table, blobs, index, projectID)
	since, _, err = index.IndexedSince(ctx, projectID)
	require.NoError(t, err)
	assert.Equal(t, before.Truncate(24*time.Hour), since)
	bands, _, err := index.RangeBandsSince(ctx, projectID)
	require.NoError(t, err)
	assert.Equal(t, before.Truncate(24*time.Hour), bands)
	timed, err := NewTraceStore(NewTable(client, table)).lookUpTimeIndex(ctx, projectID, trace.IndexSpans)
	require.NoError(t, err)
	assert.False(t, timed, "the project's time index is not needed any more")

	// Changes after the reindex add to what it read.
	later := day3.AddDate(0, 0, 4).Add(time.Hour)
	ingest(later, span(oldTraces[1], "conversation-0", later, 3))
	apply()
	assertExact(t, storedState(t, client, table, projectID), index.state(t, projectID), "a change after the reindex")

	// And once more, later: the same.
	setClock(later.AddDate(0, 0, 2))
	r, err = index.Reindex(ctx, store, projectID, false, nil)
	require.NoError(t, err)
	assert.True(t, r.Done)
	assertExact(t, storedState(t, client, table, projectID), index.state(t, projectID), "a second reindex")
	assertNoStrayRuns(t, client, table, blobs, index, projectID)
}

// storedState is the index of what the table stores of the project: every span summary,
// trace and session found by a Scan.
func storedState(t *testing.T, client *dynamodb.Client, table, projectID string) lxState {
	t.Helper()
	out := lxState{listindex.Spans: {}, listindex.Traces: {}, listindex.Sessions: {}}
	p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: &table, ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("begins_with(#pk, :p)"),
		ExpressionAttributeNames:  map[string]string{"#pk": infra.AttrPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "P#" + projectID + "#"}}})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Items {
			if rec, ok := lxRecordOf(it); ok {
				addKeys(out[rec.part.kind], rec.keys)
			}
		}
	}
	return out
}

// dayKeys are the keys of a state's kind created on the day of day.
func dayKeys(keys map[string]int32, day time.Time) map[string]int32 {
	out := map[string]int32{}
	for k, n := range keys {
		if parsed, err := listindex.Parse([]byte(k)); err == nil && listIndexSK(parsed.Created) == listIndexSK(day) {
			out[k] = n
		}
	}
	return out
}

// countCreated is how many records a state's keys are of: their created_at keys.
func countCreated(keys map[string]int32) int {
	n := 0
	for k := range keys {
		if len(k) > 0 && listindex.Dim(k[0]) == listindex.DimCreated {
			n++
		}
	}
	return n
}

// assertNoStrayRuns checks that every run of the project's partitions, in the table or the
// bucket, is one a manifest lists or has replaced: a reindex that did not replace a partition
// left none of its runs. Runs a compaction replaced, expiring within replacedGrace, are left
// out.
func assertNoStrayRuns(t *testing.T, client *dynamodb.Client, table string, blobs *blob.Store, index *ListIndexStore, projectID string) {
	t.Helper()
	ctx := context.Background()
	known := map[string]bool{}
	for _, kind := range lxKinds {
		parts, err := index.Partitions(ctx, projectID, kind, lxDay0.AddDate(0, 0, -30), lxDay0.AddDate(0, 0, 30))
		require.NoError(t, err)
		for _, p := range parts {
			m, err := index.manifest(ctx, lxPart{projectID: projectID, kind: kind, day: listIndexSK(p.Day)})
			require.NoError(t, err)
			for id := range m.runs {
				known[id] = true
			}
			for id := range m.replaced {
				known[id] = true
			}
		}
	}
	objects, err := blobs.Sizes(ctx, listindex.ObjectPrefix(projectID))
	require.NoError(t, err)
	for k := range objects {
		id := strings.TrimSuffix(path.Base(k), ".run")
		assert.True(t, known[id], "object %s is a run no manifest knows", k)
	}
	out, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: &table, ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("begins_with(#pk, :p) AND attribute_exists(#z) AND (attribute_not_exists(#ttl) OR #ttl > :now)"),
		ExpressionAttributeNames:  map[string]string{"#pk": infra.AttrPK, "#z": attrLXRunBytes, "#ttl": infra.AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "P#" + projectID + "#"}, ":now": num(index.cfg.Now().Add(replacedGrace).Unix())}})
	require.NoError(t, err)
	for _, it := range out.Items {
		assert.True(t, known[strAttr(it, infra.AttrSK)], "run item %s is one no manifest lists", strAttr(it, infra.AttrSK))
	}
}

// raceAPI calls before once, ahead of the first update of the manifests of partition
// manifest (a reindex's replacement).
type raceAPI struct {
	API
	manifest string
	before   func()
	done     bool
}

func (a *raceAPI) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if !a.done && strAttr(in.Key, infra.AttrPK) == a.manifest {
		a.done = true
		a.before()
	}
	return a.API.UpdateItem(ctx, in, o...)
}
