package tracing

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// commonParams are the query parameters every list route of the tracing API reads (spec
// §4.3-4.5); any other parameter is a tag filter.
var commonParams = []string{
	"created_before", "created_after", "names", "has_error", "duration_min", "duration_max",
	"cost_min", "cost_max", "sort_by", "sort_order", "limit", "offset",
}

// The sort keys and own query parameters of each list route.
var (
	spanSorts     = []string{"started_at", "name", "status", "duration_ms", "cost", "kind"}
	traceSorts    = []string{"started_at", "name", "status", "span_count", "duration_ms", "cost"}
	sessionSorts  = []string{"created_at", "name", "trace_count", "cost", "duration"}
	spanParams    = []string{"id", "trace_id", "session_id", "parent_span_id", "span_kind", "error_codes"}
	traceParams   = []string{"id", "session_id", "status"}
	sessionParams = []string{"id"}
)

// filters are the flags of the filters every list route takes, each named after its query
// parameter (--created-after is created_after). The server checks the values; the flags check
// what they can before anything is sent.
type filters struct {
	noun                        string // what is listed: "spans", "traces", "sessions"
	sorts                       []string
	params                      []string // the route's own parameters, which no tag can be named
	createdAfter, createdBefore string
	names                       []string
	hasError                    bool
	durationMin, durationMax    float64
	costMin, costMax            float64
	sortBy, sortOrder           string
	tags                        []string
	// all follows the server's next offset when it cuts an answer by size.
	all bool
}

// add adds the filter flags to cmd.
func (l *filters) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&l.createdAfter, "created-after", "", "only "+l.noun+" stored at or after this `time`: ISO 8601, or a duration before now (90m, 24h)")
	fl.StringVar(&l.createdBefore, "created-before", "", "only "+l.noun+" stored before this `time`: ISO 8601, or a duration before now")
	fl.StringArrayVar(&l.names, "name", nil, "only "+l.noun+" of this `name`; repeatable, any may match")
	fl.BoolVar(&l.hasError, "has-error", false, "only "+l.noun+" with an error (--has-error=false: only those without)")
	fl.Float64Var(&l.durationMin, "duration-min", 0, "only "+l.noun+" that lasted at least this many `ms`")
	fl.Float64Var(&l.durationMax, "duration-max", 0, "only "+l.noun+" that lasted at most this many `ms`")
	fl.Float64Var(&l.costMin, "cost-min", 0, "only "+l.noun+" that cost at least this many `USD`")
	fl.Float64Var(&l.costMax, "cost-max", 0, "only "+l.noun+" that cost at most this many `USD`")
	fl.StringVar(&l.sortBy, "sort-by", "", "the server sorts by this `key`: "+strings.Join(l.sorts, ", ")+" (default: newest stored first)")
	fl.StringVar(&l.sortOrder, "sort-order", "", "the server's sort `order`: asc or desc (default desc)")
	fl.StringArrayVar(&l.tags, "tag", nil, "only "+l.noun+" with this tag, as `key=value`; repeatable, all must match")
	fl.BoolVar(&l.all, "all", false, fmt.Sprintf("when the server cuts its answer by size, ask for the rest (up to %d requests) until --limit %s are listed", client.MaxFollowedPages, l.noun))
}

// following is whether the --all flag was given.
func (l *filters) following() bool { return l.all }

// query returns the query parameters of the list flags and the filters: o's paging, then each
// filter flag given. now is the clock relative times are read against.
func (l *filters) query(cmd *cobra.Command, o *cmdutil.ListOptions, now time.Time) (url.Values, error) {
	q := o.Query()
	for _, t := range []struct{ flag, param, value string }{
		{"created-after", "created_after", l.createdAfter},
		{"created-before", "created_before", l.createdBefore},
	} {
		if t.value == "" {
			continue
		}
		v, err := timeParam(t.flag, t.value, now)
		if err != nil {
			return nil, err
		}
		q.Set(t.param, v)
	}
	for _, n := range l.names {
		q.Add("names", n)
	}
	fl := cmd.Flags()
	if fl.Changed("has-error") {
		q.Set("has_error", strconv.FormatBool(l.hasError))
	}
	for _, n := range []struct {
		flag, param string
		value       float64
	}{
		{"duration-min", "duration_min", l.durationMin}, {"duration-max", "duration_max", l.durationMax},
		{"cost-min", "cost_min", l.costMin}, {"cost-max", "cost_max", l.costMax},
	} {
		if fl.Changed(n.flag) {
			q.Set(n.param, strconv.FormatFloat(n.value, 'f', -1, 64))
		}
	}
	if l.sortBy != "" {
		if !slices.Contains(l.sorts, l.sortBy) {
			return nil, cmdutil.FlagErrorf("--sort-by must be one of %s, not %q", strings.Join(l.sorts, ", "), l.sortBy)
		}
		q.Set("sort_by", l.sortBy)
	}
	switch strings.ToLower(l.sortOrder) {
	case "":
	case "asc", "desc":
		q.Set("sort_order", strings.ToLower(l.sortOrder))
	default:
		return nil, cmdutil.FlagErrorf("--sort-order must be asc or desc, not %q", l.sortOrder)
	}
	for _, t := range l.tags {
		k, v, ok := strings.Cut(t, "=")
		switch {
		case !ok || strings.TrimSpace(k) == "":
			return nil, cmdutil.FlagErrorf("--tag %q: want key=value", t)
		case slices.Contains(commonParams, k) || slices.Contains(l.params, k):
			return nil, cmdutil.FlagErrorf("--tag %q: the server reads %s as a filter of its own, not as a tag", t, k)
		}
		q.Set(k, v)
	}
	return q, nil
}

