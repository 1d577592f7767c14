package client

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// listStack is the whole API (apitest) behind an HTTP server, each tracing list request passed
// through a wrapper first when one is given (a server older than cursors, one that ends pages
// early), and a client of project A. The queries of the list requests are recorded.
type listStack struct {
	api     *apitest.API
	mu      sync.Mutex
	queries []url.Values
}

func newListStack(t *testing.T) *listStack {
	return &listStack{api: apitest.New(t, apitest.Options{})}
}

// client is a client of project A through wrap (nil: the API as it is).
func (s *listStack) client(t *testing.T, wrap func(http.Handler) http.Handler) *Client {
	t.Helper()
	h := s.api.Handler
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isList(r) {
			s.mu.Lock()
			s.queries = append(s.queries, r.URL.Query())
			s.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey(s.api.A.Key), WithProject(s.api.A.ProjectID), WithRetries(0),
		WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	return c
}

// sent returns the queries of the list requests since the last call, and forgets them.
func (s *listStack) sent() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queries
	s.queries = nil
	return q
}

func isList(r *http.Request) bool {
	return r.Method == http.MethodGet && (r.URL.Path == "/spans" || r.URL.Path == "/traces" || r.URL.Path == "/sessions")
}

// seedTraces stores n traces of one llm span each, each trace in a session of its own, with
// costs that differ (the span's input tokens grow with i), in one batch.
func seedTraces(t *testing.T, c *Client, n int) {
	t.Helper()
	spans := make([]map[string]any, n)
	at := time.Now().Add(-time.Hour)
	for i := range spans {
		s := apitest.LLMSpan(uuid.NewString(), uuid.NewString(), uuid.NewString(), "support", "", "question "+strconv.Itoa(i), "answer", at.Add(time.Duration(i)*time.Second))
		s["attributes"].(map[string]any)["inputTokens"] = 100 * (i + 1)
		spans[i] = s
	}
	_, err := c.IngestSpans(context.Background(), spans)
	require.NoError(t, err)
}

// listCase is one query of the three lists, read three ways.
type listCase struct {
	name  string
	query api.ListQuery
}

// walkIDs walks pages to the end: the records' ids in order, each page's info, and the error
// that ended the walk.
func walkIDs[T any](pages iter.Seq2[Page[T], error], id func(T) string) ([]string, []ListInfo, error) {
	var ids []string
	var infos []ListInfo
	for p, err := range pages {
		if err != nil {
			return ids, infos, err
		}
		for _, r := range p.Records {
			ids = append(ids, id(r))
		}
		infos = append(infos, p.Info)
	}
	return ids, infos, nil
}

// recordIDs reads Records of pages: the ids in order and the error that ended them.
func recordIDs[T any](pages iter.Seq2[Page[T], error], id func(T) string) ([]string, error) {
	var ids []string
	for r, err := range Records(pages) {
		if err != nil {
			return ids, err
		}
		ids = append(ids, id(r))
	}
	return ids, nil
}

func spanID(s api.Span) string       { return s.ID }
func traceID(t api.Trace) string     { return t.ID }
func sessionID(s api.Session) string { return s.ID }

// lister is a list of the client read three ways: one page, AllX and the page walk.
type lister struct {
	name string
	page func(c *Client, q api.ListQuery) ([]string, ListInfo, error)
	all  func(c *Client, q api.ListQuery) ([]string, ListInfo, error)
	ids  func(c *Client, q api.ListQuery) ([]string, []ListInfo, error)
	recs func(c *Client, q api.ListQuery) ([]string, error)
}

