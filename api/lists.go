package api

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The list queries of GET /spans, /traces and /sessions (spec §4.3-4.5): their parameters,
// sort keys and limits (SpanList, TraceList, SessionList), and the queries as types with a
// parse helper (from url.Values, the server's reading) and an encode helper (Values, a
// client's). The server reads its queries with the parse helpers; the Go client, the CLI, the
// MCP tools, the dashboard and the OpenAPI document take names, sorts, limits and the
// parameters' descriptions from here.

// ParamKind is the form of a query parameter's value.
type ParamKind string

// The forms of query parameters.
const (
	ParamString ParamKind = "string"
	ParamUUID   ParamKind = "uuid"
	// ParamTime is a QueryTime.
	ParamTime    ParamKind = "time"
	ParamNumber  ParamKind = "number"
	ParamBoolean ParamKind = "boolean"
	ParamInteger ParamKind = "integer"
	// ParamList is comma-separated values; the parameter may also be repeated.
	ParamList ParamKind = "list"
)

// Param is a query parameter of a list: its name, the form of its value and what it selects.
type Param struct {
	Name string
	Kind ParamKind
	Doc  string
}

// ListLimits bound a list's page: Default items when limit is not given, at most Max.
type ListLimits struct{ Default, Max int }

// MaxListOffset is the largest offset of a list.
const MaxListOffset = 1_000_000

// List describes the query of a list route.
type List struct {
	// Noun names the listed items ("spans"); the parameters' descriptions use it.
	Noun string
	// Params are the list's parameters: the route's own filters, then those every list
	// shares. Any other parameter is a tag filter (ListQuery.Tags).
	Params []Param
	// Sorts are the keys of sort_by; without it a list is newest stored first.
	Sorts  []string
	Limits ListLimits
}

// The parameters every list shares, by name.
const (
	ParamCreatedBefore = "created_before"
	ParamCreatedAfter  = "created_after"
	ParamNames         = "names"
	ParamHasError      = "has_error"
	ParamDurationMin   = "duration_min"
	ParamDurationMax   = "duration_max"
	ParamCostMin       = "cost_min"
	ParamCostMax       = "cost_max"
	ParamSortBy        = "sort_by"
	ParamSortOrder     = "sort_order"
	ParamLimit         = "limit"
	ParamOffset        = "offset"
	ParamCursor        = "cursor"
)

// MaxCursorBytes bounds a cursor parameter (the server's cursors are far shorter).
const MaxCursorBytes = 1024

// The lists.
var (
	SpanList = newList("spans", []Param{
		{"id", ParamUUID, "the span of this id"},
		{"trace_id", ParamUUID, "only the spans of this trace"},
		{"session_id", ParamUUID, "only the spans of the traces of this session"},
		{"parent_span_id", ParamString, "only the children of this span (a UUID), or null: only root spans"},
		{"span_kind", ParamString, "only spans of this kind, as stored (lowercase): " + kindNames() + " or any other"},
		{"error_codes", ParamList, "only spans with one of these error codes"},
	}, []string{"started_at", "name", "status", "duration_ms", "cost", "kind"}, ListLimits{Default: 5000, Max: 10000})
	TraceList = newList("traces", []Param{
		{"id", ParamUUID, "the trace of this id"},
		{"session_id", ParamUUID, "only the traces of this session"},
		{"status", ParamString, "only traces of this status: " + StatusOK + ", " + StatusError + " or " + StatusUnset},
	}, []string{"started_at", "name", "status", "span_count", "duration_ms", "cost"}, ListLimits{Default: 50, Max: 500})
	SessionList = newList("sessions", []Param{
		{"id", ParamUUID, "the session of this id"},
	}, []string{"created_at", "name", "trace_count", "cost", "duration"}, ListLimits{Default: 50, Max: 500})
)

