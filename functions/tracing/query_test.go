package tracing_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wire "github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/shared/trace"
)

// TestQueryParameters: every parameter docs/tracing.md lists is read as itself, and any other is
// a tag filter named in X-Plume-Tag-Filters, on success and on error alike.
func TestQueryParameters(t *testing.T) {
	api := newTestAPI(t)
	id := uuid.NewString()
	// The lists of docs/tracing.md, with a valid value each.
	common := url.Values{
		"created_before": {"2026-11-24T00:00:00Z"}, "created_after": {"2026-11-01T00:00:00+01:00"}, "names": {"a,b"},
		"has_error": {"true"}, "duration_min": {"1"}, "duration_max": {"2"}, "cost_min": {"0"},
		"cost_max": {"1"}, "sort_order": {"asc"}, "limit": {"10"}, "offset": {"1"},
	}
	with := func(extra url.Values) string {
		q := url.Values{}
		for k, v := range common {
			q[k] = v
		}
		for k, v := range extra {
			q[k] = v
		}
		return q.Encode()
	}
	tests := []struct {
		name   string
		path   string
		status int
		header string // "": no header
	}{
		{"every span parameter", "/spans?" + with(url.Values{
			"id": {id}, "trace_id": {id}, "session_id": {id}, "parent_span_id": {"null"},
			"span_kind": {"llm"}, "error_codes": {"E1"}, "sort_by": {"kind"},
		}), http.StatusOK, ""},
		{"every trace parameter", "/traces?" + with(url.Values{
			"id": {id}, "session_id": {id}, "status": {"error"}, "sort_by": {"span_count"},
		}), http.StatusOK, ""},
		{"every session parameter", "/sessions?" + with(url.Values{"id": {id}, "sort_by": {"trace_count"}}), http.StatusOK, ""},
		{"no parameters", "/spans", http.StatusOK, ""},
		{"misspelt span parameters", "/spans?kind=llm&sort_direction=asc", http.StatusOK, "kind,sort_direction"},
		{"a tag filter among parameters", "/spans?span_kind=llm&env=prod", http.StatusOK, "env"},
		{"an empty tag filter", "/spans?env=", http.StatusOK, "env"},
		{"a span parameter on traces", "/traces?span_kind=llm&trace_id=" + id, http.StatusOK, "span_kind,trace_id"},
		{"a trace parameter on sessions", "/sessions?status=error&session_id=" + id, http.StatusOK, "session_id,status"},
		{"names are query-escaped", "/spans?" + url.Values{"a,b": {"1"}, "é\r\n": {"2"}}.Encode(), http.StatusOK, "a%2Cb,%C3%A9%0D%0A"},
		{"on a 400 too", "/spans?limit=0&typo=1", http.StatusBadRequest, "typo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := api.do(t, "GET", tt.path, api.a.key, nil)
			require.Equal(t, tt.status, res.status, string(res.raw))
			assert.Equal(t, tt.header, res.header.Get("X-Plume-Tag-Filters"))
			if tt.status == http.StatusOK {
				assert.Equal(t, "[]\n", string(res.raw))
			}
		})
	}
}

// TestTagFilterBound: each list takes up to wire.MaxTagFilters tag filters; more answer 400
// invalid_request naming the limit, before any read, and without echoing the names in
// X-Plume-Tag-Filters (issue 25: 5,000 names made a 28.9 KB header).
func TestTagFilterBound(t *testing.T) {
	api := newTestAPI(t)
	tags := func(n int) string {
		q := url.Values{"limit": {"10"}}
		for i := range n {
			q.Set(fmt.Sprintf("tag%04d", i), "v")
		}
		return q.Encode()
	}
	for _, path := range []string{"/spans", "/traces", "/sessions"} {
		t.Run(path, func(t *testing.T) {
			res := api.do(t, "GET", path+"?"+tags(wire.MaxTagFilters), api.a.key, nil)
			require.Equal(t, http.StatusOK, res.status, string(res.raw))
			assert.Equal(t, "[]\n", string(res.raw))
			assert.Contains(t, res.header.Get("X-Plume-Tag-Filters"), fmt.Sprintf("tag%04d", wire.MaxTagFilters-1))

			for _, n := range []int{wire.MaxTagFilters + 1, 5000} {
				api.ddb.Reset()
				res := api.do(t, "GET", path+"?"+tags(n), api.a.key, nil)
				require.Equal(t, http.StatusBadRequest, res.status, "%d tag filters: %s", n, res.raw)
				var body wire.ErrorBody
				res.decode(t, &body)
				assert.Equal(t, wire.ErrorCode("invalid_request"), body.Error.Code)
				assert.Contains(t, body.Error.Message, "at most "+strconv.Itoa(wire.MaxTagFilters)+" tag filters")
				assert.Empty(t, res.header.Get("X-Plume-Tag-Filters"))
				assert.Empty(t, api.ddb.Counts(), "a refused query reads nothing")
			}
		})
	}
}

