package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// Bounds of the traces page's tag filters.
const maxTagFilters = 10

// traceSort is a choice of the traces page's ?sort=: a key of trace.TraceSorts (or the
// default, creation time) and its order.
type traceSort struct {
	Key, Label string
	by         string
	ascending  bool
}

var traceSorts = []traceSort{
	{Key: "newest", Label: "Newest first"},
	{Key: "oldest", Label: "Oldest first", ascending: true},
	{Key: "duration", Label: "Longest first", by: "duration_ms"},
	{Key: "cost", Label: "Most expensive first", by: "cost"},
	{Key: "spans", Label: "Most spans first", by: "span_count"},
	{Key: "name", Label: "Name A to Z", by: "name", ascending: true},
}

// traceRanges are the traces page's range filters, in the order the form shows them: a
// duration in milliseconds and a cost in US dollars, each from and to (inclusive), as GET
// /traces takes them (duration_min ... cost_max).
var traceRanges = []traceRange{
	{Key: "duration_min", Label: "Duration at least", Unit: "ms"},
	{Key: "duration_max", Label: "Duration at most", Unit: "ms"},
	{Key: "cost_min", Label: "Cost at least", Unit: "USD"},
	{Key: "cost_max", Label: "Cost at most", Unit: "USD"},
}

// traceRange is a range filter of the traces page; Value is what the form shows (as given).
type traceRange struct {
	Key, Label, Unit, Value string
}

// timeInput is the value format of an <input type="datetime-local" step="1">, read as UTC;
// browsers may leave the seconds out (timeInputMinutes).
const (
	timeInput        = "2006-01-02T15:04:05"
	timeInputMinutes = "2006-01-02T15:04"
)

// tracesFilter is the filter of the traces page, read from and written to its query string so
// that a filtered page is a shareable URL: name, status, tag (key=value, repeated), from and to
// (UTC, datetime-local or ISO 8601), the ranges of traceRanges, sort and offset.
type tracesFilter struct {
	Name, Status string
	Tags         []string // key=value, as given
	From, To     string   // as given, trimmed
	// Ranges are traceRanges with the values given (trimmed; "" is none).
	Ranges []traceRange
	Sort   string // a traceSorts key; "" is newest
	Offset int

	tags     map[string]string
	from, to *time.Time
	// bounds are the values of Ranges, nil where none is given.
	bounds [4]*float64
}

func (f tracesFilter) query(offset int) string {
	v := url.Values{}
	if f.Name != "" {
		v.Set("name", f.Name)
	}
	if f.Status != "" {
		v.Set("status", f.Status)
	}
	for _, t := range f.Tags {
		v.Add("tag", t)
	}
	if f.From != "" {
		v.Set("from", f.From)
	}
	if f.To != "" {
		v.Set("to", f.To)
	}
	for _, r := range f.Ranges {
		if r.Value != "" {
			v.Set(r.Key, r.Value)
		}
	}
	if f.Sort != "" && f.Sort != "newest" {
		v.Set("sort", f.Sort)
	}
	return pageURL("/ui/traces", v, offset)
}

func (f tracesFilter) applied() bool {
	return f.Name != "" || f.Status != "" || len(f.Tags) > 0 || f.From != "" || f.To != "" || f.Sort != "" && f.Sort != "newest" ||
		slices.ContainsFunc(f.Ranges, func(r traceRange) bool { return r.Value != "" })
}

