package tracing_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refSpan is what the test knows of a span it sent: the independent model the queries are
// checked against.
type refSpan struct {
	id, trace, parent, name, kind, status, errorCode, session string
	tier                                                      string // trace_tags.tier, on roots
	duration, cost                                            *float64
	tags                                                      map[string]string
	created, started                                          time.Time
}

func (s refSpan) hasError() bool { return s.status == "error" || s.errorCode != "" }

// dataset posts 16 traces of 8 spans (4 sessions) in batches created on three different days,
// and returns the model of every span.
func dataset(t *testing.T, api *testAPI) []refSpan {
	rng := rand.New(rand.NewPCG(7, 11))
	names := []string{"retrieve", "rerank", "openai.chat", "tool.search", "format"}
	kinds := []string{"generic", "llm", "http"}
	sessions := []string{uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()}
	base := time.Now().UTC().Add(-50 * time.Hour).Truncate(time.Second)
	var all []refSpan
	for ti := range 16 {
		created := base.Add(time.Duration(ti*3) * time.Hour) // spread over three days
		api.clock.Set(created)
		traceID := uuid.NewString()
		session := sessions[ti%4]
		var body []map[string]any
		var rootID string
		for si := range 8 {
			s := refSpan{
				id: uuid.NewString(), trace: traceID, name: names[rng.IntN(len(names))], kind: kinds[rng.IntN(3)],
				session: session, created: created, started: created.Add(-time.Duration(rng.IntN(3600)) * time.Second),
				tags: map[string]string{"env": []string{"prod", "dev"}[rng.IntN(2)]},
			}
			if si == 0 {
				rootID, s.name = s.id, fmt.Sprintf("request-%d", ti)
			} else {
				s.parent = rootID
			}
			if rng.IntN(3) == 0 {
				s.tags["team"] = []string{"a", "b"}[rng.IntN(2)]
			}
			switch rng.IntN(4) {
			case 0:
				s.status = "error"
			case 1:
				s.status = "ok"
			}
			if rng.IntN(5) == 0 {
				s.errorCode = []string{"E_TIMEOUT", "E_RATE"}[rng.IntN(2)]
			}
			if rng.IntN(4) > 0 {
				d := float64(rng.IntN(5000))
				s.duration = &d
			}
			if rng.IntN(3) == 0 {
				c := float64(rng.IntN(1000)) / 1e5
				s.cost = &c
			}
			span := map[string]any{
				"id": s.id, "trace_id": traceID, "name": s.name, "kind": s.kind, "session_id": session,
				"started_at": s.started.Format(time.RFC3339Nano), "tags": s.tags,
			}
			if s.parent != "" {
				span["parent_span_id"] = s.parent
			} else {
				s.tier = []string{"gold", "silver"}[ti%2]
				span["trace_tags"] = map[string]string{"tier": s.tier}
			}
			if s.status != "" {
				span["status"] = s.status
			}
			if s.errorCode != "" {
				span["error_code"] = s.errorCode
			}
			if s.duration != nil {
				span["duration_ms"] = *s.duration
			}
			if s.cost != nil {
				span["cost"] = *s.cost
			}
			all = append(all, s)
			body = append(body, span)
		}
		slices.Reverse(body) // children before their parent
		res := api.do(t, "POST", "/spans", api.a.key, body)
		require.Equal(t, http.StatusOK, res.status, string(res.raw))
	}
	api.clock.Set(time.Now().UTC())
	return all
}

