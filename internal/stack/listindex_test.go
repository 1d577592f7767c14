package stack_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/trace"
)

// TestListsFromTheIndexEqualTheWalk sends random spans (some sent again, changed) through POST
// /spans into a table with a stream, applies the stream to the list index, and asks every
// list query shape of the lists (the default order, single filters, duration and cost ranges,
// every sort key both ways)
// of the queries that read the index and of the time walk over every record sent (the walk a
// project from before the list index keeps): the same records in the same order, whole and
// walked page by page by cursor. The project's IndexedSince mark makes the index serve the
// default 30-day window.
func TestListsFromTheIndexEqualTheWalk(t *testing.T) {
	t.Parallel()
	srv := apitest.New(t, apitest.Options{})
	rng := rand.New(rand.NewPCG(11, 3))
	base := time.Now().UTC().Add(-2 * time.Hour)
	traces := make([]string, 14)
	for i := range traces {
		traces[i] = uuid.NewString()
	}
	var sent []map[string]any
	for round := range 3 {
		var batch []map[string]any
		for i := range 20 {
			if round > 0 && i%4 == 0 {
				s := sent[rng.IntN(len(sent))] // sent again: another duration and status
				s["duration_ms"] = float64(rng.IntN(5000))
				s["status"] = []string{"ok", "error"}[rng.IntN(2)]
				batch = append(batch, s)
				continue
			}
			tr := rng.IntN(len(traces))
			s := map[string]any{
				"id": uuid.NewString(), "trace_id": traces[tr], "session_id": fmt.Sprintf("conversation-%d", tr%4),
				"name":        []string{"retrieve", "answer", "plan"}[rng.IntN(3)],
				"kind":        []string{"llm", "tool", "generic"}[rng.IntN(3)],
				"started_at":  base.Add(time.Duration(rng.IntN(7200)) * time.Second).Format(time.RFC3339Nano),
				"duration_ms": float64(rng.IntN(5000)),
				"status":      []string{"ok", "ok", "error"}[rng.IntN(3)],
				"tags":        map[string]string{"env": []string{"prod", "dev"}[rng.IntN(2)]},
			}
			if s["kind"] == "llm" {
				s["attributes"] = map[string]any{"provider": "openai", "model": "gpt-4o-mini",
					"inputTokens": 1 + rng.IntN(900), "outputTokens": 1 + rng.IntN(300)}
			}
			sent = append(sent, s)
			batch = append(batch, s)
		}
		res := srv.Do(t, http.MethodPost, "/spans", srv.A.Key, batch)
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	}
	srv.DrainStream(t)

	ctx := context.Background()
	indexed, err := srv.Env.TraceQueries()
	require.NoError(t, err)
	blobs, err := srv.Env.Blobs()
	require.NoError(t, err)
	project := srv.A.ProjectID
	every := everyRecord{Reader: srv.Env.Traces(), ids: map[string][]string{trace.IndexTraces: traces}}
	for _, s := range sent {
		every.ids[trace.IndexSpans] = append(every.ids[trace.IndexSpans], s["id"].(string))
	}
	ts, err := srv.Env.Traces().Traces(ctx, project, traces)
	require.NoError(t, err)
	for _, tr := range ts {
		if tr.SessionID != nil && !slices.Contains(every.ids[trace.IndexSessions], *tr.SessionID) {
			every.ids[trace.IndexSessions] = append(every.ids[trace.IndexSessions], *tr.SessionID)
		}
	}
	walk := trace.NewQueries(every, blobs)

	yes := true
	// One of each plan shape: the time order, a value's range (has_error, names, a tag), the
	// values of a list merged by time, a window, and sort keys of each type both ways.
	commons := func(sorts ...string) []trace.Common {
		cs := []trace.Common{{}, {HasError: &yes}, {Names: []string{"plan", "retrieve"}},
			{Tags: map[string]string{"env": "prod"}}, {CreatedAfter: new(time.Now().Add(-time.Hour))},
			// a range alone reads its bands; with another filter, the range is decided per day
			{DurationMin: new(1000.0)}, {DurationMin: new(100.0), DurationMax: new(2000.0), Ascending: true},
			{CostMin: new(0.00005)}, {CostMax: new(0.00005), HasError: &yes}}
		for i, by := range sorts {
			cs = append(cs, trace.Common{SortBy: by, Ascending: i%2 == 1})
		}
		return cs
	}
	root := ""
	spanQueries := []trace.SpanQuery{{Kind: "llm"}, {ParentSpanID: &root}, {Kind: "tool", Common: trace.Common{SortBy: "cost"}}}
	for _, c := range commons("cost", "duration_ms", "name", "started_at") {
		spanQueries = append(spanQueries, trace.SpanQuery{Common: c})
	}
	for _, q := range spanQueries {
		t.Run(fmt.Sprintf("spans %+v", q), func(t *testing.T) {
			compareLists(t, func(c trace.Common, qs *trace.Queries) ([]string, trace.QueryInfo, error) {
				q.Common.Limit, q.Common.Offset, q.Common.Cursor = c.Limit, c.Offset, c.Cursor
				sums, info, err := qs.SpanSummaries(ctx, project, q)
				return ids(sums, func(s trace.Summary) string { return s.SpanID }), info, err
			}, indexed, walk)
		})
	}
	traceQueries := []trace.TraceQuery{{Status: "error"}}
	for _, c := range commons("cost", "span_count", "started_at") {
		traceQueries = append(traceQueries, trace.TraceQuery{Common: c})
	}
	for _, q := range traceQueries {
		t.Run(fmt.Sprintf("traces %+v", q), func(t *testing.T) {
			compareLists(t, func(c trace.Common, qs *trace.Queries) ([]string, trace.QueryInfo, error) {
				q.Common.Limit, q.Common.Offset, q.Common.Cursor = c.Limit, c.Offset, c.Cursor
				ts, info, err := qs.Traces(ctx, project, q)
				return ids(ts, func(t trace.Trace) string { return t.ID }), info, err
			}, indexed, walk)
		})
	}
	for _, c := range commons("trace_count", "cost") {
		t.Run(fmt.Sprintf("sessions %+v", c), func(t *testing.T) {
			compareLists(t, func(p trace.Common, qs *trace.Queries) ([]string, trace.QueryInfo, error) {
				c.Limit, c.Offset, c.Cursor = p.Limit, p.Offset, p.Cursor
				ss, info, err := qs.Sessions(ctx, project, trace.SessionQuery{Common: c})
				return ids(ss, func(s trace.Session) string { return s.ID }), info, err
			}, indexed, walk)
		})
	}
}