// listers are the three tracing lists.
var listers = []lister{
	{name: "spans",
		page: func(c *Client, q api.ListQuery) ([]string, ListInfo, error) {
			recs, info, err := c.SpansPage(context.Background(), api.SpanQuery{ListQuery: q})
			return ids(recs, spanID), info, err
		},
		all: func(c *Client, q api.ListQuery) ([]string, ListInfo, error) {
			recs, info, err := c.AllSpans(context.Background(), api.SpanQuery{ListQuery: q})
			return ids(recs, spanID), info, err
		},
		ids: func(c *Client, q api.ListQuery) ([]string, []ListInfo, error) {
			return walkIDs(c.SpanPages(context.Background(), api.SpanQuery{ListQuery: q}), spanID)
		},
		recs: func(c *Client, q api.ListQuery) ([]string, error) {
			return recordIDs(c.SpanPages(context.Background(), api.SpanQuery{ListQuery: q}), spanID)
		}},
	{name: "traces",
		page: func(c *Client, q api.ListQuery) ([]string, ListInfo, error) {
			recs, info, err := c.TracesPage(context.Background(), api.TraceQuery{ListQuery: q})
			return ids(recs, traceID), info, err
		},
		all: func(c *Client, q api.ListQuery) ([]string, ListInfo, error) {
			recs, info, err := c.AllTraces(context.Background(), api.TraceQuery{ListQuery: q})
			return ids(recs, traceID), info, err
		},
		ids: func(c *Client, q api.ListQuery) ([]string, []ListInfo, error) {
			return walkIDs(c.TracePages(context.Background(), api.TraceQuery{ListQuery: q}), traceID)
		},
		recs: func(c *Client, q api.ListQuery) ([]string, error) {
			return recordIDs(c.TracePages(context.Background(), api.TraceQuery{ListQuery: q}), traceID)
		}},
	{name: "sessions",
		page: func(c *Client, q api.ListQuery) ([]string, ListInfo, error) {
			recs, info, err := c.SessionsPage(context.Background(), api.SessionQuery{ListQuery: q})
			return ids(recs, sessionID), info, err
		},
		all: func(c *Client, q api.ListQuery) ([]string, ListInfo, error) {
			recs, info, err := c.AllSessions(context.Background(), api.SessionQuery{ListQuery: q})
			return ids(recs, sessionID), info, err
		},
		ids: func(c *Client, q api.ListQuery) ([]string, []ListInfo, error) {
			return walkIDs(c.SessionPages(context.Background(), api.SessionQuery{ListQuery: q}), sessionID)
		},
		recs: func(c *Client, q api.ListQuery) ([]string, error) {
			return recordIDs(c.SessionPages(context.Background(), api.SessionQuery{ListQuery: q}), sessionID)
		}},
}

// TestWalkByCursor: a walk of each list, page by page, asks from the cursor each answer gives
// (never an offset) and returns every record once, in the order of one whole page, for the
// default order, a sort and a filter; AllX reads its limit the same way.
func TestWalkByCursor(t *testing.T) {
	s := newListStack(t)
	c := s.client(t, nil)
	const n = 23
	seedTraces(t, c, n)
	costMin := 0.0
	cases := []listCase{
		{"newest first", api.ListQuery{}},
		{"by cost, cheapest first", api.ListQuery{SortBy: "cost", SortOrder: api.SortAsc}},
		{"a filter", api.ListQuery{CostMin: &costMin, SortBy: "cost"}},
	}
	for _, l := range listers {
		for _, tt := range cases {
			t.Run(l.name+"/"+tt.name, func(t *testing.T) {
				whole := tt.query
				whole.Limit = 100
				want, info, err := l.page(c, whole)
				require.NoError(t, err)
				require.Len(t, want, n)
				assert.Equal(t, ListInfo{Scanned: info.Scanned}, info, "a whole list: no cursor")
				s.sent()

				q := tt.query
				q.Limit = 5
				got, infos, err := l.ids(c, q)
				require.NoError(t, err)
				assert.Equal(t, want, got, "each record once, in order")
				require.Len(t, infos, 5, "pages of 5, 5, 5, 5, 3")
				for i, info := range infos[:4] {
					assert.NotEmpty(t, info.NextCursor, "page %d", i)
					assert.False(t, info.Partial(), "a full page is whole")
				}
				assert.Empty(t, infos[4].NextCursor, "the list has ended")
				sent := s.sent()
				require.Len(t, sent, 5)
				assert.False(t, sent[0].Has(api.ParamCursor))
				for i, q := range sent[1:] {
					assert.Equal(t, infos[i].NextCursor, q.Get(api.ParamCursor), "request %d continues from the cursor before it", i+1)
					assert.False(t, q.Has(api.ParamOffset))
					assert.Equal(t, "5", q.Get(api.ParamLimit))
				}

				q.Limit = 12
				all, info, err := l.all(c, q)
				require.NoError(t, err)
				assert.Equal(t, want[:12], all)
				assert.NotEmpty(t, info.NextCursor, "where the list goes on")
				assert.False(t, info.Partial())
				rest := q
				rest.Cursor = info.NextCursor
				got, _, err = l.all(c, rest)
				require.NoError(t, err)
				assert.Equal(t, want[12:], got, "the cursor resumes after the last record answered")
			})
		}
	}
}