func TestSpanQueryConformance(t *testing.T) {
	api := newTestAPI(t)
	all := dataset(t, api)
	day2 := all[len(all)/2].created
	someTrace, someSpan, someSession := all[17].trace, all[42].id, all[20].session

	f := func(v float64) *float64 { return &v }
	tests := []struct {
		query  string
		filter func(refSpan) bool
		sortBy string
		asc    bool
		limit  int
		offset int
	}{
		{query: "", filter: nil},
		{query: "span_kind=llm", filter: func(s refSpan) bool { return s.kind == "llm" }},
		{query: "names=retrieve,format", filter: func(s refSpan) bool { return s.name == "retrieve" || s.name == "format" }},
		{query: "error_codes=E_RATE", filter: func(s refSpan) bool { return s.errorCode == "E_RATE" }},
		{query: "has_error=true", filter: refSpan.hasError},
		{query: "has_error=false", filter: func(s refSpan) bool { return !s.hasError() }},
		{query: "duration_min=1000&duration_max=3000", filter: func(s refSpan) bool { return between(s.duration, f(1000), f(3000)) }},
		{query: "cost_min=0.002", filter: func(s refSpan) bool { return between(s.cost, f(0.002), nil) }},
		{query: "cost_max=0.005", filter: func(s refSpan) bool { return between(s.cost, nil, f(0.005)) }},
		{query: "parent_span_id=null", filter: func(s refSpan) bool { return s.parent == "" }},
		{query: "trace_id=" + someTrace, filter: func(s refSpan) bool { return s.trace == someTrace }},
		{query: "id=" + someSpan, filter: func(s refSpan) bool { return s.id == someSpan }},
		{query: "session_id=" + someSession, filter: func(s refSpan) bool { return s.session == someSession }},
		{query: "session_id=" + someSession + "&span_kind=llm&sort_by=started_at", sortBy: "started_at", filter: func(s refSpan) bool { return s.session == someSession && s.kind == "llm" }},
		{query: "session_id=" + someSession + "&trace_id=" + someTrace, filter: func(s refSpan) bool { return s.session == someSession && s.trace == someTrace }},
		{query: "created_after=" + url.QueryEscape(day2.Format(time.RFC3339)), filter: func(s refSpan) bool { return !s.created.Before(day2) }},
		{query: "created_before=" + url.QueryEscape(day2.Format(time.RFC3339)), filter: func(s refSpan) bool { return s.created.Before(day2) }},
		{query: "env=prod", filter: func(s refSpan) bool { return s.tags["env"] == "prod" }},
		{query: "env=dev&team=a", filter: func(s refSpan) bool { return s.tags["env"] == "dev" && s.tags["team"] == "a" }},
		{query: "span_kind=llm&env=prod&has_error=false", filter: func(s refSpan) bool { return s.kind == "llm" && s.tags["env"] == "prod" && !s.hasError() }},
		{query: "limit=7", limit: 7},
		{query: "limit=7&offset=5", limit: 7, offset: 5},
		{query: "offset=1000", offset: 1000},
		{query: "limit=10&offset=3&sort_by=cost&sort_order=asc", sortBy: "cost", asc: true, limit: 10, offset: 3},
	}
	for _, by := range []string{"started_at", "name", "status", "duration_ms", "cost", "kind"} {
		tests = append(tests,
			struct {
				query  string
				filter func(refSpan) bool
				sortBy string
				asc    bool
				limit  int
				offset int
			}{query: "sort_by=" + by, sortBy: by},
			struct {
				query  string
				filter func(refSpan) bool
				sortBy string
				asc    bool
				limit  int
				offset int
			}{query: "sort_by=" + by + "&sort_order=asc", sortBy: by, asc: true})
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var want []refSpan
			for _, s := range all {
				if tt.filter == nil || tt.filter(s) {
					want = append(want, s)
				}
			}
			slices.SortStableFunc(want, func(a, b refSpan) int {
				r := compareRef(a, b, tt.sortBy)
				if !tt.asc {
					r = -r
				}
				return r
			})
			limit := cmp.Or(tt.limit, 5000)
			want = want[min(tt.offset, len(want)):min(len(want), tt.offset+limit)]

			res := api.do(t, "GET", "/spans?"+tt.query, api.a.key, nil)
			require.Equal(t, http.StatusOK, res.status, string(res.raw))
			var got []struct {
				ID string `json:"id"`
			}
			res.decode(t, &got)
			gotIDs := make([]string, len(got))
			for i, g := range got {
				gotIDs[i] = g.ID
			}
			wantIDs := make([]string, len(want))
			for i, w := range want {
				wantIDs[i] = w.id
			}
			assert.Equal(t, wantIDs, gotIDs)
		})
	}
}

func between(v, lo, hi *float64) bool {
	if v == nil {
		return false
	}
	return (lo == nil || *v >= *lo) && (hi == nil || *v <= *hi)
}