func kindNames() string {
	names := make([]string, len(SpanKinds))
	for i, k := range SpanKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// newList is the list of noun with its own parameters, then those every list shares.
func newList(noun string, own []Param, sorts []string, limits ListLimits) List {
	n := noun
	return List{Noun: noun, Sorts: sorts, Limits: limits, Params: slices.Concat(own, []Param{
		{ParamCreatedBefore, ParamTime, "only " + n + " stored before this time: ISO 8601, or a Unix epoch"},
		{ParamCreatedAfter, ParamTime, fmt.Sprintf("only %s stored at or after this time: ISO 8601, or a Unix epoch (without it: the last %d days)", n, LookbackDays)},
		{ParamNames, ParamList, "only " + n + " with one of these names"},
		{ParamHasError, ParamBoolean, "true: only " + n + " with an error; false: only those without"},
		{ParamDurationMin, ParamNumber, "only " + n + " that lasted at least this many milliseconds"},
		{ParamDurationMax, ParamNumber, "only " + n + " that lasted at most this many milliseconds"},
		{ParamCostMin, ParamNumber, "only " + n + " that cost at least this many USD"},
		{ParamCostMax, ParamNumber, "only " + n + " that cost at most this many USD"},
		{ParamSortBy, ParamString, "sort by this key: " + strings.Join(sorts, ", ") + " (without it: newest stored first)"},
		{ParamSortOrder, ParamString, "asc or desc (the default)"},
		{ParamLimit, ParamInteger, fmt.Sprintf("%s per page: 1 to %d, default %d", n, limits.Max, limits.Default)},
		{ParamOffset, ParamInteger, fmt.Sprintf("%s to skip: 0 to %d", n, MaxListOffset)},
		{ParamCursor, ParamString, "continue a list where an answer's " + NextCursorHeader + " says, with the same other parameters (instead of offset)"},
	})}
}

// LookbackDays is how far back a list looks without created_after.
const LookbackDays = 30

// Param is the list's parameter of name; ok is false for a tag filter.
func (l List) Param(name string) (p Param, ok bool) {
	i := slices.IndexFunc(l.Params, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return l.Params[i], true
}

// TagsDoc describes a list's tag filters: every parameter that is not the list's own.
const TagsDoc = "only items with every one of these tags (tag name to value); sent as parameters of their own (?env=prod)"

// QueryTime is a time of a list query as sent: ISO 8601 in its usual forms, or a Unix epoch,
// as span times are read (POST /spans). The server parses it with the span decoder's time
// reader (shared/trace), which this package, of the standard library only, does not copy; a
// client may send any of those forms.
type QueryTime string

// TimeOf is t as a QueryTime: RFC 3339 in UTC.
func TimeOf(t time.Time) QueryTime { return QueryTime(t.UTC().Format(time.RFC3339Nano)) }

// SortOrder orders a sorted list.
type SortOrder string

// The sort orders; SortDesc is the default.
const (
	SortAsc  SortOrder = "asc"
	SortDesc SortOrder = "desc"
)

// ListQuery is what every list query shares: filters, order and paging. A zero field is not
// sent, and not a filter; Limit 0 is the list's default.
type ListQuery struct {
	CreatedBefore QueryTime `json:"created_before,omitempty"`
	CreatedAfter  QueryTime `json:"created_after,omitempty"`
	Names         []string  `json:"names,omitempty"`
	HasError      *bool     `json:"has_error,omitempty"`
	DurationMin   *float64  `json:"duration_min,omitempty"`
	DurationMax   *float64  `json:"duration_max,omitempty"`
	CostMin       *float64  `json:"cost_min,omitempty"`
	CostMax       *float64  `json:"cost_max,omitempty"`
	SortBy        string    `json:"sort_by,omitempty"`
	SortOrder     SortOrder `json:"sort_order,omitempty"`
	Limit         int       `json:"limit,omitempty"`
	Offset        int       `json:"offset,omitempty"`
	// Cursor continues a list where an answer's NextCursorHeader says; it is not combined
	// with Offset.
	Cursor string `json:"cursor,omitempty"`
	// Tags are tag filters: an item matches when it has every one.
	Tags map[string]string `json:"tags,omitempty"`
}

// SpanQuery is the query of GET /spans (SpanList).
type SpanQuery struct {
	ListQuery
	ID      string `json:"id,omitempty"`
	TraceID string `json:"trace_id,omitempty"`
	// SessionID selects the spans of every trace of the session.
	SessionID string `json:"session_id,omitempty"`
	// ParentSpanID selects the children of a span; a pointer to "" selects root spans (sent
	// as null).
	ParentSpanID *string  `json:"parent_span_id,omitempty"`
	SpanKind     SpanKind `json:"span_kind,omitempty"`
	ErrorCodes   []string `json:"error_codes,omitempty"`
}

// TraceQuery is the query of GET /traces (TraceList).
type TraceQuery struct {
	ListQuery
	ID        string `json:"id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Status    string `json:"status,omitempty"`
}

// SessionQuery is the query of GET /sessions (SessionList).
type SessionQuery struct {
	ListQuery
	ID string `json:"id,omitempty"`
}

// ParseSpanQuery reads the query of GET /spans. A value it cannot use is an *InvalidError
// naming the parameter; Limit is the default when not given; a time is left for the server to
// parse (QueryTime).
func ParseSpanQuery(q url.Values) (SpanQuery, error) {
	r := queryReader{q: q, of: SpanList}
	s := SpanQuery{ListQuery: r.common(), ID: r.uuid("id"), TraceID: r.uuid("trace_id"), SessionID: r.uuid("session_id"),
		SpanKind: SpanKind(r.str("span_kind")), ErrorCodes: r.list("error_codes")}
	switch v := r.str("parent_span_id"); v {
	case "":
	case "null":
		s.ParentSpanID = new(string)
	default:
		s.ParentSpanID = new(r.uuid("parent_span_id"))
	}
	return s, r.err
}

// ParseTraceQuery reads the query of GET /traces, as ParseSpanQuery does.
func ParseTraceQuery(q url.Values) (TraceQuery, error) {
	r := queryReader{q: q, of: TraceList}
	t := TraceQuery{ListQuery: r.common(), ID: r.uuid("id"), SessionID: r.uuid("session_id"), Status: r.str("status")}
	return t, r.err
}

// ParseSessionQuery reads the query of GET /sessions, as ParseSpanQuery does.
func ParseSessionQuery(q url.Values) (SessionQuery, error) {
	r := queryReader{q: q, of: SessionList}
	s := SessionQuery{ListQuery: r.common(), ID: r.uuid("id")}
	return s, r.err
}

// Values is the query as parameters: ParseSpanQuery(q.Values()) is q, the default limit
// aside.
func (q SpanQuery) Values() url.Values {
	v := q.ListQuery.Values()
	setIf(v, "id", q.ID)
	setIf(v, "trace_id", q.TraceID)
	setIf(v, "session_id", q.SessionID)
	if q.ParentSpanID != nil {
		v.Set("parent_span_id", cmpOr(*q.ParentSpanID, "null"))
	}
	setIf(v, "span_kind", string(q.SpanKind))
	if len(q.ErrorCodes) > 0 {
		v.Set("error_codes", strings.Join(q.ErrorCodes, ","))
	}
	return v
}

// Values is the query as parameters, as SpanQuery.Values.
func (q TraceQuery) Values() url.Values {
	v := q.ListQuery.Values()
	setIf(v, "id", q.ID)
	setIf(v, "session_id", q.SessionID)
	setIf(v, "status", q.Status)
	return v
}

// Values is the query as parameters, as SpanQuery.Values.
func (q SessionQuery) Values() url.Values {
	v := q.ListQuery.Values()
	setIf(v, "id", q.ID)
	return v
}

// Values is the shared part of a query as parameters, the tags among them.
func (q ListQuery) Values() url.Values {
	v := url.Values{}
	for k, t := range q.Tags {
		v.Set(k, t)
	}
	setIf(v, ParamCreatedBefore, string(q.CreatedBefore))
	setIf(v, ParamCreatedAfter, string(q.CreatedAfter))
	for _, n := range q.Names {
		v.Add(ParamNames, n)
	}
	if q.HasError != nil {
		v.Set(ParamHasError, strconv.FormatBool(*q.HasError))
	}
	for _, f := range []struct {
		name string
		n    *float64
	}{{ParamDurationMin, q.DurationMin}, {ParamDurationMax, q.DurationMax}, {ParamCostMin, q.CostMin}, {ParamCostMax, q.CostMax}} {
		if f.n != nil {
			v.Set(f.name, strconv.FormatFloat(*f.n, 'g', -1, 64))
		}
	}
	setIf(v, ParamSortBy, q.SortBy)
	setIf(v, ParamSortOrder, string(q.SortOrder))
	if q.Limit != 0 {
		v.Set(ParamLimit, strconv.Itoa(q.Limit))
	}
	if q.Offset != 0 {
		v.Set(ParamOffset, strconv.Itoa(q.Offset))
	}
	setIf(v, ParamCursor, q.Cursor)
	return v
}

func setIf(v url.Values, name, value string) {
	if value != "" {
		v.Set(name, value)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// queryReader reads the parameters of a list, remembering the first error.
type queryReader struct {
	q   url.Values
	of  List
	err error
}

func (r *queryReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = &InvalidError{Message: fmt.Sprintf(format, args...)}
	}
}

func (r *queryReader) str(name string) string { return strings.TrimSpace(r.q.Get(name)) }

// uuid reads a UUID in any of its forms, answered in its canonical one (lowercase, hyphens).
func (r *queryReader) uuid(name string) string {
	v := r.str(name)
	if v == "" {
		return ""
	}
	id, ok := canonicalUUID(v)
	if !ok {
		r.fail("%s must be a UUID, not %q", name, v)
	}
	return id
}

func (r *queryReader) list(name string) []string {
	var out []string
	for _, v := range r.q[name] {
		for part := range strings.SplitSeq(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

func (r *queryReader) float(name string) *float64 {
	v := r.str(name)
	if v == "" {
		return nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		r.fail("%s must be a number, not %q", name, v)
		return nil
	}
	return &f
}

func (r *queryReader) boolean(name string) *bool {
	v := r.str(name)
	if v == "" {
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail("%s must be true or false, not %q", name, v)
		return nil
	}
	return &b
}

func (r *queryReader) int(name string, def, lo, hi int) int {
	v := r.str(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		r.fail("%s must be an integer from %d to %d, not %q", name, lo, hi, v)
		return def
	}
	return n
}

// common reads the shared filters, order and paging, and the tag filters: every parameter
// that is not the list's own, at most MaxTagFilters of them.
func (r *queryReader) common() ListQuery {
	l := r.of
	c := ListQuery{
		CreatedBefore: QueryTime(r.str(ParamCreatedBefore)), CreatedAfter: QueryTime(r.str(ParamCreatedAfter)),
		Names: r.list(ParamNames), HasError: r.boolean(ParamHasError),
		DurationMin: r.float(ParamDurationMin), DurationMax: r.float(ParamDurationMax),
		CostMin: r.float(ParamCostMin), CostMax: r.float(ParamCostMax),
		SortBy: r.str(ParamSortBy),
		Limit:  r.int(ParamLimit, l.Limits.Default, 1, l.Limits.Max), Offset: r.int(ParamOffset, 0, 0, MaxListOffset),
		Cursor: r.str(ParamCursor),
	}
	switch {
	case len(c.Cursor) > MaxCursorBytes:
		r.fail("cursor must be at most %d bytes, as an answer's %s gives it", MaxCursorBytes, NextCursorHeader)
	case c.Cursor != "" && c.Offset != 0:
		r.fail("cursor and offset cannot be combined: a cursor continues where its answer ended")
	}
	if c.SortBy != "" && !slices.Contains(l.Sorts, c.SortBy) {
		r.fail("sort_by must be one of %s, not %q", strings.Join(l.Sorts, ", "), c.SortBy)
	}
	switch o := SortOrder(strings.ToLower(r.str(ParamSortOrder))); o {
	case "", SortAsc, SortDesc:
		c.SortOrder = o
	default:
		r.fail("sort_order must be asc or desc, not %q", r.str(ParamSortOrder))
	}
	tags := TagFilters(l, r.q)
	if len(tags) > MaxTagFilters {
		r.fail("at most %d tag filters (query parameters other than the route's own), not %d", MaxTagFilters, len(tags))
		return c
	}
	for _, k := range tags {
		if c.Tags == nil {
			c.Tags = map[string]string{}
		}
		c.Tags[k] = r.q[k][0]
	}
	return c
}

// TagFilters are the names of the parameters of q that l reads as tag filters, sorted.
func TagFilters(l List, q url.Values) []string {
	var out []string
	for k, vs := range q {
		if _, own := l.Param(k); !own && len(vs) > 0 {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// canonicalUUID is s as a UUID in its canonical form, as github.com/google/uuid parses and
// prints it: 36 characters with hyphens, optionally "urn:uuid:"-prefixed or braced, or 32 hex
// digits. FuzzCanonicalUUID holds the two equal.
func canonicalUUID(s string) (string, bool) {
	switch len(s) {
	case 36 + 9:
		if !strings.EqualFold(s[:9], "urn:uuid:") {
			return "", false
		}
		s = s[9:]
	case 36 + 2: // {...}, though any two characters around it pass
		s = s[1:37]
	case 32:
		s = s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
	}
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return "", false
	}
	hex := strings.ReplaceAll(s, "-", "")
	if len(hex) != 32 {
		return "", false
	}
	for _, c := range hex {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return "", false
		}
	}
	return strings.ToLower(s), true
}