// bigSpans stores n spans of one trace whose input is about size bytes each, in batches that
// fit a request; their ids in start order.
func bigSpans(t *testing.T, c *Client, n, size int) (traceID string, spanIDs []string) {
	t.Helper()
	traceID = uuid.NewString()
	at := time.Now().Add(-time.Hour)
	input := strings.Repeat("a", size)
	var batch []map[string]any
	for i := range n {
		id := uuid.NewString()
		spanIDs = append(spanIDs, id)
		batch = append(batch, apitest.LLMSpan(id, traceID, "", "support", "", input, "answer", at.Add(time.Duration(i)*time.Second)))
		if len(batch)*size >= 3<<20 || i == n-1 {
			_, err := c.IngestSpans(context.Background(), batch)
			require.NoError(t, err)
			batch = nil
		}
	}
	return traceID, spanIDs
}

// TestCutBySizeContinuesByCursor: a page the server cut at api.MaxAnswerBytes says so (Cut,
// with a cursor and, read from an offset, a next offset); its cursor reads on, and AllSpans
// and the walk return every span once, in order, in as many requests as the size needs.
func TestCutBySizeContinuesByCursor(t *testing.T) {
	s := newListStack(t)
	c := s.client(t, nil)
	const n, size = 16, 400_000 // about 7 spans an answer
	trace, want := bigSpans(t, c, n, size)
	q := api.SpanQuery{TraceID: trace, ListQuery: api.ListQuery{SortBy: "started_at", SortOrder: api.SortAsc, Limit: n}}
	ctx := context.Background()

	first, info, err := c.SpansPage(ctx, q)
	require.NoError(t, err)
	require.Less(t, len(first), n, "cut by size")
	assert.Equal(t, want[:len(first)], ids(first, spanID))
	assert.True(t, info.Cut)
	assert.True(t, info.Partial())
	assert.NotEmpty(t, info.NextCursor)
	assert.Equal(t, len(first), info.NextOffset, "read from an offset, the offset of the rest too")

	next := q
	next.Cursor = info.NextCursor
	second, info, err := c.SpansPage(ctx, next)
	require.NoError(t, err)
	assert.Equal(t, want[len(first):len(first)+len(second)], ids(second, spanID), "the cursor reads on")
	assert.Zero(t, info.NextOffset, "a page read from a cursor has no offset to tell")
	s.sent()

	all, info, err := c.AllSpans(ctx, q)
	require.NoError(t, err)
	assert.Equal(t, want, ids(all, spanID))
	assert.False(t, info.Partial())
	assert.Empty(t, info.NextCursor)
	sent := s.sent()
	require.Len(t, sent, 3, "7 + 7 + 2")
	for i, q := range sent[1:] {
		assert.True(t, q.Has(api.ParamCursor), "request %d", i+1)
		assert.False(t, q.Has(api.ParamOffset))
	}
	assert.Equal(t, []string{"16", "9", "2"}, []string{sent[0].Get("limit"), sent[1].Get("limit"), sent[2].Get("limit")},
		"each request asks for what the limit leaves")

	walked, err := recordIDs(c.SpanPages(ctx, api.SpanQuery{TraceID: trace, ListQuery: api.ListQuery{SortBy: "started_at", SortOrder: api.SortAsc}}), spanID)
	require.NoError(t, err)
	assert.Equal(t, want, walked)
}

// offsetsOnly is a server older than cursors: h without X-Plume-Next-Cursor, its Link
// header to the offset, and no cursor ever sent to it (it would read one as a tag filter).
func offsetsOnly(t *testing.T) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Has(api.ParamCursor) {
				t.Errorf("a cursor sent to a server that answered none: %s", r.URL)
			}
			h.ServeHTTP(&headerEdit{ResponseWriter: w, edit: func(h http.Header) {
				h.Del(api.NextCursorHeader)
				h.Del("Link")
			}}, r)
		})
	}
}

// headerEdit changes the headers of an answer before they are sent.
type headerEdit struct {
	http.ResponseWriter
	edit  func(http.Header)
	wrote bool
}

