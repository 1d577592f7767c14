package tracing_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wire "github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/internal/apitest"
)

// treeClients are clients of the whole API for its two projects.
func treeClients(t *testing.T, a *apitest.API) (ca, cb *client.Client) {
	t.Helper()
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		to     **client.Client
		tenant apitest.Tenant
	}{{&ca, a.A}, {&cb, a.B}} {
		var err error
		*c.to, err = client.New(client.WithBaseURL(srv.URL), client.WithAPIKey(c.tenant.Key), client.WithProject(c.tenant.ProjectID),
			client.WithRetries(0), client.WithEnv(func(string) string { return "" }))
		require.NoError(t, err)
	}
	return ca, cb
}

// treeSpan is a span of POST /spans, started at offset seconds after at.
func treeSpan(id, traceID, parent, name string, at time.Time, offset float64) map[string]any {
	start := float64(at.UnixMicro())/1e6 + offset
	s := map[string]any{"id": id, "trace_id": traceID, "name": name, "started_at": start, "ended_at": start + 1}
	if parent != "" {
		s["parent_span_id"] = parent
	}
	return s
}

// TestTraceTree: GET /traces/{trace_id}/tree through the Go client: the exact tree of a small
// trace, depth first with subtree totals, paged; another project reads nothing of it; bad
// paging is refused.
func TestTraceTree(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	ca, cb := treeClients(t, a)
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	traceID := uuid.NewString()
	root, first, second, leaf := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	failed := treeSpan(second, traceID, root, "second", at, 2)
	failed["status"], failed["error_code"], failed["cost"] = "error", "timeout", 0.25
	llmLeaf := treeSpan(leaf, traceID, first, "call", at, 1.5)
	llmLeaf["kind"], llmLeaf["cost"] = "llm", 0.5 // its own cost, over the model's price
	llmLeaf["attributes"] = map[string]any{"provider": "openai", "model": "gpt-4o", "inputTokens": 120, "outputTokens": 30}
	// Sent leaves first, as an SDK sends spans as they end.
	a.MustDo(t, "POST", "/spans", a.A.Key, []any{llmLeaf, failed, treeSpan(first, traceID, root, "first", at, 1), treeSpan(root, traceID, "", "root", at, 0)})

	tree, err := ca.TraceTree(ctx, traceID, 0, 0)
	require.NoError(t, err)
	assert.True(t, tree.Whole)
	assert.Equal(t, traceID, tree.Trace.ID)
	assert.Equal(t, 4, tree.SpanCount)
	assert.Nil(t, tree.NextOffset)
	assert.Equal(t, [2]int64{120, 30}, [2]int64{tree.InputTokens, tree.OutputTokens})
	type shape struct {
		name         string
		depth        int
		spans, errs  int
		cost         float64
		tokens       int64
		parentIsRoot bool
	}
	var got []shape
	for _, s := range tree.Spans {
		var c float64
		if s.Subtree.Cost != nil {
			c = *s.Subtree.Cost
		}
		got = append(got, shape{s.Name, s.Depth, s.Subtree.Spans, s.Subtree.Errors, c,
			s.Subtree.InputTokens + s.Subtree.OutputTokens, s.ParentSpanID != nil && *s.ParentSpanID == root})
	}
	assert.Equal(t, []shape{
		{"root", 0, 4, 1, 0.75, 150, false},
		{"first", 1, 2, 0, 0.5, 150, true},
		{"call", 2, 1, 0, 0.5, 150, false},
		{"second", 1, 1, 1, 0.25, 0, true},
	}, got)
	assert.Equal(t, "timeout", *tree.Spans[3].ErrorCode)

	page, err := ca.TraceTree(ctx, traceID, 1, 2)
	require.NoError(t, err)
	require.Len(t, page.Spans, 2)
	assert.Equal(t, []string{"first", "call"}, []string{page.Spans[0].Name, page.Spans[1].Name})
	require.NotNil(t, page.NextOffset)
	assert.Equal(t, 3, *page.NextOffset)
	last, err := ca.TraceTree(ctx, traceID, 3, 2)
	require.NoError(t, err)
	assert.Len(t, last.Spans, 1)
	assert.Nil(t, last.NextOffset)

	t.Run("another project", func(t *testing.T) {
		_, err := cb.TraceTree(ctx, traceID, 0, 0)
		assertCode(t, err, wire.CodeNotFound)
		// B's own trace of the same id holds only B's span.
		a.MustDo(t, "POST", "/spans", a.B.Key, []any{treeSpan(uuid.NewString(), traceID, "", "B's root", at, 0)})
		own, err := cb.TraceTree(ctx, traceID, 0, 0)
		require.NoError(t, err)
		require.Len(t, own.Spans, 1)
		assert.Equal(t, "B's root", own.Spans[0].Name)
		mine, err := ca.TraceTree(ctx, traceID, 0, 0)
		require.NoError(t, err)
		assert.Equal(t, 4, mine.SpanCount)
	})
	t.Run("bad input", func(t *testing.T) {
		tests := []struct {
			name          string
			trace         string
			offset, limit int
			code          wire.ErrorCode
		}{
			{"unknown trace", uuid.NewString(), 0, 0, wire.CodeNotFound},
			{"not a trace id", "not-a-uuid", 0, 0, wire.CodeNotFound},
			{"negative offset", traceID, -1, 0, wire.CodeInvalid},
			{"limit over the most", traceID, 0, wire.SpanTreeMaxLimit + 1, wire.CodeInvalid},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := ca.TraceTree(ctx, tt.trace, tt.offset, tt.limit)
				assertCode(t, err, tt.code)
			})
		}
	})
}

