package ddb

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/trace"
)

// TestTimeIndexOnlyForProjectsFromBeforeTheListIndex: the records of a project whose time
// index holds nothing before its IndexedSince (a new project) get no time-index entry, from
// the stream's consumer or from POST /traces and /sessions: no GSI2 keys, no days. A project
// with entries from before the list index keeps getting them for every record, so that the
// walk its lists fall back to finds them all.
func TestTimeIndexOnlyForProjectsFromBeforeTheListIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newAggWorld(t)
	rng := rand.New(rand.NewPCG(5, 8))
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	window := trace.TimeRange{From: day.AddDate(0, 0, -3), To: day.AddDate(0, 0, 2)}

	// apply writes spans of a project as the request path does, then its records through the
	// consumer, and sets a trace and a session as POST /traces and /sessions do.
	apply := func(projectID string) (traces, sessions []string) {
		w.project, w.spans = projectID, map[string]trace.Summary{}
		first, _ := randomSpans(rng, 6)
		w.put(first...)
		w.drain(func(rs []StreamRecord) { w.applyUntilDone("shard-1", rs) })
		w.check()
		for _, s := range first {
			traces = append(traces, s.TraceID)
			if s.SessionID != "" {
				sessions = append(sessions, s.SessionID)
			}
		}
		put := trace.TracePut{TraceID: uuid.NewString(), StartedAt: day.Add(time.Hour), At: day.Add(time.Hour)}
		require.NoError(t, w.store.PutTrace(ctx, projectID, put))
		se := trace.SessionDelta{SessionID: uuid.NewString(), Name: "set", At: day.Add(time.Hour)}
		require.NoError(t, w.store.ApplySession(ctx, projectID, se))
		return append(traces, put.TraceID), append(sessions, se.SessionID)
	}
	walk := func(projectID, kind string) []string {
		var ids []string
		require.NoError(t, w.store.WalkIndex(ctx, projectID, kind, window, func(page []string) (bool, error) {
			ids = append(ids, page...)
			return true, nil
		}))
		return ids
	}

	fresh := uuid.NewString()
	apply(fresh)
	out, err := w.client.Scan(ctx, &dynamodb.ScanInput{TableName: &w.table,
		FilterExpression:          aws.String("begins_with(#pk, :p) AND attribute_exists(#g)"),
		ExpressionAttributeNames:  map[string]string{"#pk": infra.AttrPK, "#g": infra.AttrGSI2PK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "P#" + fresh + "#"}}})
	require.NoError(t, err)
	assert.Zero(t, out.Count, "no item of a new project is in the time index")
	for _, kind := range []string{trace.IndexSpans, trace.IndexTraces, trace.IndexSessions} {
		days, err := w.store.days.days(ctx, fresh, kind, window.From, window.To)
		require.NoError(t, err)
		assert.Empty(t, days, "no day of %s", kind)
	}

	// A project with records from before the list index: an entry of each time index two days
	// before the index's first record (for spans a trace's member item).
	old := uuid.NewString()
	seedTimeIndex(t, w.client, w.table, w.store, old, day.AddDate(0, 0, -2))
	putIndexMarks(t, w.client, w.table, old, map[string]time.Time{attrLXSince: day})
	traces, sessions := apply(old)
	assert.Subset(t, walk(old, trace.IndexTraces), traces, "every trace of the older project in its time index")
	assert.Subset(t, walk(old, trace.IndexSessions), sessions)
	var spans []string
	for id := range w.spans {
		spans = append(spans, id)
	}
	assert.Subset(t, walk(old, trace.IndexSpans), spans)
}

// tableWalk walks time indexes that hold every span summary, trace and session of the table,
// as the time indexes of a project from before the list index do: a Scan of the table, the
// records newest first. It is what the lists' answers are compared with.
type tableWalk struct {
	*TraceStore
	client *dynamodb.Client
	table  string
}

