package api

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListQueryRoundTrip: what a client encodes (Values) the server parses back (Parse*) as
// it was sent.
func TestListQueryRoundTrip(t *testing.T) {
	id := "0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f"
	common := ListQuery{
		CreatedBefore: "2026-01-02T03:04:05Z", CreatedAfter: "1767225600", Names: []string{"chat", "search"},
		HasError: new(false), DurationMin: new(1.5), DurationMax: new(2e3), CostMin: new(0.0), CostMax: new(0.25),
		SortBy: "cost", SortOrder: SortAsc, Limit: 7, Offset: 3, Tags: map[string]string{"env": "prod", "user id": "a,b"},
	}
	t.Run("spans", func(t *testing.T) {
		for _, q := range []SpanQuery{
			{ListQuery: common, ID: id, TraceID: id, SessionID: id, ParentSpanID: new(id), SpanKind: SpanKindTool, ErrorCodes: []string{"E1", "E2"}},
			{ListQuery: ListQuery{Limit: 1}, ParentSpanID: new("")},
		} {
			got, err := ParseSpanQuery(q.Values())
			require.NoError(t, err)
			assert.Equal(t, q, got)
		}
	})
	t.Run("traces", func(t *testing.T) {
		q := TraceQuery{ListQuery: common, ID: id, SessionID: id, Status: "error"}
		got, err := ParseTraceQuery(q.Values())
		require.NoError(t, err)
		assert.Equal(t, q, got)
	})
	t.Run("sessions", func(t *testing.T) {
		q := SessionQuery{ListQuery: common, ID: id}
		q.SortBy = "trace_count"
		got, err := ParseSessionQuery(q.Values())
		require.NoError(t, err)
		assert.Equal(t, q, got)
	})
	t.Run("defaults", func(t *testing.T) {
		got, err := ParseSpanQuery(nil)
		require.NoError(t, err)
		assert.Equal(t, SpanQuery{ListQuery: ListQuery{Limit: SpanList.Limits.Default}}, got)
		traces, err := ParseTraceQuery(url.Values{"limit": {" 500 "}, "sort_order": {"DESC"}, "names": {"a, b", "c"}})
		require.NoError(t, err)
		assert.Equal(t, TraceQuery{ListQuery: ListQuery{Limit: 500, SortOrder: SortDesc, Names: []string{"a", "b", "c"}}}, traces)
	})
}

// TestParseListQueryRefuses: a value the server cannot use is an *InvalidError naming the
// parameter, as the error body says it.
func TestParseListQueryRefuses(t *testing.T) {
	tags := url.Values{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u"} {
		tags.Set(k, "1")
	}
	tests := []struct {
		name    string
		parse   func(url.Values) error
		q       url.Values
		message string
	}{
		{"uuid", spans, url.Values{"trace_id": {"abc"}}, `trace_id must be a UUID, not "abc"`},
		{"parent", spans, url.Values{"parent_span_id": {"none"}}, `parent_span_id must be a UUID, not "none"`},
		{"number", traces, url.Values{"cost_min": {"cheap"}}, `cost_min must be a number, not "cheap"`},
		{"boolean", sessions, url.Values{"has_error": {"maybe"}}, `has_error must be true or false, not "maybe"`},
		{"limit over the list's", traces, url.Values{"limit": {"501"}}, `limit must be an integer from 1 to 500, not "501"`},
		{"limit of spans", spans, url.Values{"limit": {"0"}}, `limit must be an integer from 1 to 10000, not "0"`},
		{"offset", spans, url.Values{"offset": {"-1"}}, `offset must be an integer from 0 to 1000000, not "-1"`},
		{"sort key of another list", traces, url.Values{"sort_by": {"kind"}}, `sort_by must be one of started_at, name, status, span_count, duration_ms, cost, not "kind"`},
		{"sort order", sessions, url.Values{"sort_order": {"up"}}, `sort_order must be asc or desc, not "up"`},
		{"cursor with offset", traces, url.Values{"cursor": {"o5"}, "offset": {"5"}}, `cursor and offset cannot be combined: a cursor continues where its answer ended`},
		{"cursor too long", spans, url.Values{"cursor": {strings.Repeat("c", MaxCursorBytes+1)}}, `cursor must be at most 1024 bytes, as an answer's X-Plume-Next-Cursor gives it`},
		{"tags", spans, tags, "at most 20 tag filters (query parameters other than the route's own), not 21"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.parse(tt.q)
			var invalid *InvalidError
			require.True(t, errors.As(err, &invalid), "error: %v", err)
			assert.Equal(t, tt.message, invalid.Message)
		})
	}
}

func spans(q url.Values) error    { _, err := ParseSpanQuery(q); return err }
func traces(q url.Values) error   { _, err := ParseTraceQuery(q); return err }
func sessions(q url.Values) error { _, err := ParseSessionQuery(q); return err }

// TestTagFilters: every parameter that is not the list's own is a tag filter, whatever list
// owns it elsewhere.
func TestTagFilters(t *testing.T) {
	q := url.Values{"env": {"prod"}, "span_kind": {"llm"}, "limit": {"3"}, "status": {"ok"}}
	assert.Equal(t, []string{"env", "span_kind"}, TagFilters(TraceList, q))
	assert.Equal(t, []string{"env", "status"}, TagFilters(SpanList, q))
}

// FuzzCanonicalUUID holds the query parser's UUID reading (stdlib only, so that any client
// may import package api) equal to github.com/google/uuid's, which the server read ids with
// before: the same inputs accepted, answered in the same form.
func FuzzCanonicalUUID(f *testing.F) {
	for _, s := range []string{
		"0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f", "0192F5D4-7C1E-7A3B-9F00-5A1C2E3D4B5F", "0192f5d47c1e7a3b9f005a1c2e3d4b5f",
		"{0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f}", "urn:uuid:0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f",
		"URN:UUID:0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f", "(0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f)",
		"0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5", "0192f5d4_7c1e_7a3b_9f00_5a1c2e3d4b5f", "0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5g",
		"0192f5d47c1e7a3b9f005a1c2e3d4b5-", "--------------------------------", "0192f5d4-7c1e-7a3b-9f0-05a1c2e3d4b5f",
		"", "abc", "00000000-0000-0000-0000-000000000000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := canonicalUUID(s)
		want, err := uuid.Parse(s)
		if ok != (err == nil) {
			t.Fatalf("canonicalUUID(%q) ok=%v, uuid.Parse error %v", s, ok, err)
		}
		if ok && got != want.String() {
			t.Fatalf("canonicalUUID(%q) = %q, uuid.Parse %q", s, got, want.String())
		}
	})
}