// timeParam is the value of a time flag: an ISO 8601 time as given (the server parses it), or
// a duration, which is that long before now.
func timeParam(flag, value string, now time.Time) (string, error) {
	d, err := time.ParseDuration(value)
	if err != nil {
		return value, nil
	}
	if d < 0 {
		return "", cmdutil.FlagErrorf("--%s %s: a duration before now must not be negative", flag, value)
	}
	return now.Add(-d).UTC().Format(time.RFC3339Nano), nil
}

// setIf sets the query parameter name to value unless value is empty.
func setIf(q url.Values, name, value string) {
	if value != "" {
		q.Set(name, value)
	}
}

// querier builds a list command's query from its flags: filters and spanFilters.
type querier interface {
	query(cmd *cobra.Command, o *cmdutil.ListOptions, now time.Time) (url.Values, error)
	following() bool
}

// lister is a list method of the client in its two forms: one request (SpansPage), and one
// that follows the server's next offsets (AllSpans).
type lister[T any] struct {
	page, all func(*client.Client, context.Context, url.Values) ([]T, client.ListInfo, error)
}

var (
	spanLister    = lister[api.Span]{(*client.Client).SpansPage, (*client.Client).AllSpans}
	traceLister   = lister[api.Trace]{(*client.Client).TracesPage, (*client.Client).AllTraces}
	sessionLister = lister[api.Session]{(*client.Client).SessionsPage, (*client.Client).AllSessions}
)

// list sends q with the page method, or the following one when all; a partial answer is
// warned of on stderr (warnPartial).
func (l lister[T]) list(ctx context.Context, c *client.Client, ios *cmdutil.IOStreams, noun string, q url.Values, all bool) ([]T, error) {
	list := l.page
	if all {
		list = l.all
	}
	recs, info, err := list(c, ctx, q)
	if err != nil {
		return nil, err
	}
	lookup := q.Get("trace_id") != "" || q.Get("session_id") != ""
	warnPartial(ios, noun, info, all, lookup)
	return recs, nil
}

// warnPartial tells on stderr, whatever the output format, what a partial answer lacks and
// how to get it; stdout keeps the records only. lookup is a list of a trace's or a session's
// spans, which no time window narrows.
func warnPartial(ios *cmdutil.IOStreams, noun string, info client.ListInfo, all, lookup bool) {
	switch {
	case info.Truncated && lookup:
		ios.Warnf("the server stopped at its scan bound after examining %d %s (%s: true): %s past those "+
			"are not listed, at any offset", info.Scanned, noun, client.HeaderScanTruncated, noun)
	case info.Truncated:
		ios.Warnf("the server stopped at its scan bound after examining %d %s (%s: true): this list covers only "+
			"the newest %s of the time window and may miss older matches; narrow the window with --created-after "+
			"and --created-before (--created-before moves it back)", info.Scanned, noun, client.HeaderScanTruncated, noun)
	}
	if info.NextOffset > 0 {
		if all {
			ios.Warnf("the server cut its answers by size and %d requests were not enough: %s from offset %d on "+
				"are not listed; rerun with --offset %d", client.MaxFollowedPages, noun, info.NextOffset, info.NextOffset)
			return
		}
		ios.Warnf("the server cut its answer by size (%s: %d): %s from offset %d on are not listed; "+
			"rerun with --all to fetch them, or with --offset %d", client.HeaderNextOffset, info.NextOffset, noun,
			info.NextOffset, info.NextOffset)
	}
}

// fetchList runs a list command's request: the list options checked, the query of fl with the
// parameters of set (those not empty), sent with l through the factory's client under the
// command's deadline, a partial answer warned of.
func fetchList[T any](cmd *cobra.Command, f *cmdutil.Factory, fl querier, o *cmdutil.ListOptions, set map[string]string,
	noun string, l lister[T]) ([]T, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	q, err := fl.query(cmd, o, f.Now())
	if err != nil {
		return nil, err
	}
	for name, value := range set {
		setIf(q, name, value)
	}
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := f.Context(cmd.Context())
	defer cancel()
	return l.list(ctx, c, f.IO, noun, q, fl.following())
}
