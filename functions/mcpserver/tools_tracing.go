package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// Bounds of the tracing tools' answers: an agent's context is small, a trace can be large.
const (
	defaultTraceLimit = 20
	maxTraceLimit     = 100
	defaultSpanLimit  = 100
	maxSpanLimit      = 500
	// listTextLimit cuts the root span input and output of each trace of list-traces.
	listTextLimit = 500
	// spanTextLimit cuts a span's input_data, output_data and error_stack in get-trace.
	spanTextLimit = 2000
	// attributesLimit is the most bytes of a span's attributes get-trace answers; larger
	// attributes are replaced with a note of their size.
	attributesLimit = 4000
)

// ListTracesInput filters and pages the project's traces: the query of GET /traces, whose
// properties the tool's schema describes as api.TraceList does (describeQuery). The page size
// is the tool's own: up to maxTraceLimit, defaultTraceLimit when not given.
type ListTracesInput struct {
	api.TraceQuery
}

// ListTracesOutput is list-traces' answer.
type ListTracesOutput struct {
	Traces []api.Trace `json:"traces" jsonschema:"this page of traces, with their aggregates (cost in USD, span_count, error_count, status); root_span_input and root_span_output cut at 500 characters"`
	Limit  int         `json:"limit" jsonschema:"the page size used"`
	// NextCursor is the API's X-Plume-Next-Cursor, null on the last page.
	NextCursor *string `json:"next_cursor" jsonschema:"the cursor of the next page: call list-traces again with cursor set to it and the same filters and sort; null when the list has ended"`
	// Partial is the client's ListInfo.Cut: fewer traces than limit, more to follow.
	Partial        bool `json:"partial" jsonschema:"true when this page holds fewer traces than limit though more follow (the API cut it by size, or ended it at its bound on one request's work): next_cursor reads on"`
	TruncatedTexts int  `json:"truncated_texts" jsonschema:"how many root span inputs and outputs were cut; each ends with a [truncated ...] marker, and get-trace shows more"`
	// Truncated is the API's X-Plume-Scan-Truncated.
	Truncated bool   `json:"truncated" jsonschema:"true when the API stopped at its scan bound (10,000 traces examined): the list, every page of it, covers only the newest traces of the time window and may miss older matches; narrow created_after and created_before to reach them"`
	Scanned   int    `json:"scanned" jsonschema:"how many traces the API examined for this page"`
	Note      string `json:"note,omitempty" jsonschema:"what the list lacks and how to get it, when it is partial"`
}

// GetTraceInput names a trace and a page of its spans.
type GetTraceInput struct {
	TraceID    string `json:"trace_id" jsonschema:"the trace's id (a UUID), as list-traces answers it"`
	SpanLimit  int    `json:"span_limit,omitempty" jsonschema:"spans per page, in start order: 1 to 500, default 100"`
	SpanCursor string `json:"span_cursor,omitempty" jsonschema:"next_span_cursor of the previous page: the page of spans after it"`
	SpanOffset int    `json:"span_offset,omitempty" jsonschema:"spans to skip, to start from a given span (not with span_cursor)"`
}

// GetTraceOutput is get-trace's answer: the trace and a page of its span tree.
type GetTraceOutput struct {
	Trace api.Trace   `json:"trace" jsonschema:"the trace with its aggregates"`
	Spans []TraceSpan `json:"spans" jsonschema:"this page of the trace's spans as a tree, depth first: each span follows its parent, siblings in start order; depth 0 is a root, or a span whose parent is not on this page"`
	// SpanCount is the trace's aggregate, not the page's.
	SpanCount      int     `json:"span_count" jsonschema:"the trace's number of spans in all"`
	SpanLimit      int     `json:"span_limit" jsonschema:"the page size used"`
	Truncated      bool    `json:"truncated" jsonschema:"true when spans of the trace may follow this page: call get-trace again with span_cursor set to next_span_cursor"`
	NextSpanCursor *string `json:"next_span_cursor" jsonschema:"span_cursor of the next page; null when this is the last page"`
	TruncatedTexts int     `json:"truncated_texts" jsonschema:"how many span fields of this page were cut (see each span's truncated_fields)"`
	// ScanTruncated is the API's X-Plume-Scan-Truncated on the trace's spans.
	ScanTruncated bool   `json:"scan_truncated" jsonschema:"true when the API stopped at its scan bound (50,000 spans of the trace examined): the spans listed are not all of the trace's"`
	Note          string `json:"note,omitempty" jsonschema:"what the span list lacks, when it is partial"`
}

