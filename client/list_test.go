package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// cutServer answers GET /spans, /traces and /sessions from n records with ids "0".."n-1",
// at most perAnswer of them per answer (the rest left to X-Plume-Next-Offset, as a server
// that cuts its answer by size does), with X-Plume-Scanned and, when truncated, the scan
// bound's header. It records the queries it was sent.
type cutServer struct {
	n, perAnswer int
	truncated    bool
	nextOffset   string // when not "", the X-Plume-Next-Offset answered whatever the page
	mu           sync.Mutex
	queries      []url.Values
}

func (s *cutServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	s.queries = append(s.queries, q)
	s.mu.Unlock()
	offset, _ := strconv.Atoi(q.Get("offset"))
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil {
		limit = 1000
	}
	end := min(offset+limit, s.n)
	w.Header().Set(HeaderScanned, strconv.Itoa(end))
	if s.truncated {
		w.Header().Set(HeaderScanTruncated, "true")
	}
	if end-offset > s.perAnswer {
		end = offset + s.perAnswer
		w.Header().Set(HeaderNextOffset, strconv.Itoa(end))
	}
	if s.nextOffset != "" {
		w.Header().Set(HeaderNextOffset, s.nextOffset)
	}
	recs := []map[string]string{}
	for i := offset; i < end; i++ {
		recs = append(recs, map[string]string{"id": strconv.Itoa(i)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(recs)
}

func (s *cutServer) client(t *testing.T) *Client {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey("plm_test"), WithRetries(0), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	return c
}

// TestListPageInfo: the page methods answer what the list headers say, for each route.
func TestListPageInfo(t *testing.T) {
	tests := []struct {
		name   string
		server *cutServer
		q      api.ListQuery
		ids    []string
		info   ListInfo
	}{
		{"complete", &cutServer{n: 3, perAnswer: 10}, api.ListQuery{}, []string{"0", "1", "2"}, ListInfo{Scanned: 3}},
		{"cut by the scan bound", &cutServer{n: 2, perAnswer: 10, truncated: true}, api.ListQuery{}, []string{"0", "1"},
			ListInfo{Scanned: 2, Truncated: true}},
		{"cut by size", &cutServer{n: 5, perAnswer: 2}, api.ListQuery{Offset: 1}, []string{"1", "2"},
			ListInfo{Scanned: 5, NextOffset: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.server.client(t)
			ctx := context.Background()
			spans, info, err := c.SpansPage(ctx, api.SpanQuery{ListQuery: tt.q})
			require.NoError(t, err)
			assert.Equal(t, tt.ids, ids(spans, func(s api.Span) string { return s.ID }))
			assert.Equal(t, tt.info, info)
			assert.Equal(t, tt.info.Truncated || tt.info.NextOffset > 0, info.Partial())
			traces, info, err := c.TracesPage(ctx, api.TraceQuery{ListQuery: tt.q})
			require.NoError(t, err)
			assert.Equal(t, tt.ids, ids(traces, func(s api.Trace) string { return s.ID }))
			assert.Equal(t, tt.info, info)
			sessions, info, err := c.SessionsPage(ctx, api.SessionQuery{ListQuery: tt.q})
			require.NoError(t, err)
			assert.Equal(t, tt.ids, ids(sessions, func(s api.Session) string { return s.ID }))
			assert.Equal(t, tt.info, info)
		})
	}
}

// TestListPageRefusesBadNextOffset: a next offset that would not move on, or that cannot be
// read, is an error rather than an answer passed off as complete.
func TestListPageRefusesBadNextOffset(t *testing.T) {
	for _, v := range []string{"many", "-1", "2"} {
		t.Run(v, func(t *testing.T) {
			s := &cutServer{n: 5, perAnswer: 10, nextOffset: v}
			_, _, err := s.client(t).SpansPage(context.Background(), api.SpanQuery{ListQuery: api.ListQuery{Offset: 2}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), HeaderNextOffset)
		})
	}
}

// TestAllFollowsNextOffset: All* asks from each next offset for what the limit leaves, and
// stops at MaxFollowedPages with the next offset of what it left.
func TestAllFollowsNextOffset(t *testing.T) {
	t.Run("to the limit", func(t *testing.T) {
		s := &cutServer{n: 100, perAnswer: 3, truncated: true}
		spans, info, err := s.client(t).AllSpans(context.Background(),
			api.SpanQuery{ListQuery: api.ListQuery{Limit: 7, Offset: 10}, SpanKind: api.SpanKindLLM})
		require.NoError(t, err)
		assert.Equal(t, []string{"10", "11", "12", "13", "14", "15", "16"}, ids(spans, func(s api.Span) string { return s.ID }))
		assert.True(t, info.Truncated, "a page cut by the scan bound makes the whole partial")
		assert.Zero(t, info.NextOffset)
		assert.Equal(t, 3*17, info.Scanned, "summed")
		var asked []string
		for _, q := range s.queries {
			assert.Equal(t, "llm", q.Get("span_kind"), "the filters are kept")
			asked = append(asked, q.Get("offset")+"+"+q.Get("limit"))
		}
		assert.Equal(t, []string{"10+7", "13+4", "16+1"}, asked)
	})
	t.Run("to the end", func(t *testing.T) {
		s := &cutServer{n: 5, perAnswer: 2}
		traces, info, err := s.client(t).AllTraces(context.Background(), api.TraceQuery{})
		require.NoError(t, err)
		assert.Len(t, traces, 5)
		assert.False(t, info.Partial())
	})
	t.Run("bounded", func(t *testing.T) {
		s := &cutServer{n: MaxFollowedPages + 10, perAnswer: 1}
		sessions, info, err := s.client(t).AllSessions(context.Background(), api.SessionQuery{})
		require.NoError(t, err)
		assert.Len(t, sessions, MaxFollowedPages)
		assert.Len(t, s.queries, MaxFollowedPages)
		assert.Equal(t, MaxFollowedPages, info.NextOffset, "where the rest starts")
		assert.True(t, info.Partial())
	})
}

// ids is the id of each record.
func ids[T any](recs []T, id func(T) string) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = id(r)
	}
	return out
}