// compareRef orders two spans ascending by a sort key: absent values first, then ties by
// creation time, then id (the documented rule).
func compareRef(a, b refSpan, by string) int {
	var r int
	switch by {
	case "":
		r = 0
	case "started_at":
		r = a.started.Compare(b.started)
	case "name":
		r = strings.Compare(a.name, b.name)
	case "status":
		r = strings.Compare(a.status, b.status)
	case "kind":
		r = strings.Compare(a.kind, b.kind)
	case "duration_ms":
		r = compareOpt(a.duration, b.duration)
	case "cost":
		r = compareOpt(a.cost, b.cost)
	}
	if r == 0 {
		r = a.created.Compare(b.created)
	}
	if r == 0 {
		r = strings.Compare(a.id, b.id)
	}
	return r
}

func compareOpt(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Compare(*a, *b)
}

// refTrace is the independent model of a trace, recomputed from its spans.
type refTrace struct {
	id, session, name, status, tier string
	spans, errors                   int
	cost                            float64
	start, created                  time.Time
	end                             *time.Time
}

func (t refTrace) duration() *float64 {
	if t.end == nil {
		return nil
	}
	d := float64(t.end.Sub(t.start).Microseconds()) / 1000
	return &d
}

func refTraces(all []refSpan) []refTrace {
	by := map[string]*refTrace{}
	var order []string
	for _, s := range all {
		t := by[s.trace]
		if t == nil {
			t = &refTrace{id: s.trace, session: s.session, created: s.created, start: s.started}
			by[s.trace] = t
			order = append(order, s.trace)
		}
		t.spans++
		if s.hasError() {
			t.errors++
		}
		if s.cost != nil {
			t.cost += *s.cost
		}
		if s.started.Before(t.start) {
			t.start = s.started
		}
		if s.duration != nil {
			end := s.started.Add(time.Duration(*s.duration * float64(time.Millisecond)))
			if t.end == nil || end.After(*t.end) {
				t.end = &end
			}
		}
		if s.parent == "" {
			t.name, t.status, t.tier = s.name, s.status, s.tier
		}
	}
	out := make([]refTrace, 0, len(order))
	for _, id := range order {
		t := *by[id]
		switch {
		case t.errors > 0:
			t.status = "error"
		case t.status == "":
			t.status = "unset"
		}
		out = append(out, t)
	}
	return out
}