// TestSpansBySession: GET /spans?session_id= answers the spans of every trace of the session,
// also those that do not name the session, from the session's partition and its traces'
// (no walk of the time index), and nothing of another project's session of the same id.
func TestSpansBySession(t *testing.T) {
	api := newTestAPI(t)
	started := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano)
	span := func(traceID, session string) map[string]any {
		s := map[string]any{"id": uuid.NewString(), "trace_id": traceID, "name": "s" + traceID[:4], "started_at": started}
		if session != "" {
			s["session_id"] = session
		}
		return s
	}
	post := func(key string, spans ...map[string]any) []string {
		res := api.do(t, "POST", "/spans", key, spans)
		require.Equal(t, http.StatusOK, res.status, string(res.raw))
		var ids []string
		for _, s := range spans {
			ids = append(ids, s["id"].(string))
		}
		return ids
	}

	session, other := uuid.NewString(), uuid.NewString()
	t1, t2, t3, t4 := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	var inSession, inT1 []string
	inT1 = post(api.a.key, span(t1, session), span(t1, session))
	// A later batch of t1 whose spans do not name the session: still the session's (t1 joined it).
	inT1 = append(inT1, post(api.a.key, span(t1, ""))...)
	inSession = append(inSession, inT1...)
	inSession = append(inSession, post(api.a.key, span(t2, session), span(t2, session))...)
	post(api.a.key, span(t3, other), span(t4, ""))
	// Project B uses the same session id (session ids are the client's): a separate session.
	bSpans := post(api.b.key, span(uuid.NewString(), session))

	tests := []struct {
		name  string
		key   string
		query string
		want  []string
	}{
		{"the spans of every trace", api.a.key, "session_id=" + session, inSession},
		{"with trace_id", api.a.key, "session_id=" + session + "&trace_id=" + t1, inT1},
		{"with a trace of another session", api.a.key, "session_id=" + session + "&trace_id=" + t3, nil},
		{"with id", api.a.key, "session_id=" + session + "&id=" + inSession[3], inSession[3:4]},
		{"with the id of a span of another session", api.a.key, "session_id=" + other + "&id=" + inSession[0], nil},
		{"with a filter", api.a.key, "session_id=" + session + "&names=s" + t2[:4], inSession[3:]},
		{"an unknown session", api.a.key, "session_id=" + uuid.NewString(), nil},
		{"another project's session of the same id", api.b.key, "session_id=" + session, bSpans},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := api.do(t, "GET", "/spans?"+tt.query, tt.key, nil)
			require.Equal(t, http.StatusOK, res.status, string(res.raw))
			var got []trace.Span
			res.decode(t, &got)
			var ids []string
			for _, s := range got {
				ids = append(ids, s.ID)
			}
			assert.ElementsMatch(t, tt.want, ids)
			assert.Empty(t, res.header.Get("X-Plume-Tag-Filters"))
		})
	}

	// Requests: one Query of the session's partition and one per trace, one BatchGetItem of
	// the summaries; no Scan, no walk of the time index.
	api.ddb.Reset()
	res := api.do(t, "GET", "/spans?session_id="+session, api.a.key, nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.Equal(t, map[string]int{"Query": 3, "BatchGetItem": 1}, api.ddb.Counts())
	assert.Equal(t, "5", res.header.Get("X-Plume-Scanned"))

	res = api.do(t, "GET", "/spans?session_id=not-a-uuid", api.a.key, nil)
	assert.Equal(t, http.StatusBadRequest, res.status)
	assert.Equal(t, "invalid_request", res.errCode(t))
}