// compareLists asks list of both queries whole, then of the indexed one page by page by cursor
// and at an offset: the same ids in the same order.
func compareLists(t *testing.T, list func(trace.Common, *trace.Queries) ([]string, trace.QueryInfo, error), indexed, walk *trace.Queries) {
	t.Helper()
	want, _, err := list(trace.Common{Limit: 1000}, walk)
	require.NoError(t, err)
	got, info, err := list(trace.Common{Limit: 1000}, indexed)
	require.NoError(t, err)
	require.Equal(t, want, got)
	assert.False(t, info.Truncated)
	assert.Empty(t, info.Next, "the list has ended")

	paged := []string{}
	c := trace.Common{Limit: 9}
	for range 100 {
		page, info, err := list(c, indexed)
		require.NoError(t, err)
		paged = append(paged, page...)
		if info.Next == "" {
			break
		}
		assert.False(t, strings.HasPrefix(info.Next, "o"), "a cursor of the index, not an offset")
		c.Cursor = info.Next
	}
	assert.Equal(t, want, paged, "a walk by cursor")
	if len(want) > 3 {
		page, _, err := list(trace.Common{Limit: 2, Offset: 3}, indexed)
		require.NoError(t, err)
		assert.Equal(t, want[3:min(5, len(want))], page, "a page at an offset")
	}
}

func ids[T any](items []T, id func(T) string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, id(it))
	}
	return out
}

// everyRecord walks time indexes that hold every record of ids, as the time indexes of a
// project from before the list index do: the records read by id, newest first.
type everyRecord struct {
	trace.Reader
	ids map[string][]string // trace.IndexSpans, IndexTraces, IndexSessions -> ids
}

func (e everyRecord) WalkIndex(ctx context.Context, projectID, kind string, r trace.TimeRange, visit func([]string) (bool, error)) error {
	type record struct {
		id string
		at time.Time
	}
	var recs []record
	switch kind {
	case trace.IndexSpans:
		sums, err := e.Summaries(ctx, projectID, e.ids[kind])
		if err != nil {
			return err
		}
		for id, s := range sums {
			recs = append(recs, record{id, s.CreatedAt})
		}
	case trace.IndexTraces:
		ts, err := e.Traces(ctx, projectID, e.ids[kind])
		if err != nil {
			return err
		}
		for _, t := range ts {
			recs = append(recs, record{t.ID, t.CreatedAt})
		}
	case trace.IndexSessions:
		ss, err := e.Sessions(ctx, projectID, e.ids[kind])
		if err != nil {
			return err
		}
		for _, s := range ss {
			recs = append(recs, record{s.ID, s.CreatedAt})
		}
	}
	to := cmp.Or(r.To, time.Now())
	from := cmp.Or(r.From, to.AddDate(0, 0, -r.MaxDays))
	recs = slices.DeleteFunc(recs, func(rec record) bool { return rec.at.Before(from) || !rec.at.Before(to) })
	slices.SortFunc(recs, func(a, b record) int { return cmp.Or(b.at.Compare(a.at), cmp.Compare(b.id, a.id)) })
	var out []string
	for _, rec := range recs {
		out = append(out, rec.id)
	}
	_, err := visit(out)
	return err
}
