package tracing

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
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
	// all walks the whole list, from cursor to cursor; cursor resumes a list where an answer
	// said it goes on.
	all    bool
	cursor string
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
	fl.BoolVar(&l.all, "all", false, fmt.Sprintf("list every one of the %s: follow the server's cursors to the end of the list, --limit a request", l.list.Noun))
	fl.StringVar(&l.cursor, "cursor", "", "continue the list where an answer said it goes on (its next cursor), with the same filters and order; not with --offset")
}

// query is the query of the list flags and the filters: o's paging, then each filter flag
// given. now is the clock relative times are read against.
func (l *filters) query(cmd *cobra.Command, o *cmdutil.ListOptions, now time.Time) (api.ListQuery, error) {
	q := api.ListQuery{Names: l.names, Limit: o.Limit, Offset: o.Offset, Cursor: l.cursor}
	if l.cursor != "" && o.Offset != 0 {
		return q, cmdutil.FlagErrorf("--cursor and --offset cannot be combined: a cursor continues where its answer ended")
	}
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

// lister is a list method of the client in its two forms: one request (SpansPage), and the
// walk of the whole list from cursor to cursor (SpanPages).
type lister[Q, T any] struct {
	page  func(*client.Client, context.Context, Q) ([]T, client.ListInfo, error)
	pages func(*client.Client, context.Context, Q) iter.Seq2[client.Page[T], error]
}

var (
	spanLister    = lister[api.SpanQuery, api.Span]{(*client.Client).SpansPage, (*client.Client).SpanPages}
	traceLister   = lister[api.TraceQuery, api.Trace]{(*client.Client).TracesPage, (*client.Client).TracePages}
	sessionLister = lister[api.SessionQuery, api.Session]{(*client.Client).SessionsPage, (*client.Client).SessionPages}
)

// run lists q, one page or, with all, every page to the end of the list, hands the records to
// print, then tells on stderr what the answer lacks and where the list goes on (tell). A walk
// that fails after some pages prints what it read and says where to resume before it fails.
// lookup is a list of a trace's or a session's items.
func (l lister[Q, T]) run(ctx context.Context, c *client.Client, ios *cmdutil.IOStreams, noun string, q Q, all, lookup bool,
	print func([]T) error) error {
	if !all {
		recs, info, err := l.page(c, ctx, q)
		if err != nil {
			return err
		}
		if err := print(recs); err != nil {
			return err
		}
		tell(ios, noun, info, lookup, all, false)
		return nil
	}
	var recs []T
	var last client.ListInfo
	var stopped error
	read := 0
	for p, err := range l.pages(c, ctx, q) {
		if err != nil {
			stopped = err
			break
		}
		recs, last = append(recs, p.Records...), p.Info
		read++
	}
	if stopped != nil && read == 0 {
		return stopped
	}
	if err := print(recs); err != nil {
		return err
	}
	tell(ios, noun, last, lookup, all, stopped != nil)
	return stopped
}

// tell says on stderr what a list answer lacks and how to get it, and where the list goes on;
// stdout keeps the records only. In text output a partial answer is warned of (even with
// --quiet) and a list that goes on past a whole page is noted; in json output both are one
// object, {"list": {"next_cursor", "partial", "truncated", "scanned", "warnings"}}, written
// whenever the list goes on or the answer is partial. info is the answer's, or with all the
// last page's of the walk, which stopped (on an error) before the end. lookup is a list of a
// trace's or a session's items, which no time window narrows.
func tell(ios *cmdutil.IOStreams, noun string, info client.ListInfo, lookup, all, stopped bool) {
	var warnings []string
	switch {
	case info.Truncated && lookup:
		warnings = append(warnings, fmt.Sprintf("the server stopped at its scan bound after examining %d %s (%s: true): %s past those "+
			"are not listed, at any offset or cursor", info.Scanned, noun, client.HeaderScanTruncated, noun))
	case info.Truncated:
		warnings = append(warnings, fmt.Sprintf("the server stopped at its scan bound after examining %d %s (%s: true): this list "+
			"covers only the newest %s of the time window and may miss older matches; narrow the window with --created-after "+
			"and --created-before (--created-before moves it back)", info.Scanned, noun, client.HeaderScanTruncated, noun))
	}
	resume := resumeFlag(info)
	switch {
	case stopped && info.More():
		warnings = append(warnings, fmt.Sprintf("the walk of every %s stopped before the end of the list: rerun with %s --all to read on", noun, resume))
	case info.Cut:
		warnings = append(warnings, fmt.Sprintf("the server answered fewer %s than --limit asked (it cut its answer by size, or ended it "+
			"at its bound on one request's work) and more follow: rerun with %s to read on, or with --all for every one", noun, resume))
	}
	if ios.JSON() {
		if len(warnings) == 0 && !info.More() {
			return
		}
		out := listNote{Partial: info.Partial() || stopped, Truncated: info.Truncated, Scanned: info.Scanned,
			Warnings: append([]string{}, warnings...)}
		switch {
		case info.NextCursor != "":
			out.NextCursor = &info.NextCursor
		case info.NextOffset > 0:
			out.NextOffset = &info.NextOffset
		}
		_ = json.NewEncoder(ios.ErrOut).Encode(map[string]listNote{"list": out})
		return
	}
	for _, w := range warnings {
		ios.Warnf("%s", w)
	}
	if info.More() && !info.Cut && !all { // a whole page, and its list goes on
		ios.Infof("more %s follow: rerun with %s to read on, or with --all for every one", noun, resume)
	}
}

// listNote is what json output says of a list on stderr (tell).
type listNote struct {
	// NextCursor is null when the list has ended.
	NextCursor *string `json:"next_cursor"`
	// NextOffset is a server's without cursors, when it cut its answer by size.
	NextOffset *int     `json:"next_offset,omitempty"`
	Partial    bool     `json:"partial"`
	Truncated  bool     `json:"truncated"`
	Scanned    int      `json:"scanned"`
	Warnings   []string `json:"warnings"`
}

// resumeFlag is the flag that reads on after an answer: --cursor with its next cursor, or
// --offset with the next offset of a server without cursors.
func resumeFlag(info client.ListInfo) string {
	if info.NextCursor == "" && info.NextOffset > 0 {
		return fmt.Sprintf("--offset %d", info.NextOffset)
	}
	return "--cursor " + shellWord(info.NextCursor)
}

// shellWord is s as one word of a POSIX shell: as it is when it holds only characters no
// shell reads, else single-quoted.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/=+,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fetchList runs a list command: the list options checked, the query made by query (from the
// flags, against the factory's clock), sent with l through the factory's client under the
// command's deadline, the records handed to print and what the answer lacks told (lister.run).
// lookup is a list of a trace's or a session's items.
func fetchList[Q, T any](cmd *cobra.Command, f *cmdutil.Factory, o *cmdutil.ListOptions, query func(now time.Time) (Q, error),
	fl *filters, l lister[Q, T], lookup bool, print func([]T) error) error {
	if err := o.Check(); err != nil {
		return err
	}
	q, err := query(f.Now())
	if err != nil {
		return err
	}
	c, err := f.Client()
	if err != nil {
		return err
	}
	ctx, cancel := f.Context(cmd.Context())
	defer cancel()
	return l.run(ctx, c, f.IO, fl.list.Noun, q, fl.all, lookup, print)
}