// TestAnswersCutAtTheByteBudget: GET /spans, /traces and /sessions answer the longest prefix
// of the page that fits the byte budget (issue 27: 5,000 spans of 1 KB made a 13.4 MB answer,
// which Lambda refuses), with X-Plume-Next-Offset and a Link of rel "next"; following them
// reads the rest of the page in order, without a gap or a repeat. A page that fits carries
// neither header. The budget is made small so that a few spans are past it.
func TestAnswersCutAtTheByteBudget(t *testing.T) {
	api := newTestAPI(t)
	started := time.Now().UTC().Add(-time.Minute)
	text := strings.Repeat(`a "quoted" <b> & \ line`+"\n", 200) // ~5 KB, escaped in JSON
	var spans []map[string]any
	for i := range 5 {
		spans = append(spans, map[string]any{
			"id": uuid.NewString(), "trace_id": uuid.NewString(), "session_id": uuid.NewString(),
			"name": fmt.Sprintf("span %d", i), "started_at": started.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano),
			"input_data": text, "output_data": text,
		})
	}
	res := api.do(t, "POST", "/spans", api.a.key, spans)
	require.Equal(t, http.StatusOK, res.status, string(res.raw))

	ids := func(t *testing.T, raw []byte) []string {
		var items []struct {
			ID string `json:"id"`
		}
		require.NoError(t, json.Unmarshal(raw, &items), "body: %s", raw)
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = it.ID
		}
		return out
	}
	for _, path := range []string{"/spans", "/traces", "/sessions"} {
		t.Run(path, func(t *testing.T) {
			first := path + "?limit=5&sort_by=name&sort_order=asc&offset=0"
			if path == "/sessions" {
				first = path + "?limit=5&sort_order=asc&offset=0"
			}
			whole := api.do(t, "GET", first, api.a.key, nil)
			require.Equal(t, http.StatusOK, whole.status, string(whole.raw))
			want := ids(t, whole.raw)
			require.Len(t, want, 5)
			assert.Empty(t, whole.header.Get(wire.NextOffsetHeader), "a page that fits is whole")
			assert.Empty(t, whole.header.Get("Link"))

			budget := len(whole.raw) / 2 // two items a page; each item is a fifth of the page
			tracing.SetAnswerBytes(t, budget)
			var got []string
			followed := 0 // links followed
			for target := first; target != ""; followed++ {
				require.Less(t, followed, 5, "paging ends")
				res := api.do(t, "GET", target, api.a.key, nil)
				require.Equal(t, http.StatusOK, res.status, string(res.raw))
				assert.LessOrEqual(t, len(res.raw), budget)
				page := ids(t, res.raw)
				require.NotEmpty(t, page)
				got = append(got, page...)
				next := res.header.Get(wire.NextOffsetHeader)
				cursor := res.header.Get(wire.NextCursorHeader)
				link := res.header.Get("Link")
				if len(got) == len(want) {
					assert.Empty(t, next, "the last page is whole")
					assert.Empty(t, cursor, "the list has ended")
					assert.Empty(t, link)
					break
				}
				if followed == 0 {
					require.Equal(t, strconv.Itoa(len(got)), next, "the offset of the first item left out")
				} else {
					assert.Empty(t, next, "a page read from a cursor has no offset to tell")
				}
				require.NotEmpty(t, cursor)
				ref, ok := strings.CutSuffix(link, `>; rel="next"`)
				require.True(t, ok, "Link %q", link)
				u, err := url.Parse(strings.TrimPrefix(ref, "<"))
				require.NoError(t, err)
				assert.Equal(t, path, u.Path)
				assert.Equal(t, cursor, u.Query().Get("cursor"))
				assert.False(t, u.Query().Has("offset"), "a cursor replaces the offset")
				assert.Equal(t, "5", u.Query().Get("limit"), "the link keeps the query")
				target = u.RequestURI()
			}
			assert.Equal(t, want, got, "the pages, in order, are the whole page")
			assert.Equal(t, 2, followed, "pages of 2, 2 and 1 items")
		})
	}
}