func (e *headerEdit) WriteHeader(code int) {
	if !e.wrote {
		e.wrote = true
		e.edit(e.Header())
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *headerEdit) Write(b []byte) (int, error) {
	if !e.wrote {
		e.WriteHeader(http.StatusOK)
	}
	return e.ResponseWriter.Write(b)
}

// TestOldServerPagedByOffset: against a server that answers no cursor, the walk pages by
// offset (past each full page, from the next offset of a page cut by size) and AllSpans
// follows next offsets, each record once and in order.
func TestOldServerPagedByOffset(t *testing.T) {
	s := newListStack(t)
	c := s.client(t, nil)
	old := s.client(t, offsetsOnly(t))
	seedTraces(t, c, 11)
	trace, big := bigSpans(t, c, 9, 400_000) // and a 12th trace
	ctx := context.Background()

	want, _, err := c.TracesPage(ctx, api.TraceQuery{})
	require.NoError(t, err)
	require.Len(t, want, 12)
	s.sent()
	for _, tt := range []struct {
		limit   int
		offsets []string
	}{
		{5, []string{"", "5", "10"}},
		{3, []string{"", "3", "6", "9", "12"}}, // the list ends with a full page: one more request finds nothing
	} {
		got, err := recordIDs(old.TracePages(ctx, api.TraceQuery{ListQuery: api.ListQuery{Limit: tt.limit}}), traceID)
		require.NoError(t, err)
		assert.Equal(t, ids(want, traceID), got)
		var offsets []string
		for _, q := range s.sent() {
			offsets = append(offsets, q.Get(api.ParamOffset))
		}
		assert.Equal(t, tt.offsets, offsets)
	}

	q := api.SpanQuery{TraceID: trace, ListQuery: api.ListQuery{SortBy: "started_at", SortOrder: api.SortAsc, Limit: 9}}
	first, info, err := old.SpansPage(ctx, q)
	require.NoError(t, err)
	assert.Less(t, len(first), 9)
	assert.Equal(t, ListInfo{Scanned: info.Scanned, NextOffset: len(first), Cut: true}, info)
	all, info, err := old.AllSpans(ctx, q)
	require.NoError(t, err)
	assert.Equal(t, big, ids(all, spanID))
	assert.False(t, info.Partial())
	q.Limit = 0
	got, err := recordIDs(old.SpanPages(ctx, q), spanID)
	require.NoError(t, err)
	assert.Equal(t, big, got)
}

// shortPages is a server that ends every tracing list answer after one record, as one that
// cut each by size or at its bound on a request's work would: the cursor after it reads on.
func shortPages(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); q.Get("id") == "" {
			q.Set(api.ParamLimit, "1")
			r.URL.RawQuery = q.Encode()
		}
		h.ServeHTTP(w, r)
	})
}

// TestAllStopsAtMaxFollowedPages: AllX follows short answers until its limit, but sends at most
// MaxFollowedPages requests; what it answers then is Cut, with the cursor of the rest.
func TestAllStopsAtMaxFollowedPages(t *testing.T) {
	s := newListStack(t)
	c := s.client(t, nil)
	short := s.client(t, shortPages)
	const n = MaxFollowedPages + 5
	seedTraces(t, c, n)
	for _, l := range listers {
		t.Run(l.name, func(t *testing.T) {
			want, _, err := l.page(c, api.ListQuery{Limit: 100})
			require.NoError(t, err)
			require.Len(t, want, n)

			one, info, err := l.page(short, api.ListQuery{Limit: 3})
			require.NoError(t, err)
			assert.Equal(t, want[:1], one)
			assert.True(t, info.Cut, "fewer than asked, more follow")
			assert.True(t, info.Partial())

			s.sent()
			got, info, err := l.all(short, api.ListQuery{Limit: 3})
			require.NoError(t, err)
			assert.Equal(t, want[:3], got)
			assert.False(t, info.Partial())
			assert.Len(t, s.sent(), 3)

			got, info, err = l.all(short, api.ListQuery{Limit: n})
			require.NoError(t, err)
			assert.Equal(t, want[:MaxFollowedPages], got)
			assert.Len(t, s.sent(), MaxFollowedPages)
			assert.True(t, info.Cut)
			assert.True(t, info.Partial())
			require.NotEmpty(t, info.NextCursor)
			rest, _, err := l.all(c, api.ListQuery{Cursor: info.NextCursor})
			require.NoError(t, err)
			assert.Equal(t, want[MaxFollowedPages:], rest, "the cursor resumes")
		})
	}
}