func TestTraceAndSessionQueryConformance(t *testing.T) {
	api := newTestAPI(t)
	traces := refTraces(dataset(t, api))
	day2 := traces[len(traces)/2].created
	f := func(v float64) *float64 { return &v }

	type traceCase struct {
		query  string
		filter func(refTrace) bool
		sortBy string
		asc    bool
		limit  int
		offset int
	}
	tests := []traceCase{
		{query: ""},
		{query: "id=" + traces[3].id, filter: func(r refTrace) bool { return r.id == traces[3].id }},
		{query: "session_id=" + traces[5].session, filter: func(r refTrace) bool { return r.session == traces[5].session }},
		{query: "status=error", filter: func(r refTrace) bool { return r.status == "error" }},
		{query: "status=ok", filter: func(r refTrace) bool { return r.status == "ok" }},
		{query: "has_error=false", filter: func(r refTrace) bool { return r.errors == 0 }},
		{query: "names=request-1,request-4", filter: func(r refTrace) bool { return r.name == "request-1" || r.name == "request-4" }},
		{query: "created_after=" + url.QueryEscape(day2.Format(time.RFC3339)), filter: func(r refTrace) bool { return !r.created.Before(day2) }},
		{query: "created_before=" + url.QueryEscape(day2.Format(time.RFC3339)), filter: func(r refTrace) bool { return r.created.Before(day2) }},
		{query: "duration_min=3000000", filter: func(r refTrace) bool { return between(r.duration(), f(3000000), nil) }},
		{query: "cost_min=0.005&cost_max=0.02", filter: func(r refTrace) bool { return between(&r.cost, f(0.005), f(0.02)) }},
		{query: "tier=gold", filter: func(r refTrace) bool { return r.tier == "gold" }},
		{query: "limit=5&offset=2", limit: 5, offset: 2},
	}
	for _, by := range []string{"started_at", "name", "status", "span_count", "duration_ms", "cost"} {
		tests = append(tests, traceCase{query: "sort_by=" + by, sortBy: by}, traceCase{query: "sort_by=" + by + "&sort_order=asc", sortBy: by, asc: true})
	}
	for _, tt := range tests {
		t.Run("traces?"+tt.query, func(t *testing.T) {
			var want []refTrace
			for _, r := range traces {
				if tt.filter == nil || tt.filter(r) {
					want = append(want, r)
				}
			}
			slices.SortStableFunc(want, func(a, b refTrace) int {
				var r int
				switch tt.sortBy {
				case "started_at":
					r = a.start.Compare(b.start)
				case "name":
					r = strings.Compare(a.name, b.name)
				case "status":
					r = strings.Compare(a.status, b.status)
				case "span_count":
					r = cmp.Compare(a.spans, b.spans)
				case "duration_ms":
					r = compareOpt(a.duration(), b.duration())
				case "cost":
					r = cmp.Compare(a.cost, b.cost)
				}
				if r == 0 {
					r = a.created.Compare(b.created)
				}
				if r == 0 {
					r = strings.Compare(a.id, b.id)
				}
				if !tt.asc {
					r = -r
				}
				return r
			})
			want = want[min(tt.offset, len(want)):min(len(want), tt.offset+cmp.Or(tt.limit, 50))]
			res := api.do(t, "GET", "/traces?"+tt.query, api.a.key, nil)
			require.Equal(t, http.StatusOK, res.status, string(res.raw))
			var got []struct {
				ID         string   `json:"id"`
				SpanCount  int      `json:"span_count"`
				Cost       float64  `json:"cost"`
				Status     string   `json:"status"`
				DurationMS *float64 `json:"duration_ms"`
			}
			res.decode(t, &got)
			require.Len(t, got, len(want))
			for i, w := range want {
				assert.Equal(t, w.id, got[i].ID, "position %d", i)
				assert.Equal(t, w.spans, got[i].SpanCount)
				assert.InDelta(t, w.cost, got[i].Cost, 1e-9)
				assert.Equal(t, w.status, got[i].Status)
				assert.InDelta(t, *w.duration(), *got[i].DurationMS, 1e-6)
			}
		})
	}

	// Sessions: each has four traces; their aggregates add up.
	type refSession struct {
		id             string
		traces, errors int
		cost           float64
		start, created time.Time
		end            time.Time
	}
	sessions := map[string]*refSession{}
	for _, r := range traces {
		s := sessions[r.session]
		if s == nil {
			s = &refSession{id: r.session, start: r.start, created: r.created, end: *r.end}
			sessions[r.session] = s
		}
		s.traces++
		s.errors += r.errors
		s.cost += r.cost
		if r.start.Before(s.start) {
			s.start = r.start
		}
		if r.end.After(s.end) {
			s.end = *r.end
		}
	}
	for _, sortBy := range []string{"", "trace_count", "cost", "duration", "created_at", "name"} {
		t.Run("sessions?sort_by="+sortBy, func(t *testing.T) {
			var want []*refSession
			for _, s := range sessions {
				want = append(want, s)
			}
			slices.SortFunc(want, func(a, b *refSession) int {
				var r int
				switch sortBy {
				case "trace_count":
					r = cmp.Compare(a.traces, b.traces)
				case "cost":
					r = cmp.Compare(a.cost, b.cost)
				case "duration":
					r = cmp.Compare(a.end.Sub(a.start), b.end.Sub(b.start))
				}
				if r == 0 {
					r = a.created.Compare(b.created)
				}
				if r == 0 {
					r = strings.Compare(a.id, b.id)
				}
				return -r
			})
			res := api.do(t, "GET", "/sessions?sort_by="+sortBy, api.a.key, nil)
			require.Equal(t, http.StatusOK, res.status, string(res.raw))
			var got []struct {
				ID         string  `json:"id"`
				TraceCount int     `json:"trace_count"`
				ErrorCount int     `json:"error_count"`
				Cost       float64 `json:"cost"`
				Duration   float64 `json:"duration"`
			}
			res.decode(t, &got)
			require.Len(t, got, len(want))
			for i, w := range want {
				assert.Equal(t, w.id, got[i].ID, "position %d", i)
				assert.Equal(t, w.traces, got[i].TraceCount)
				assert.Equal(t, w.errors, got[i].ErrorCount)
				assert.InDelta(t, w.cost, got[i].Cost, 1e-9)
				assert.InDelta(t, float64(w.end.Sub(w.start).Microseconds())/1000, got[i].Duration, 1e-6)
			}
		})
	}
	res := api.do(t, "GET", "/sessions?id="+traces[0].session+"&has_error=true", api.a.key, nil)
	require.Equal(t, http.StatusOK, res.status)
}
