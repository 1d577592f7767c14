package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/plumehq/plume/api"
)

// fixture is what the queries name: ids of the first step's data and its time window.
type fixture struct {
	project, judge       string
	sample               sample
	bigTrace, bigSession string
	windowFrom, windowTo time.Time // an hour of the first step's data
	now                  func() time.Time
	dashboardCookie      string
}

// query is one measured request (or a walk of a few pages, following each answer's cursor).
type query struct {
	name   string
	target func(f fixture) string
	// pages > 1 walks that many pages of a list by its cursor.
	pages int
	// method and body for the requests that are not GETs (MCP).
	method string
	body   func(f fixture) []byte
	header func(f fixture) http.Header
}

// queries are the queries measured, in the order printed: every list shape of issue 27 (the
// default, each filter family, each sort key both ways, an offset, a cursor walk, a tag
// filter), then the metrics, a big trace's tree, unified feedback, a judge's evaluations, the
// dashboard's overview and MCP's project summary.
func queries() []query {
	var qs []query
	get := func(name string, target func(f fixture) string) {
		qs = append(qs, query{name: name, target: target})
	}
	list := func(path, name, params string) {
		get(path+" "+name, func(fixture) string { return path + params })
	}
	window := func(f fixture) string {
		return "created_after=" + url.QueryEscape(f.windowFrom.Format(time.RFC3339)) + "&created_before=" + url.QueryEscape(f.windowTo.Format(time.RFC3339))
	}

	// GET /spans
	list("/spans", "default (limit 5000)", "")
	list("/spans", "limit=50", "?limit=50")
	get("/spans id", func(f fixture) string { return "/spans?id=" + f.sample.span })
	get("/spans trace_id", func(f fixture) string { return "/spans?trace_id=" + f.sample.trace })
	get("/spans session_id", func(f fixture) string { return "/spans?session_id=" + f.sample.session })
	list("/spans", "parent_span_id=null", "?parent_span_id=null&limit=50")
	get("/spans parent_span_id", func(f fixture) string { return "/spans?limit=50&parent_span_id=" + f.sample.root })
	list("/spans", "span_kind=llm", "?span_kind=llm&limit=50")
	get("/spans created window", func(f fixture) string { return "/spans?limit=50&" + window(f) })
	list("/spans", "names", "?names=tool.weather&limit=50")
	list("/spans", "error_codes", "?error_codes=timeout&limit=50")
	list("/spans", "has_error", "?has_error=true&limit=50")
	list("/spans", "duration_min", "?duration_min=3900&limit=50")
	list("/spans", "cost range", "?cost_min=0.004&cost_max=1&limit=50")
	list("/spans", "tag env=staging", "?env=staging&limit=50")
	list("/spans", "llm by cost", "?span_kind=llm&sort_by=cost&limit=20")
	for _, k := range []string{"started_at", "name", "status", "duration_ms", "cost", "kind"} {
		for _, o := range []string{"desc", "asc"} {
			list("/spans", "sort "+k+" "+o, "?limit=20&sort_by="+k+"&sort_order="+o)
		}
	}
	list("/spans", "offset=1000", "?limit=20&offset=1000")
	qs = append(qs, query{name: "/spans cursor walk 5x20", target: func(fixture) string { return "/spans?limit=20" }, pages: 5})

	// GET /traces
	list("/traces", "default (limit 50)", "")
	get("/traces id", func(f fixture) string { return "/traces?id=" + f.sample.trace })
	get("/traces session_id", func(f fixture) string { return "/traces?session_id=" + f.sample.session })
	list("/traces", "status=error", "?status=error&limit=50")
	get("/traces created window", func(f fixture) string { return "/traces?limit=50&" + window(f) })
	list("/traces", "names", "?names=rag.answer&limit=50")
	list("/traces", "has_error", "?has_error=true&limit=50")
	list("/traces", "duration_min", "?duration_min=25000&limit=50")
	list("/traces", "cost range", "?cost_min=0.02&cost_max=100&limit=50")
	list("/traces", "tag env=staging", "?env=staging&limit=50")
	for _, k := range []string{"started_at", "name", "status", "span_count", "duration_ms", "cost"} {
		for _, o := range []string{"desc", "asc"} {
			list("/traces", "sort "+k+" "+o, "?limit=20&sort_by="+k+"&sort_order="+o)
		}
	}
	list("/traces", "offset=100", "?limit=20&offset=100")
	qs = append(qs, query{name: "/traces cursor walk 5x20", target: func(fixture) string { return "/traces?limit=20" }, pages: 5})

	// GET /sessions
	list("/sessions", "default (limit 50)", "")
	get("/sessions id", func(f fixture) string { return "/sessions?id=" + f.sample.session })
	get("/sessions created window", func(f fixture) string { return "/sessions?limit=50&" + window(f) })
	list("/sessions", "has_error", "?has_error=true&limit=50")
	list("/sessions", "duration_min", "?duration_min=20000&limit=50")
	list("/sessions", "cost range", "?cost_min=0.05&cost_max=100&limit=50")
	list("/sessions", "tag plan=pro", "?plan=pro&limit=50")
	for _, k := range []string{"created_at", "name", "trace_count", "cost", "duration"} {
		for _, o := range []string{"desc", "asc"} {
			list("/sessions", "sort "+k+" "+o, "?limit=20&sort_by="+k+"&sort_order="+o)
		}
	}
	list("/sessions", "offset=100", "?limit=20&offset=100")
	qs = append(qs, query{name: "/sessions cursor walk 5x20", target: func(fixture) string { return "/sessions?limit=20" }, pages: 5})

	// The rest of issue 27's list.
	metrics := func(bucket string) func(f fixture) string {
		return func(f fixture) string {
			to := f.now()
			return "/projects/" + f.project + "/metrics?bucket=" + bucket + "&from=" + url.QueryEscape(to.Add(-30*24*time.Hour).Format(time.RFC3339)) +
				"&to=" + url.QueryEscape(to.Format(time.RFC3339))
		}
	}
	get("metrics 30d by hour", metrics("hour"))
	get("metrics 30d by day", metrics("day"))
	get("tree of the big trace, first page", func(f fixture) string { return "/traces/" + f.bigTrace + "/tree" })
	get("tree of the big trace, page at 500", func(f fixture) string { return "/traces/" + f.bigTrace + "/tree?offset=500" })
	get("unified feedback of the big session", func(f fixture) string { return "/projects/" + f.project + "/feedback/session/" + f.bigSession })
	get("unified feedback of the big trace", func(f fixture) string { return "/projects/" + f.project + "/feedback/trace/" + f.bigTrace })
	get("judge evaluations (default)", func(f fixture) string { return "/projects/" + f.project + "/judges/" + f.judge + "/evaluations" })
	qs = append(qs, query{name: "dashboard overview 30d", target: func(fixture) string { return "/ui/?range=30d" },
		header: func(f fixture) http.Header { return http.Header{"Cookie": {f.dashboardCookie}} }})
	qs = append(qs, query{name: "MCP get-project-summary 720h", target: func(fixture) string { return "/mcp" }, method: http.MethodPost,
		body: func(fixture) []byte {
			return mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
				"params": map[string]any{"name": "get-project-summary", "arguments": map[string]any{"window_hours": 720}}})
		},
		header: func(fixture) http.Header { return http.Header{"Accept": {"application/json, text/event-stream"}} }})
	return qs
}