// TestScanBoundSaysPartial: a list the server's scan bound cut is partial on every page and
// in AllX, and its walk ends, after every record, with ErrPartialList.
func TestScanBoundSaysPartial(t *testing.T) {
	s := newListStack(t)
	c := s.client(t, nil)
	cut := s.client(t, func(h http.Handler) http.Handler { return apitest.PartialLists(h, true, false) })
	oldCut := s.client(t, func(h http.Handler) http.Handler { return offsetsOnly(t)(apitest.PartialLists(h, true, false)) })
	seedTraces(t, c, 7)
	for _, l := range listers {
		t.Run(l.name, func(t *testing.T) {
			want, _, err := l.page(c, api.ListQuery{})
			require.NoError(t, err)
			_, info, err := l.page(cut, api.ListQuery{Limit: 3})
			require.NoError(t, err)
			assert.True(t, info.Truncated)
			assert.True(t, info.Partial())
			_, info, err = l.all(cut, api.ListQuery{Limit: 5})
			require.NoError(t, err)
			assert.True(t, info.Partial())
			got, err := l.recs(cut, api.ListQuery{Limit: 3})
			assert.ErrorIs(t, err, ErrPartialList)
			assert.Equal(t, want, got, "every record first")
			got, err = l.recs(oldCut, api.ListQuery{Limit: 3})
			assert.ErrorIs(t, err, ErrPartialList)
			assert.Equal(t, want, got, "every record of a server without cursors first")
			got, err = l.recs(c, api.ListQuery{Limit: 3})
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

// TestListRefusesBadContinuations: a continuation that would not move on (the request's own
// cursor, a next offset not past its offset), or that cannot be read or sent back, is an error
// rather than a loop or an answer passed off as complete.
func TestListRefusesBadContinuations(t *testing.T) {
	s := newListStack(t)
	c := s.client(t, nil)
	seedTraces(t, c, 5)
	_, first, err := c.SpansPage(context.Background(), api.SpanQuery{ListQuery: api.ListQuery{Limit: 2}})
	require.NoError(t, err)
	require.NotEmpty(t, first.NextCursor, "a cursor the server gave")
	header := func(name, value string) func(http.Handler) http.Handler {
		return func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				v := value
				if v == "the request's" {
					v = r.URL.Query().Get(api.ParamCursor)
				}
				h.ServeHTTP(&headerEdit{ResponseWriter: w, edit: func(h http.Header) { h.Set(name, v) }}, r)
			})
		}
	}
	tests := []struct {
		name, header, value string
		q                   api.ListQuery
	}{
		{"offset not a number", api.NextOffsetHeader, "many", api.ListQuery{Offset: 2}},
		{"offset negative", api.NextOffsetHeader, "-1", api.ListQuery{Offset: 2}},
		{"offset not past", api.NextOffsetHeader, "2", api.ListQuery{Offset: 2}},
		{"the request's cursor", api.NextCursorHeader, "the request's", api.ListQuery{Cursor: first.NextCursor}},
		{"a cursor too long", api.NextCursorHeader, strings.Repeat("c", api.MaxCursorBytes+1), api.ListQuery{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := s.client(t, header(tt.header, tt.value))
			_, _, err := bad.SpansPage(context.Background(), api.SpanQuery{ListQuery: tt.q})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.header)
			_, err = recordIDs(bad.TracePages(context.Background(), api.TraceQuery{ListQuery: tt.q}), traceID)
			require.Error(t, err)
			assert.False(t, errors.Is(err, ErrPartialList))
		})
	}
}

// TestCursorWithOffsetRefused: the API refuses a cursor with an offset, in the error shape.
func TestCursorWithOffsetRefused(t *testing.T) {
	s := newListStack(t)
	c := s.client(t, nil)
	_, _, err := c.TracesPage(context.Background(), api.TraceQuery{ListQuery: api.ListQuery{Cursor: "o1", Offset: 1}})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "cursor and offset cannot be combined")
}

// ids is the id of each record.
func ids[T any](recs []T, id func(T) string) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = id(r)
	}
	return out
}

// TestEvaluationsSayTruncated: a judge's evaluations that the server's scan bound cut
// (X-Plume-Scan-Truncated) are Truncated in the client's answer; a complete list is not.
func TestEvaluationsSayTruncated(t *testing.T) {
	s := newListStack(t)
	c := s.client(t, nil)
	cut := s.client(t, func(h http.Handler) http.Handler { return apitest.PartialLists(h, true, false) })
	ctx := context.Background()
	j, err := c.CreateJudge(ctx, api.JudgeRequest{Name: new("J"), Template: new("Is it right?")})
	require.NoError(t, err)
	without := false
	q := EvaluationQuery{Limit: 10, WithUserFeedback: &without}
	page, err := c.Evaluations(ctx, j.ID, q)
	require.NoError(t, err)
	assert.False(t, page.Truncated)
	page, err = cut.Evaluations(ctx, j.ID, q)
	require.NoError(t, err)
	assert.True(t, page.Truncated, "the scan bound reaches the client's user")
}