func (w tableWalk) WalkIndex(ctx context.Context, projectID, kind string, r trace.TimeRange, visit func([]string) (bool, error)) error {
	type record struct {
		id string
		at time.Time
	}
	var recs []record
	p := dynamodb.NewScanPaginator(w.client, &dynamodb.ScanInput{TableName: &w.table,
		FilterExpression:          aws.String("begins_with(#pk, :p)"),
		ExpressionAttributeNames:  map[string]string{"#pk": infra.AttrPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "P#" + projectID + "#"}}})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, it := range out.Items {
			pk, sk := strAttr(it, infra.AttrPK), strAttr(it, infra.AttrSK)
			rest := strings.TrimPrefix(pk, "P#"+projectID+"#")
			switch {
			case kind == trace.IndexSpans && sk == skSpan && strings.HasPrefix(rest, "S#"):
				var s summaryItem
				if err := attributevalue.UnmarshalMap(it, &s); err != nil {
					return err
				}
				sum := s.toSummary(projectID)
				recs = append(recs, record{sum.SpanID, sum.CreatedAt})
			case kind == trace.IndexTraces && sk == skTrace && strings.HasPrefix(rest, "T#"):
				t := toTrace(projectID, strings.TrimPrefix(rest, "T#"), it)
				recs = append(recs, record{t.ID, t.CreatedAt})
			case kind == trace.IndexSessions && sk == skSession && strings.HasPrefix(rest, "SE#"):
				s := toSession(projectID, strings.TrimPrefix(rest, "SE#"), it)
				recs = append(recs, record{s.ID, s.CreatedAt})
			}
		}
	}
	to := cmp.Or(r.To, time.Now())
	from := cmp.Or(r.From, to.AddDate(0, 0, -r.MaxDays))
	recs = slices.DeleteFunc(recs, func(rec record) bool { return rec.at.Before(from) || !rec.at.Before(to) })
	slices.SortFunc(recs, func(a, b record) int { return cmp.Or(b.at.Compare(a.at), cmp.Compare(b.id, a.id)) })
	ids := make([]string, len(recs))
	for i, rec := range recs {
		ids[i] = rec.id
	}
	_, err := visit(ids)
	return err
}

// seedTimeIndex gives each time index of projectID an entry at before, of records that are gone
// (for spans a trace's member item), and notes the day: what a project that stored records
// before the list index leaves.
func seedTimeIndex(t *testing.T, client *dynamodb.Client, table string, store *TraceStore, projectID string, before time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, kind := range []string{trace.IndexSpans, trace.IndexTraces, trace.IndexSessions} {
		id := uuid.NewString()
		require.NoError(t, store.days.note(ctx, projectID, kind, before))
		item := map[string]types.AttributeValue{
			infra.AttrPK:     &types.AttributeValueMemberS{Value: "P#" + projectID + "#OLD#" + id},
			infra.AttrSK:     &types.AttributeValueMemberS{Value: "OLD"},
			infra.AttrGSI2PK: &types.AttributeValueMemberS{Value: timeIndexPK(projectID, kind, before, shardOf(id))},
			infra.AttrGSI2SK: &types.AttributeValueMemberS{Value: timeIndexSK(before, id)},
		}
		if kind == trace.IndexSpans {
			span := uuid.New()
			var err error
			item, err = marshal(memberItem{PK: tracePK(projectID, id), SK: memberSK(before, "b"),
				GSI2PK: timeIndexPK(projectID, kind, before, shardOf(id)), GSI2SK: timeIndexSK(before, id+"#b"), Spans: [][]byte{span[:]}})
			require.NoError(t, err)
		}
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item})
		require.NoError(t, err)
	}
}

// putIndexMarks writes the project's IndexedSince item with marks (attribute: time), as a
// consumer of an earlier version left it.
func putIndexMarks(t *testing.T, client *dynamodb.Client, table, projectID string, marks map[string]time.Time) {
	t.Helper()
	item := map[string]types.AttributeValue{
		infra.AttrPK: &types.AttributeValueMemberS{Value: indexedSincePK(projectID)},
		infra.AttrSK: &types.AttributeValueMemberS{Value: skIndexedSince},
	}
	for name, at := range marks {
		item[name] = num(at.UnixMicro())
	}
	_, err := client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &table, Item: item})
	require.NoError(t, err)
}