// measure is a query's figures at one size.
type measure struct {
	Status    int           `json:"status"`
	Cost      cost          `json:"dynamodb"`
	S3        s3Snapshot    `json:"s3"`
	Bytes     int           `json:"bytes"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	Items     int           `json:"items"`
	Pages     int           `json:"pages"`
	Scanned   string        `json:"scanned,omitempty"`
	Truncated bool          `json:"truncated,omitempty"`
	More      bool          `json:"more,omitempty"` // a cursor to read on
	Error     string        `json:"error,omitempty"`
}

// measureQuery runs q alone in a phase of ddbtap's log of its own and sums what it cost.
func measureQuery(ctx context.Context, p *plume, t *tap, q query, f fixture, phase string) (measure, error) {
	if err := t.phase(ctx, phase); err != nil {
		return measure{}, err
	}
	s3Before := p.s3.snapshot()
	var m measure
	target := q.target(f)
	method := q.method
	if method == "" {
		method = http.MethodGet
	}
	for page := 0; page < max(q.pages, 1); page++ {
		var body []byte
		if q.body != nil {
			body = q.body(f)
		}
		var header http.Header
		if q.header != nil {
			header = q.header(f)
		}
		res := p.do(ctx, method, target, body, header)
		m.Pages++
		m.Status = res.status
		m.Bytes += len(res.body)
		m.Elapsed += res.elapsed
		m.Items += countItems(res.body)
		if s := res.header.Get(api.ScannedHeader); s != "" {
			m.Scanned = s
		}
		m.Truncated = m.Truncated || res.header.Get(api.ScanTruncatedHeader) == "true"
		cursor := res.header.Get(api.NextCursorHeader)
		m.More = cursor != ""
		if res.status != http.StatusOK || bytes.Contains(res.body, []byte(`"isError":true`)) {
			m.Error = fmt.Sprintf("%d %.200s", res.status, res.body)
			break
		}
		if cursor == "" {
			break
		}
		target = withCursor(q.target(f), cursor)
	}
	m.S3 = p.s3.snapshot().since(s3Before)
	if err := t.phase(ctx, "idle"); err != nil {
		return measure{}, err
	}
	c, err := t.cost(phase)
	m.Cost = c
	return m, err
}

func withCursor(target, cursor string) string {
	sep := "?"
	if bytes.ContainsRune([]byte(target), '?') {
		sep = "&"
	}
	return target + sep + "cursor=" + url.QueryEscape(cursor)
}

// countItems is how many records an answer holds when it is a JSON array (a list), else 0.
func countItems(body []byte) int {
	var items []json.RawMessage
	if len(body) == 0 || body[0] != '[' || json.Unmarshal(body, &items) != nil {
		return 0
	}
	return len(items)
}