// parseTracesFilter reads the page's query string; a value it cannot use is an errs.Invalid
// error naming the field.
func parseTracesFilter(q url.Values) (tracesFilter, error) {
	f := tracesFilter{Name: strings.TrimSpace(q.Get("name")), Status: q.Get("status"),
		From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to")), Sort: q.Get("sort")}
	if len(f.Name) > maxNameFilter {
		return f, errs.Invalid("The name filter is longer than %d bytes.", maxNameFilter)
	}
	if f.Status != "" && !slices.Contains(traceStatuses, f.Status) {
		return f, errs.Invalid("Status must be one of ok, error or unset.")
	}
	if f.Sort != "" && !slices.ContainsFunc(traceSorts, func(s traceSort) bool { return s.Key == f.Sort }) {
		return f, errs.Invalid("Sort must be one of newest, oldest, duration, cost, spans or name.")
	}
	f.Ranges = slices.Clone(traceRanges)
	for i := range f.Ranges {
		r := &f.Ranges[i]
		if r.Value = strings.TrimSpace(q.Get(r.Key)); r.Value == "" {
			continue
		}
		n, ok := parseNumber(r.Value)
		if !ok || n < 0 {
			return f, errs.Invalid("%s (%s) must be a number from 0, not %q.", r.Label, r.Unit, r.Value)
		}
		f.bounds[i] = &n
	}
	for i := 0; i < len(f.bounds); i += 2 { // each from and its to
		if lo, hi := f.bounds[i], f.bounds[i+1]; lo != nil && hi != nil && *lo > *hi {
			return f, errs.Invalid("%s must not be more than %s.", f.Ranges[i].Label, strings.ToLower(f.Ranges[i+1].Label))
		}
	}
	for _, t := range q["tag"] {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !ok || k == "":
			return f, errs.Invalid("A tag filter is key=value, like env=prod; %q is not.", t)
		case len(k) > trace.MaxTagKeyLen || len(v) > trace.MaxTagValueLen || !utf8.ValidString(t):
			return f, errs.Invalid("A tag filter's key is at most %d bytes and its value at most %d.", trace.MaxTagKeyLen, trace.MaxTagValueLen)
		case len(f.Tags) == maxTagFilters:
			return f, errs.Invalid("At most %d tag filters.", maxTagFilters)
		}
		if _, dup := f.tags[k]; dup {
			return f, errs.Invalid("The tag %q is filtered on twice.", k)
		}
		if f.tags == nil {
			f.tags = map[string]string{}
		}
		f.tags[k] = v
		f.Tags = append(f.Tags, k+"="+v)
	}
	var err error
	if f.from, err = parseTimeFilter("From", f.From); err != nil {
		return f, err
	}
	if f.to, err = parseTimeFilter("To", f.To); err != nil {
		return f, err
	}
	if f.from != nil && f.to != nil && !f.from.Before(*f.to) {
		return f, errs.Invalid("From must be before To.")
	}
	if f.Offset, err = offsetOf(q); err != nil {
		return f, err
	}
	return f, nil
}

// parseTimeFilter reads a time of the filter: a datetime-local value (UTC) or ISO 8601.
func parseTimeFilter(field, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	for _, layout := range []string{timeInputMinutes, timeInput} {
		if t, err := time.Parse(layout, v); err == nil {
			return &t, nil
		}
	}
	t, err := trace.ParseTimeString(v)
	if err != nil {
		return nil, errs.Invalid("%s must be a date and time such as 2026-01-31T09:30 (UTC), not %q.", field, v)
	}
	t = t.UTC()
	return &t, nil
}

var traceStatuses = []string{trace.StatusOK, trace.StatusError, trace.StatusUnset}

type tracesData struct {
	Filter    tracesFilter
	Statuses  []string
	Sorts     []traceSort
	SortLabel string
	FromInput string // the from and to filters as datetime-local values
	ToInput   string
	// TagInputs are the tag filters' fields: one per tag filter, and an empty one while
	// there is room.
	TagInputs      []string
	Traces         []trace.Trace
	First, Last    int
	Prev, Next     string
	Truncated      bool
	FilterApplied  bool
	ClearFilterURL string
}

// traces serves GET /ui/traces: the project's traces, 50 a page, filtered by name, status,
// tags, creation time, duration and cost and sorted as chosen, through the query GET /traces answers (one
// index walk of at most trace.MaxAggregateScan traces).
func (s *server) traces(w http.ResponseWriter, r *http.Request) {
	f, err := parseTracesFilter(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sort := traceSorts[0]
	if i := slices.IndexFunc(traceSorts, func(s traceSort) bool { return s.Key == f.Sort }); i >= 0 {
		sort = traceSorts[i]
	}
	tq := trace.TraceQuery{Status: f.Status, Common: trace.Common{
		Limit: tracesPerPage + 1, Offset: f.Offset, Tags: f.tags, CreatedAfter: f.from, CreatedBefore: f.to,
		DurationMin: f.bounds[0], DurationMax: f.bounds[1], CostMin: f.bounds[2], CostMax: f.bounds[3],
		SortBy: sort.by, Ascending: sort.ascending,
	}}
	if f.Name != "" {
		tq.Names = []string{f.Name}
	}
	ts, info, err := s.d.Queries.Traces(r.Context(), sessionOf(r).ProjectID, tq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := tracesData{Filter: f, Statuses: traceStatuses, Sorts: traceSorts, SortLabel: strings.ToLower(sort.Label),
		Truncated: info.Truncated, FilterApplied: f.applied(), ClearFilterURL: "/ui/traces"}
	if f.from != nil {
		d.FromInput = f.from.Format(timeInput)
	}
	if f.to != nil {
		d.ToInput = f.to.Format(timeInput)
	}
	d.TagInputs = f.Tags
	if len(f.Tags) < maxTagFilters {
		d.TagInputs = append(slices.Clip(f.Tags), "")
	}
	ts, d.Prev, d.Next = paginate(ts, f.Offset, tracesPerPage, f.query)
	d.Traces, d.First, d.Last = ts, f.Offset+1, f.Offset+len(ts)
	s.render(w, r, http.StatusOK, "traces", page{Title: "Traces", Nav: "traces", Data: d})
}