// TestTraceTreeRequests: a page of a trace's tree costs the same DynamoDB requests at 100 spans
// as past api.SpanTreeWholeMax: the trace, one Query of its member items and one BatchGetItem
// per 100 summaries read (the whole small trace; only the page of the large one).
func TestTraceTreeRequests(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	ca, _ := treeClients(t, a)
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	tests := []struct {
		spans int
		whole bool
		want  map[string]int
	}{
		{100, true, map[string]int{"BatchGetItem": 2, "Query": 1}},
		{wire.SpanTreeWholeMax + 100, false, map[string]int{"BatchGetItem": 3, "Query": 1}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.spans), func(t *testing.T) {
			traceID, root := uuid.NewString(), uuid.NewString()
			batch := []any{treeSpan(root, traceID, "", "root", at, 0)}
			for i := 1; i < tt.spans; i++ {
				batch = append(batch, treeSpan(uuid.NewString(), traceID, root, fmt.Sprintf("step %d", i), at, float64(i)/1000))
				if len(batch) == 500 || i == tt.spans-1 {
					a.MustDo(t, "POST", "/spans", a.A.Key, batch)
					batch = nil
				}
			}
			a.DDB.Reset()
			tree, err := ca.TraceTree(ctx, traceID, 0, 0)
			require.NoError(t, err)
			assert.Equal(t, tt.spans, tree.SpanCount)
			assert.Equal(t, tt.whole, tree.Whole)
			assert.Len(t, tree.Spans, min(tt.spans, wire.SpanTreeDefaultLimit))
			assert.Equal(t, tt.want, a.DDB.Counts())
		})
	}
}