// TraceSpan is a span of get-trace: the span as GET /spans answers it, with its place in the
// tree.
type TraceSpan struct {
	api.Span
	Depth           int      `json:"depth" jsonschema:"0 for a root span, 1 for its children, and so on"`
	ChildSpanIDs    []string `json:"child_span_ids" jsonschema:"the ids of this span's children on this page, in start order"`
	TruncatedFields []string `json:"truncated_fields,omitempty" jsonschema:"the fields cut to keep the answer small: input_data, output_data, error_stack (each ending with a [truncated ...] marker) or attributes (replaced with a note of their size)"`
}

// traceTools are the read tools of traces and spans.
func (s *server) traceTools() []tool {
	list := newTool(s, &mcp.Tool{Name: "list-traces",
		Description: "List the project's traces, newest first unless sorted otherwise, with the filters of GET /traces " +
			"(session, status, names, errors, creation time, duration, cost, tags) and paging (limit up to 100; next_cursor, null on the last page, is the cursor of the next). " +
			"Without created_after the API looks back 30 days, and examines at most 10,000 traces: truncated (and note) says when it " +
			"stopped there, so that the list may miss older matches; narrow created_after and created_before to reach them. " +
			"Each trace carries its cost, span and error counts; " +
			"root span input and output are cut at 500 characters (get-trace shows a trace's spans).",
		Annotations: readOnly("List traces")},
		withEmptyMaps(listTraces))
	inferred := list.schemas
	list.schemas = func() (*jsonschema.Schema, *jsonschema.Schema) {
		in, out := inferred()
		describeQuery(in, api.TraceList, map[string]string{
			api.ParamLimit:  fmt.Sprintf("traces per page: 1 to %d, default %d", maxTraceLimit, defaultTraceLimit),
			api.ParamOffset: "traces to skip, to start at a given place (not with cursor)",
			api.ParamCursor: "next_cursor of the previous page: the page after it (with the same filters and sort, and no offset)",
		})
		return in, out
	}
	return []tool{
		list,
		newTool(s, &mcp.Tool{Name: "get-trace",
			Description: "Read a trace and its span tree: the spans nested by parent_span_id (depth first, with depth and child ids), " +
				"paged in start order (span_limit up to 500; truncated and next_span_cursor, the span_cursor of the next page, say when there are more; " +
				"scan_truncated when the API stopped at its bound of 50,000 spans). " +
				"Span input, output and error stack are cut at 2,000 characters and attributes over 4,000 bytes are replaced, " +
				"each said in the span's truncated_fields.",
			Annotations: readOnly("Get a trace with its spans")},
			withEmptyMaps(getTrace)),
	}
}

// describeQuery describes the properties of a list query's input schema s: each as list's
// parameter of its name, the tags as tag filters, and those of own as the tool decides them.
func describeQuery(s *jsonschema.Schema, list api.List, own map[string]string) {
	for _, p := range list.Params {
		if ps := s.Properties[p.Name]; ps != nil {
			ps.Description = p.Doc
		}
	}
	s.Properties["tags"].Description = api.TagsDoc
	for name, doc := range own {
		s.Properties[name].Description = doc
	}
}

