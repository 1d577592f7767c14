package dashboard

import (
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// The list filter is what the spans, traces and sessions pages share: the form of
// templates/list-filter-fragment.html over the filters common to GET /spans, GET /traces and
// GET /sessions (spec §4.3-4.5), read from and written to the page's query string so that a filtered page is
// a shareable URL. Each page brings its own select (traces: status; sessions: has_error;
// spans: kind, and has_error as a further one) and its own sorts, in a filterPage.

// maxTagFilters bounds a list page's tag filters.
const maxTagFilters = 10

// timeInput is the value format of an <input type="datetime-local" step="1">, read as UTC;
// browsers may leave the seconds out (timeInputMinutes).
const (
	timeInput        = "2006-01-02T15:04:05"
	timeInputMinutes = "2006-01-02T15:04"
)

// filterPage is what a list page brings to its filter.
type filterPage struct {
	// Path is the page's URL path; Noun names its rows ("traces") and One a row ("trace"),
	// for the form's label, test ids and help.
	Path, Noun, One string
	// Own is the page's own select, its Value empty; More are further selects, after it,
	// parsed and kept alike.
	Own  choice
	More []choice
	// Sorts are the page's orders, the default (newest first) first.
	Sorts []listSort
}

// choice is a list page's own select filter: a query key, its label and its options, the
// first of them ("", Any) no filter.
type choice struct {
	Key, Label string
	Options    []option
	// Value is the option chosen, as given.
	Value string
}

// option is an option of a choice; Summary is what the table's caption says of it ("" for
// nothing).
type option struct {
	Value, Label, Summary string
}

// listSort is a choice of a list page's ?sort=: a sort key of its query ("" for the default,
// creation time) and its order.
type listSort struct {
	Key, Label string
	by         string
	ascending  bool
}

// rangeField is a range filter; Value is what the form shows (as given, trimmed).
type rangeField struct {
	Key, Label, Unit, Value string
}

// rangeFields are the range filters, in the order the form shows them: a duration in
// milliseconds and a cost in US dollars, each from and to (inclusive), as GET /spans, GET
// /traces and GET /sessions take them. listFilter.common relies on this order.
var rangeFields = []rangeField{
	{Key: api.ParamDurationMin, Label: "Duration at least", Unit: "ms"},
	{Key: api.ParamDurationMax, Label: "Duration at most", Unit: "ms"},
	{Key: api.ParamCostMin, Label: "Cost at least", Unit: "USD"},
	{Key: api.ParamCostMax, Label: "Cost at most", Unit: "USD"},
}

// listFilter is a list page's filter: name, the page's own choice, tag (key=value, repeated),
// from and to (UTC, datetime-local or ISO 8601), the ranges of rangeFields, sort, and where
// the page starts (a cursor, or an offset).
type listFilter struct {
	filterPage
	Name     string
	Tags     []string // key=value, as given
	From, To string   // as given, trimmed
	// Ranges are rangeFields with the values given (trimmed; "" is none).
	Ranges []rangeField
	Sort   string // a key of Sorts; "" is newest
	At     listPage

	sort     listSort // the chosen sort
	tags     map[string]string
	from, to *time.Time
	// bounds are the values of Ranges, nil where none is given.
	bounds [4]*float64
}

// parseFilter reads page's filter from a query string; a value it cannot use is an
// errs.Invalid error naming the field.
func parseFilter(page filterPage, q url.Values) (listFilter, error) {
	f := listFilter{filterPage: page, Name: strings.TrimSpace(q.Get("name")),
		From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to")), Sort: q.Get("sort")}
	if len(f.Name) > maxNameFilter {
		return f, errs.Invalid("The name filter is longer than %d bytes.", maxNameFilter)
	}
	f.More = slices.Clone(page.More) // the page's own stay without values
	if err := f.Own.parse(q); err != nil {
		return f, err
	}
	for i := range f.More {
		if err := f.More[i].parse(q); err != nil {
			return f, err
		}
	}
	f.sort = f.Sorts[0]
	if f.Sort != "" {
		i := slices.IndexFunc(f.Sorts, func(s listSort) bool { return s.Key == f.Sort })
		if i < 0 {
			var keys []string
			for _, s := range f.Sorts {
				keys = append(keys, s.Key)
			}
			return f, errs.Invalid("Sort must be %s.", oneOf(keys))
		}
		f.sort = f.Sorts[i]
	}
	f.Ranges = slices.Clone(rangeFields)
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
		case len(k) > api.MaxTagKeyLen || len(v) > api.MaxTagValueLen || !utf8.ValidString(t):
			return f, errs.Invalid("A tag filter's key is at most %d bytes and its value at most %d.", api.MaxTagKeyLen, api.MaxTagValueLen)
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
	if f.At, err = listPageOf(q); err != nil {
		return f, err
	}
	return f, nil
}

// parse sets the choice's value from q: one of its options.
func (c *choice) parse(q url.Values) error {
	c.Value = q.Get(c.Key)
	if slices.ContainsFunc(c.Options, func(o option) bool { return o.Value == c.Value }) {
		return nil
	}
	var values []string
	for _, o := range c.Options[1:] {
		values = append(values, o.Value)
	}
	return errs.Invalid("%s must be %s.", c.Label, oneOf(values))
}

// Choices are the page's selects: Own, then More.
func (f listFilter) Choices() []choice { return append([]choice{f.Own}, f.More...) }

// Choice is the value chosen of the select of key ("" when none, or no such select).
func (f listFilter) Choice(key string) string {
	for _, c := range f.Choices() {
		if c.Key == key {
			return c.Value
		}
	}
	return ""
}

// oneOf is "a or b", or "one of a, b or c".
func oneOf(values []string) string {
	if len(values) < 3 {
		return strings.Join(values, " or ")
	}
	return "one of " + strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
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

// query is the list query of the filter's page of limit rows (the page's own choice aside).
func (f listFilter) query(limit int) api.ListQuery {
	q := api.ListQuery{
		Limit: limit, Offset: f.At.Offset, Cursor: f.At.Cursor, Tags: f.tags,
		DurationMin: f.bounds[0], DurationMax: f.bounds[1], CostMin: f.bounds[2], CostMax: f.bounds[3],
		SortBy: f.sort.by,
	}
	if f.sort.ascending {
		q.SortOrder = api.SortAsc
	}
	if f.from != nil {
		q.CreatedAfter = api.TimeOf(*f.from)
	}
	if f.to != nil {
		q.CreatedBefore = api.TimeOf(*f.to)
	}
	if f.Name != "" {
		q.Names = []string{f.Name}
	}
	return q
}

// link is the URL of the filtered page from cursor, row its first row's number (listPage).
func (f listFilter) link(cursor string, row int) string {
	v := url.Values{}
	if f.Name != "" {
		v.Set("name", f.Name)
	}
	for _, c := range f.Choices() {
		if c.Value != "" {
			v.Set(c.Key, c.Value)
		}
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
	if f.Sort != "" && f.Sort != f.Sorts[0].Key {
		v.Set("sort", f.Sort)
	}
	return cursorURL(f.Path, v, cursor, row)
}

// Applied reports whether the filter selects or orders anything other than the unfiltered page.
func (f listFilter) Applied() bool {
	return f.Name != "" || len(f.Tags) > 0 || f.From != "" || f.To != "" || f.Sort != "" && f.Sort != f.Sorts[0].Key ||
		slices.ContainsFunc(f.Choices(), func(c choice) bool { return c.Value != "" }) ||
		slices.ContainsFunc(f.Ranges, func(r rangeField) bool { return r.Value != "" })
}

// FromInput and ToInput are the from and to filters as datetime-local values.
func (f listFilter) FromInput() string { return timeInputOf(f.from) }

// ToInput: see FromInput.
func (f listFilter) ToInput() string { return timeInputOf(f.to) }

func timeInputOf(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.Format(timeInput)
}

// TagInputs are the tag filters' fields: one per tag filter, and an empty one while there is
// room.
func (f listFilter) TagInputs() []string {
	if len(f.Tags) < maxTagFilters {
		return append(slices.Clip(f.Tags), "")
	}
	return f.Tags
}

// SortLabel is the chosen order for the table's caption ("most expensive first").
func (f listFilter) SortLabel() string { return strings.ToLower(f.sort.Label) }

// OwnSummary is what the table's caption says of the page's selects ("" for nothing): their
// options' summaries, joined by commas.
func (f listFilter) OwnSummary() string {
	var said []string
	for _, c := range f.Choices() {
		for _, o := range c.Options {
			if o.Value == c.Value && o.Summary != "" {
				said = append(said, o.Summary)
			}
		}
	}
	return strings.Join(said, ", ")
}