// TestSpanSummaries: GET /spans/summaries through the Go client: the summaries in the order
// asked, with their trace and prompt; another project's ids and unknown ones left out; more ids
// than one request takes asked in parts; bad ids refused.
func TestSpanSummaries(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	ca, cb := treeClients(t, a)
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	traceID, first, second := uuid.NewString(), uuid.NewString(), uuid.NewString()
	a.MustDo(t, "POST", "/spans", a.A.Key, []any{treeSpan(first, traceID, "", "first", at, 0),
		apitest.LLMSpan(second, traceID, "", "support", "", "question", "answer", at.Add(time.Second))})
	theirs := uuid.NewString()
	a.MustDo(t, "POST", "/spans", a.B.Key, []any{treeSpan(theirs, uuid.NewString(), "", "B's", at, 0)})

	ids := []string{second, uuid.NewString(), theirs, first}
	for range wire.MaxSummaryIDs {
		ids = append(ids, uuid.NewString())
	}
	got, err := ca.SpanSummaries(ctx, append(ids, second))
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, []string{second, first, second}, []string{got[0].ID, got[1].ID, got[2].ID})
	assert.Equal(t, traceID, got[0].TraceID)
	assert.Equal(t, "support", got[0].PromptSlug)
	assert.Equal(t, "first", got[1].Name)

	mine, err := cb.SpanSummaries(ctx, ids)
	require.NoError(t, err)
	require.Len(t, mine, 1)
	assert.Equal(t, theirs, mine[0].ID)

	tests := []struct {
		name  string
		query string
	}{
		{"not a UUID", "ids=" + first + ",nope"},
		{"too many ids", "ids=" + strings.Join(ids[:wire.MaxSummaryIDs+1], ",")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := a.Do(t, "GET", "/spans/summaries?"+tt.query, a.A.Key, nil)
			assert.Equal(t, http.StatusBadRequest, res.Status)
			assert.Contains(t, string(res.Body), `"invalid_request"`)
		})
	}
}

// TestSpanSummariesList: GET /spans/summaries without ids answers the list GET /spans answers
// for the same query, span by span as summaries, and pages by the same cursors; another
// project's spans are not in it; a parameter GET /spans refuses is refused.
func TestSpanSummariesList(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	ca, cb := treeClients(t, a)
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	traceID := uuid.NewString()
	var spans []any
	for i := range 7 {
		spans = append(spans, treeSpan(uuid.NewString(), traceID, "", fmt.Sprintf("step-%d", i), at, float64(i)))
	}
	spans = append(spans, apitest.LLMSpan(uuid.NewString(), traceID, "", "support", "", "question", "answer", at.Add(8*time.Second)))
	a.MustDo(t, "POST", "/spans", a.A.Key, spans)
	a.MustDo(t, "POST", "/spans", a.B.Key, []any{treeSpan(uuid.NewString(), uuid.NewString(), "", "B's", at, 0)})

	for _, q := range []wire.SpanQuery{
		{},
		{ListQuery: wire.ListQuery{SortBy: "name", SortOrder: wire.SortAsc}},
		{SpanKind: wire.SpanKindLLM},
		{TraceID: traceID, ListQuery: wire.ListQuery{SortBy: "started_at", SortOrder: wire.SortAsc}},
	} {
		full, _, err := ca.SpansPage(ctx, q)
		require.NoError(t, err)
		var want []string
		for _, s := range full {
			want = append(want, s.ID)
		}
		var got []string
		q.Limit = 3
		for range 5 {
			page, info, err := ca.SpanSummariesPage(ctx, q)
			require.NoError(t, err)
			for _, s := range page {
				got = append(got, s.ID)
				assert.Equal(t, traceID, s.TraceID)
			}
			if info.NextCursor == "" {
				break
			}
			q.Cursor = info.NextCursor
		}
		assert.Equal(t, want, got, "%+v", q)
	}

	theirs, _, err := cb.SpanSummariesPage(ctx, wire.SpanQuery{})
	require.NoError(t, err)
	require.Len(t, theirs, 1)
	assert.Equal(t, "B's", theirs[0].Name)

	res := a.Do(t, "GET", "/spans/summaries?sort_by=tokens", a.A.Key, nil)
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Contains(t, string(res.Body), `"invalid_request"`)
}

// assertCode checks that err is the API's error of code.
func assertCode(t *testing.T, err error, code wire.ErrorCode) {
	t.Helper()
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, code, ce.Code)
}
