package tracing

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// listParams are the query parameters every list endpoint shares; any other parameter is a tag
// filter (spec §4.3-4.5), named back in the X-Plume-Tag-Filters header. The parameters
// docs/tracing.md lists are these plus each endpoint's own (spanParams, traceParams,
// sessionParams).
var listParams = []string{
	"created_before", "created_after", "names", "has_error", "duration_min", "duration_max",
	"cost_min", "cost_max", "sort_by", "sort_order", "limit", "offset",
}

// The parameters of each endpoint besides listParams.
var (
	spanParams    = []string{"id", "trace_id", "session_id", "parent_span_id", "span_kind", "error_codes"}
	traceParams   = []string{"id", "session_id", "status"}
	sessionParams = []string{"id"}
)

// TraceQueryParams are the query parameters GET /traces reads itself; any other is a tag
// filter, so a tag of one of these names cannot be filtered on.
func TraceQueryParams() []string { return slices.Concat(listParams, traceParams) }

// limits of one list endpoint.
type limits struct{ def, max int }

var (
	spanLimits  = limits{def: 5000, max: 10000}
	otherLimits = limits{def: 50, max: 500}
)

// params reads query parameters, remembering the first error.
type params struct {
	q     url.Values
	known []string
	err   error
}

func newParams(q url.Values, own []string) *params {
	return &params{q: q, known: slices.Concat(listParams, own)}
}

// tagFilters returns the names of the parameters that common reads as tag filters, sorted.
func (p *params) tagFilters() []string {
	var out []string
	for k, vs := range p.q {
		if !slices.Contains(p.known, k) && len(vs) > 0 {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// setTagFilters sets api.TagFiltersHeader to the tag filter names, query-escaped (a name may hold a
// comma or bytes a header cannot), comma-separated; it sets nothing when there are none, nor
// when there are more than api.MaxTagFilters (common refuses them, and the error says how
// many: the header would only echo the query back).
func (p *params) setTagFilters(h http.Header) {
	names := p.tagFilters()
	if len(names) == 0 || len(names) > api.MaxTagFilters {
		return
	}
	for i, n := range names {
		names[i] = url.QueryEscape(n)
	}
	h.Set(api.TagFiltersHeader, strings.Join(names, ","))
}

func (p *params) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

func (p *params) str(name string) string { return strings.TrimSpace(p.q.Get(name)) }

func (p *params) uuid(name string) string {
	v := p.str(name)
	if v == "" {
		return ""
	}
	u, err := uuid.Parse(v)
	if err != nil {
		p.fail(errs.Invalid("%s must be a UUID, not %q", name, v))
		return ""
	}
	return u.String()
}

func (p *params) list(name string) []string {
	var out []string
	for _, v := range p.q[name] {
		for part := range strings.SplitSeq(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

func (p *params) float(name string) *float64 {
	v := p.str(name)
	if v == "" {
		return nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		p.fail(errs.Invalid("%s must be a number, not %q", name, v))
		return nil
	}
	return &f
}

func (p *params) boolean(name string) *bool {
	v := p.str(name)
	if v == "" {
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(errs.Invalid("%s must be true or false, not %q", name, v))
		return nil
	}
	return &b
}

func (p *params) time(name string) *time.Time {
	v := p.str(name)
	if v == "" {
		return nil
	}
	t, err := trace.ParseTimeString(v)
	if err != nil {
		p.fail(errs.Invalid("%s must be an ISO 8601 time, not %q", name, v))
		return nil
	}
	return &t
}

func (p *params) int(name string, def, lo, hi int) int {
	v := p.str(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		p.fail(errs.Invalid("%s must be an integer from %d to %d, not %q", name, lo, hi, v))
		return def
	}
	return n
}

// common reads the shared filters, sort and paging, and the tag filters: at most
// api.MaxTagFilters of them.
func (p *params) common(l limits, sorts []string) trace.Common {
	c := trace.Common{
		CreatedBefore: p.time("created_before"), CreatedAfter: p.time("created_after"),
		Names: p.list("names"), HasError: p.boolean("has_error"),
		DurationMin: p.float("duration_min"), DurationMax: p.float("duration_max"),
		CostMin: p.float("cost_min"), CostMax: p.float("cost_max"),
		SortBy: p.str("sort_by"),
		Limit:  p.int("limit", l.def, 1, l.max), Offset: p.int("offset", 0, 0, 1_000_000),
	}
	if c.SortBy != "" && !slices.Contains(sorts, c.SortBy) {
		p.fail(errs.Invalid("sort_by must be one of %s, not %q", strings.Join(sorts, ", "), c.SortBy))
	}
	switch strings.ToLower(p.str("sort_order")) {
	case "", "desc":
	case "asc":
		c.Ascending = true
	default:
		p.fail(errs.Invalid("sort_order must be asc or desc, not %q", p.str("sort_order")))
	}
	tags := p.tagFilters()
	if len(tags) > api.MaxTagFilters {
		p.fail(errs.Invalid("at most %d tag filters (query parameters other than the route's own), not %d", api.MaxTagFilters, len(tags)))
		return c
	}
	for _, k := range tags {
		if c.Tags == nil {
			c.Tags = map[string]string{}
		}
		c.Tags[k] = p.q[k][0]
	}
	return c
}