func listTraces(ctx context.Context, c *client.Client, in ListTracesInput) (ListTracesOutput, error) {
	limit, err := pageSize("limit", in.Limit, defaultTraceLimit, maxTraceLimit)
	if err != nil {
		return ListTracesOutput{}, err
	}
	if in.Offset < 0 {
		return ListTracesOutput{}, errInput("offset must be 0 or more, not %d", in.Offset)
	}
	for k := range in.Tags {
		if _, own := api.TraceList.Param(k); own {
			return ListTracesOutput{}, errInput("tags: %q is a filter of its own, not a tag that can be filtered on", k)
		}
	}
	q := in.TraceQuery
	q.Limit = limit
	traces, info, err := c.TracesPage(ctx, q)
	if err != nil {
		return ListTracesOutput{}, err
	}
	if len(traces) == 0 && in.SessionID != "" && in.Offset == 0 && in.Cursor == "" {
		// A session of another project filters to nothing: say so rather than answer [].
		if err := sessionExists(ctx, c, in.SessionID); err != nil {
			return ListTracesOutput{}, err
		}
	}
	out := ListTracesOutput{Traces: traces, Limit: limit, NextCursor: cursorOf(info), Partial: info.Cut, Truncated: info.Truncated,
		Scanned: info.Scanned}
	var notes []string
	if out.Truncated {
		notes = append(notes, fmt.Sprintf("Partial list: the API stopped after examining %d traces (its scan bound), so traces older than those "+
			"examined are missing from every page, whatever the cursor or offset. Narrow the time window with created_after and "+
			"created_before (a created_before earlier than the oldest trace listed reaches further back).", info.Scanned))
	}
	if out.Partial {
		notes = append(notes, fmt.Sprintf("Partial page: the API answered %d of the %d traces asked (it cut its answer by size, or ended it "+
			"early) and more follow: call list-traces again with cursor set to next_cursor.", len(traces), limit))
	}
	out.Note = strings.Join(notes, " ")
	if out.Traces == nil {
		out.Traces = []api.Trace{}
	}
	cuts := make([]int, len(out.Traces)) // texts cut per trace
	for i := range out.Traces {
		var cut bool
		if out.Traces[i].RootSpanInput, cut = cutText(out.Traces[i].RootSpanInput, listTextLimit); cut {
			cuts[i]++
		}
		if out.Traces[i].RootSpanOutput, cut = cutText(out.Traces[i].RootSpanOutput, listTextLimit); cut {
			cuts[i]++
		}
	}
	// A page whose answer would pass the tool's limit (traces with many long tags) holds fewer
	// traces and says where the rest starts.
	traces = out.Traces
	page, err := fitPage(len(traces), func(n int) ListTracesOutput {
		page := out
		page.Traces, page.TruncatedTexts = traces[:n], 0
		for _, c := range cuts[:n] {
			page.TruncatedTexts += c
		}
		return page
	})
	if n := len(page.Traces); err == nil && n < len(traces) {
		// The cursor after the page's last trace: that of the same page asked n long.
		q.Limit = n
		_, info, err := c.TracesPage(ctx, q)
		if err != nil {
			return ListTracesOutput{}, err
		}
		page.NextCursor, page.Partial = cursorOf(info), true
	}
	return page, err
}

// sessionExists answers a not-found error when the key's project has no session id.
func sessionExists(ctx context.Context, c *client.Client, id string) error {
	sessions, err := c.Sessions(ctx, api.SessionQuery{ID: id})
	if err != nil {
		return err
	}
	if len(sessions) == 0 {
		return errNotFound("session %s not found", id)
	}
	return nil
}

