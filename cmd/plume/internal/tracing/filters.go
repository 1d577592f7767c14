package tracing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// filters are the flags of the filters every list route takes, each named after its query
// parameter (--created-after is created_after) and described as the API describes it
// (api.List). The server checks the values; the flags check what they can before anything is
// sent.
type filters struct {
	list                        api.List
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

// doc is the description of the list's parameter name, with a flag's note.
func (l *filters) doc(name, note string) string {
	p, _ := l.list.Param(name)
	return p.Doc + note
}

// add adds the filter flags to cmd.
func (l *filters) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	relative := ", or a duration before now (90m, 24h)"
	fl.StringVar(&l.createdAfter, "created-after", "", l.doc(api.ParamCreatedAfter, relative))
	fl.StringVar(&l.createdBefore, "created-before", "", l.doc(api.ParamCreatedBefore, relative))
	fl.StringArrayVar(&l.names, "name", nil, l.doc(api.ParamNames, "; repeatable"))
	fl.BoolVar(&l.hasError, "has-error", false, l.doc(api.ParamHasError, " (--has-error=false)"))
	fl.Float64Var(&l.durationMin, "duration-min", 0, l.doc(api.ParamDurationMin, ""))
	fl.Float64Var(&l.durationMax, "duration-max", 0, l.doc(api.ParamDurationMax, ""))
	fl.Float64Var(&l.costMin, "cost-min", 0, l.doc(api.ParamCostMin, ""))
	fl.Float64Var(&l.costMax, "cost-max", 0, l.doc(api.ParamCostMax, ""))
	fl.StringVar(&l.sortBy, "sort-by", "", l.doc(api.ParamSortBy, ""))
	fl.StringVar(&l.sortOrder, "sort-order", "", l.doc(api.ParamSortOrder, ""))
	fl.StringArrayVar(&l.tags, "tag", nil, "only "+l.list.Noun+" with this tag, as `key=value`; repeatable, all must match")
	fl.BoolVar(&l.all, "all", false, fmt.Sprintf("when the server cuts its answer by size, ask for the rest (up to %d requests) until --limit %s are listed", client.MaxFollowedPages, l.list.Noun))
}

// query is the query of the list flags and the filters: o's paging, then each filter flag
// given. now is the clock relative times are read against.
func (l *filters) query(cmd *cobra.Command, o *cmdutil.ListOptions, now time.Time) (api.ListQuery, error) {
	q := api.ListQuery{Names: l.names, Limit: o.Limit, Offset: o.Offset}
	var err error
	if q.CreatedAfter, err = timeParam("created-after", l.createdAfter, now); err != nil {
		return q, err
	}
	if q.CreatedBefore, err = timeParam("created-before", l.createdBefore, now); err != nil {
		return q, err
	}
	fl := cmd.Flags()
	if fl.Changed("has-error") {
		q.HasError = &l.hasError
	}
	for _, n := range []struct {
		flag  string
		value float64
		to    **float64
	}{
		{"duration-min", l.durationMin, &q.DurationMin}, {"duration-max", l.durationMax, &q.DurationMax},
		{"cost-min", l.costMin, &q.CostMin}, {"cost-max", l.costMax, &q.CostMax},
	} {
		if fl.Changed(n.flag) {
			*n.to = &n.value
		}
	}
	if l.sortBy != "" && !slices.Contains(l.list.Sorts, l.sortBy) {
		return q, cmdutil.FlagErrorf("--sort-by must be one of %s, not %q", strings.Join(l.list.Sorts, ", "), l.sortBy)
	}
	q.SortBy = l.sortBy
	switch o := api.SortOrder(strings.ToLower(l.sortOrder)); o {
	case "", api.SortAsc, api.SortDesc:
		q.SortOrder = o
	default:
		return q, cmdutil.FlagErrorf("--sort-order must be asc or desc, not %q", l.sortOrder)
	}
	for _, t := range l.tags {
		k, v, ok := strings.Cut(t, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return q, cmdutil.FlagErrorf("--tag %q: want key=value", t)
		}
		if _, own := l.list.Param(k); own {
			return q, cmdutil.FlagErrorf("--tag %q: the server reads %s as a filter of its own, not as a tag", t, k)
		}
		if q.Tags == nil {
			q.Tags = map[string]string{}
		}
		q.Tags[k] = v
	}
	return q, nil
}

// timeParam is the value of a time flag: an ISO 8601 time as given (the server parses it), or
// a duration, which is that long before now; "" when not given.
func timeParam(flag, value string, now time.Time) (api.QueryTime, error) {
	if value == "" {
		return "", nil
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		return api.QueryTime(value), nil
	}
	if d < 0 {
		return "", cmdutil.FlagErrorf("--%s %s: a duration before now must not be negative", flag, value)
	}
	return api.TimeOf(now.Add(-d)), nil
}

// lister is a list method of the client in its two forms: one request (SpansPage), and one
// that follows the server's next offsets (AllSpans).
type lister[Q, T any] struct {
	page, all func(*client.Client, context.Context, Q) ([]T, client.ListInfo, error)
}

var (
	spanLister    = lister[api.SpanQuery, api.Span]{(*client.Client).SpansPage, (*client.Client).AllSpans}
	traceLister   = lister[api.TraceQuery, api.Trace]{(*client.Client).TracesPage, (*client.Client).AllTraces}
	sessionLister = lister[api.SessionQuery, api.Session]{(*client.Client).SessionsPage, (*client.Client).AllSessions}
)

// list sends q with the page method, or the following one when all; a partial answer is
// warned of on stderr (warnPartial). lookup is a list of a trace's or a session's items.
func (l lister[Q, T]) list(ctx context.Context, c *client.Client, ios *cmdutil.IOStreams, noun string, q Q, all, lookup bool) ([]T, error) {
	list := l.page
	if all {
		list = l.all
	}
	recs, info, err := list(c, ctx, q)
	if err != nil {
		return nil, err
	}
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

// fetchList runs a list command's request: the list options checked, the query made by query
// (from the flags, against the factory's clock), sent with l through the factory's client
// under the command's deadline, a partial answer warned of. lookup is a list of a trace's or
// a session's items.
func fetchList[Q, T any](cmd *cobra.Command, f *cmdutil.Factory, o *cmdutil.ListOptions, query func(now time.Time) (Q, error),
	fl *filters, l lister[Q, T], lookup bool) ([]T, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	q, err := query(f.Now())
	if err != nil {
		return nil, err
	}
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := f.Context(cmd.Context())
	defer cancel()
	return l.list(ctx, c, f.IO, fl.list.Noun, q, fl.all, lookup)
}