func getTrace(ctx context.Context, c *client.Client, in GetTraceInput) (GetTraceOutput, error) {
	limit, err := pageSize("span_limit", in.SpanLimit, defaultSpanLimit, maxSpanLimit)
	if err != nil {
		return GetTraceOutput{}, err
	}
	if in.SpanOffset < 0 {
		return GetTraceOutput{}, errInput("span_offset must be 0 or more, not %d", in.SpanOffset)
	}
	if err := requireID("trace_id", in.TraceID, "list-traces"); err != nil {
		return GetTraceOutput{}, err
	}
	traces, err := c.Traces(ctx, api.TraceQuery{ID: in.TraceID})
	if err != nil {
		return GetTraceOutput{}, err
	}
	if len(traces) == 0 {
		return GetTraceOutput{}, errNotFound("trace %s not found", in.TraceID)
	}
	spans, info, err := c.SpansPage(ctx, api.SpanQuery{TraceID: in.TraceID, ListQuery: api.ListQuery{
		SortBy: "started_at", SortOrder: api.SortAsc, Limit: limit, Offset: in.SpanOffset, Cursor: in.SpanCursor}})
	if err != nil {
		return GetTraceOutput{}, err
	}
	out := GetTraceOutput{Trace: traces[0], SpanCount: traces[0].SpanCount, SpanLimit: limit, ScanTruncated: info.Truncated,
		NextSpanCursor: cursorOf(info)}
	out.Truncated = out.NextSpanCursor != nil
	if out.ScanTruncated {
		out.Note = fmt.Sprintf("Partial span list: the API stopped after examining %d spans of the trace (its scan bound); "+
			"the trace has %d spans in all, and those not examined are on no page.", info.Scanned, out.SpanCount)
	}
	out.Trace.RootSpanInput, _ = cutText(out.Trace.RootSpanInput, listTextLimit)
	out.Trace.RootSpanOutput, _ = cutText(out.Trace.RootSpanOutput, listTextLimit)
	// A page whose answer would pass the tool's limit holds the first spans (by start) that
	// fit, drawn as a tree of their own, and says where the rest starts.
	page, err := fitPage(len(spans), func(n int) GetTraceOutput {
		page := out
		page.Spans, page.TruncatedTexts = spanTree(spans[:n]), 0
		for i := range page.Spans {
			page.TruncatedTexts += cutSpan(&page.Spans[i])
		}
		return page
	})
	if n := len(page.Spans); err == nil && n < len(spans) {
		// The cursor after the page's last span: that of the same page asked n long.
		_, info, err := c.SpansPage(ctx, api.SpanQuery{TraceID: in.TraceID, ListQuery: api.ListQuery{
			SortBy: "started_at", SortOrder: api.SortAsc, Limit: n, Offset: in.SpanOffset, Cursor: in.SpanCursor}})
		if err != nil {
			return GetTraceOutput{}, err
		}
		page.Truncated, page.NextSpanCursor = true, cursorOf(info)
	}
	return page, err
}

// spanTree orders spans (sorted by start) depth first from their roots: a span whose parent
// is not among them is a root. A cycle of parents (bad data) is broken where it is met.
func spanTree(spans []api.Span) []TraceSpan {
	byID := make(map[string]bool, len(spans))
	for _, sp := range spans {
		byID[sp.ID] = true
	}
	children := map[string][]int{}
	var roots []int
	for i, sp := range spans {
		if sp.ParentSpanID != nil && byID[*sp.ParentSpanID] && *sp.ParentSpanID != sp.ID {
			children[*sp.ParentSpanID] = append(children[*sp.ParentSpanID], i)
		} else {
			roots = append(roots, i)
		}
	}
	out := make([]TraceSpan, 0, len(spans))
	visited := make([]bool, len(spans))
	var walk func(i, depth int)
	walk = func(i, depth int) {
		if visited[i] {
			return
		}
		visited[i] = true
		ts := TraceSpan{Span: spans[i], Depth: depth, ChildSpanIDs: []string{}}
		for _, ch := range children[spans[i].ID] {
			ts.ChildSpanIDs = append(ts.ChildSpanIDs, spans[ch].ID)
		}
		out = append(out, ts)
		for _, ch := range children[spans[i].ID] {
			walk(ch, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	for i := range spans { // spans of a parent cycle: no root reaches them
		walk(i, 0)
	}
	return out
}

// cutSpan truncates the large fields of a span and answers how many it cut.
func cutSpan(ts *TraceSpan) int {
	for _, f := range []struct {
		name string
		v    **string
	}{{"input_data", &ts.InputData}, {"output_data", &ts.OutputData}, {"error_stack", &ts.ErrorStack}} {
		var cut bool
		if *f.v, cut = cutText(*f.v, spanTextLimit); cut {
			ts.TruncatedFields = append(ts.TruncatedFields, f.name)
		}
	}
	if len(ts.Attributes) > attributesLimit {
		ts.Attributes = fmt.Appendf(nil, `{"truncated":"the attributes are %d bytes; read the span whole with GET /spans?id=%s"}`,
			len(ts.Attributes), url.QueryEscape(ts.ID))
		ts.TruncatedFields = append(ts.TruncatedFields, "attributes")
	}
	return len(ts.TruncatedFields)
}

// cutText cuts s to its first max characters followed by a marker that says so.
func cutText(s *string, max int) (*string, bool) {
	if s == nil {
		return nil, false
	}
	n := utf8.RuneCountInString(*s)
	if n <= max {
		return s, false
	}
	i, count := 0, 0
	for i = range *s {
		if count == max {
			break
		}
		count++
	}
	cut := fmt.Sprintf("%s… [truncated: %d of %d characters shown]", (*s)[:i], max, n)
	return &cut, true
}

// cursorOf is the cursor that continues a list after an answer, nil when the list has ended.
// The tools call their own deployment's API, which answers cursors (never only a next offset,
// as a server older than them does).
func cursorOf(info client.ListInfo) *string {
	if info.NextCursor == "" {
		return nil
	}
	return &info.NextCursor
}

// pageSize is a page size of an input: def when not given, else from 1 to max.
func pageSize(name string, limit, def, max int) (int, error) {
	switch {
	case limit == 0:
		return def, nil
	case limit < 1 || limit > max:
		return 0, errInput("%s must be from 1 to %d, not %d", name, max, limit)
	}
	return limit, nil
}

// nextPage is the offset of the page after one of n records at offset, nil when a page
// shorter than limit was the last.
func nextPage(offset, limit, n int) *int {
	if n < limit {
		return nil
	}
	return new(offset + limit)
}

// withEmptyMaps wraps a read tool's handler: the output schemas inferred from Go types take a
// map for a JSON object, never null, and the SDK refuses an output its schema does not accept
// (a protocol error, not a tool error). The API answers null for some maps it does not fill
// (the intents of a run's scores, ...), so every nil map of an output becomes an empty one.
func withEmptyMaps[In, Out any](h func(context.Context, *client.Client, In) (Out, error)) func(context.Context, *client.Client, In) (Out, error) {
	return func(ctx context.Context, c *client.Client, in In) (Out, error) {
		out, err := h(ctx, c, in)
		if err == nil {
			fillNilMaps(reflect.ValueOf(&out).Elem())
		}
		return out, err
	}
}

// fillNilMaps sets every nil map reachable from v through exported fields, pointers and
// slices to an empty map.
func fillNilMaps(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			fillNilMaps(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillNilMaps(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // raw JSON, bytes
		}
		for i := range v.Len() {
			fillNilMaps(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() && v.CanSet() {
			v.Set(reflect.MakeMap(v.Type()))
		}
	}
}

// requireID refuses an empty id of an input, saying which tool lists the ids.
func requireID(name, id, lister string) error {
	if strings.TrimSpace(id) == "" {
		return errInput("%s is required: %s answers the ids", name, lister)
	}
	return nil
}

// errNotFound is a record the key's project does not have, worded as the API's not-found errors
// (agentError adds what to do).
func errNotFound(format string, args ...any) error {
	return &client.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Message: fmt.Sprintf(format, args...)}
}
