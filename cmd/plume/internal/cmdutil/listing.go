package cmdutil

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// Column is a field as text output shows it: a header and the dotted path of the field in the
// record's JSON ("model_id", "progress.model_calls").
type Column struct {
	Header string
	Path   string
}

// Col is a Column whose header is its path in capitals.
func Col(path string) Column {
	return Column{Header: strings.ToUpper(strings.NewReplacer(".", "_").Replace(path)), Path: path}
}

// Cols is Col of each path.
func Cols(paths ...string) []Column {
	out := make([]Column, len(paths))
	for i, p := range paths {
		out[i] = Col(p)
	}
	return out
}

// ListOptions are the flags every list command has: the server's paging, and the client-side
// --where, --select and --order, applied to the page the server answered.
type ListOptions struct {
	Limit, Offset int
	Where         []string
	Select        []string
	Order         string
	// local pages on this side: the server answered every record.
	local bool
}

// Local marks a list the server answers whole: --limit and --offset then apply here, after
// --where and --order.
func (o *ListOptions) Local() *ListOptions {
	o.local = true
	return o
}

// AddListFlags adds the list flags to cmd; limit is --limit's default.
func AddListFlags(cmd *cobra.Command, o *ListOptions, limit int) {
	f := cmd.Flags()
	f.IntVar(&o.Limit, "limit", limit, "how many records the server answers")
	f.IntVar(&o.Offset, "offset", 0, "how many records the server skips")
	f.StringArrayVar(&o.Where, "where", nil, "keep the records where `field op value` holds: op is = (equal, ignoring case), == (exactly equal), ~ (contains, ignoring case) or in [a,b]; repeatable, all must hold")
	f.StringSliceVar(&o.Select, "select", nil, "show only these `fields` (dotted paths, comma-separated)")
	f.StringVar(&o.Order, "order", "", "sort by `field[:asc|desc]`")
}

// Query returns the paging parameters of the server: limit and offset when set.
func (o *ListOptions) Query() url.Values {
	q := url.Values{}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Offset > 0 {
		q.Set("offset", strconv.Itoa(o.Offset))
	}
	return q
}

// Check validates the flags before anything is sent.
func (o *ListOptions) Check() error {
	if o.Limit < 0 || o.Offset < 0 {
		return FlagErrorf("--limit and --offset must not be negative")
	}
	for _, w := range o.Where {
		if _, err := parseWhere(w); err != nil {
			return err
		}
	}
	if _, _, err := parseOrder(o.Order); err != nil {
		return err
	}
	return nil
}

// PrintList writes rows (a slice of records) after --where and --order: in json mode the array
// (with --select, each record reduced to an object of the selected paths), else a table of
// cols (or of the selected paths).
func (s *IOStreams) PrintList(rows any, cols []Column, o *ListOptions) error {
	records, err := toRecords(rows)
	if err != nil {
		return err
	}
	records, err = o.apply(records)
	if err != nil {
		return err
	}
	if len(o.Select) > 0 {
		cols = Cols(o.Select...)
	}
	if s.JSON() {
		if len(o.Select) > 0 {
			for i, r := range records {
				records[i] = project(r, o.Select)
			}
		}
		return s.WriteJSON(records)
	}
	if len(records) == 0 {
		s.Infof("no results")
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	for i, c := range cols {
		if i > 0 {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprint(tw, c.Header)
	}
	fmt.Fprintln(tw)
	for _, r := range records {
		for i, c := range cols {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, cell(lookup(r, c.Path)))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// PrintItem writes one record: in json mode the whole of it, else a line "Header: value" per
// column ("-" for nothing) and then, under their header, the blocks that are not empty (long
// texts such as a prompt's content).
func (s *IOStreams) PrintItem(v any, cols []Column, blocks ...Column) error {
	if s.JSON() {
		return s.WriteJSON(v)
	}
	r, err := toRecord(v)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 1, ' ', 0)
	for _, c := range cols {
		fmt.Fprintf(tw, "%s:\t%s\n", c.Header, cmp.Or(text(lookup(r, c.Path)), "-"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, b := range blocks {
		body := text(lookup(r, b.Path))
		if body == "" {
			continue
		}
		fmt.Fprintf(s.Out, "\n%s:\n", b.Header)
		for line := range strings.Lines(body) {
			fmt.Fprintf(s.Out, "  %s", line)
		}
		if !strings.HasSuffix(body, "\n") {
			fmt.Fprintln(s.Out)
		}
	}
	return nil
}

// toRecords converts a slice of any JSON-encodable type into generic records.
func toRecords(rows any) ([]any, error) {
	b, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	var out []any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("a list of records: %w", err)
	}
	return out, nil
}

func toRecord(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return out, dec.Decode(&out)
}

// apply filters by every --where and sorts by --order (stable: the server's order breaks ties),
// then pages a Local list.
func (o *ListOptions) apply(records []any) ([]any, error) {
	conds := make([]condition, 0, len(o.Where))
	for _, w := range o.Where {
		c, err := parseWhere(w)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	kept := records[:0]
	for _, r := range records {
		if !slices.ContainsFunc(conds, func(c condition) bool { return !c.holds(r) }) {
			kept = append(kept, r)
		}
	}
	field, desc, err := parseOrder(o.Order)
	if err != nil {
		return nil, err
	}
	if field != "" {
		slices.SortStableFunc(kept, func(a, b any) int {
			c := compare(lookup(a, field), lookup(b, field))
			if desc {
				return -c
			}
			return c
		})
	}
	if o.local {
		kept = kept[min(o.Offset, len(kept)):]
		if o.Limit > 0 {
			kept = kept[:min(o.Limit, len(kept))]
		}
	}
	return kept, nil
}

// condition is one --where.
type condition struct {
	path   string
	op     string // "=", "==", "~" or "in"
	values []string
}

var wherePattern = regexp.MustCompile(`^\s*([A-Za-z0-9_.-]+)\s*(?:(==|=|~)\s*(.*)|\s+in\s+\[(.*)\])\s*$`)

func parseWhere(s string) (condition, error) {
	m := wherePattern.FindStringSubmatch(s)
	if m == nil {
		return condition{}, FlagErrorf("--where %q: want field=value, field==value, field~text or field in [a,b]", s)
	}
	if m[2] != "" {
		return condition{path: m[1], op: m[2], values: []string{unquote(m[3])}}, nil
	}
	var values []string
	for v := range strings.SplitSeq(m[4], ",") {
		if v = unquote(v); v != "" {
			values = append(values, v)
		}
	}
	return condition{path: m[1], op: "in", values: values}, nil
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

func (c condition) holds(r any) bool {
	got := text(lookup(r, c.path))
	switch c.op {
	case "==":
		return got == c.values[0]
	case "=":
		return strings.EqualFold(got, c.values[0])
	case "~":
		return strings.Contains(strings.ToLower(got), strings.ToLower(c.values[0]))
	}
	return slices.ContainsFunc(c.values, func(v string) bool { return strings.EqualFold(got, v) })
}

func parseOrder(s string) (field string, desc bool, err error) {
	if s == "" {
		return "", false, nil
	}
	field, dir, _ := strings.Cut(s, ":")
	switch strings.ToLower(dir) {
	case "", "asc":
		return field, false, nil
	case "desc":
		return field, true, nil
	}
	return "", false, FlagErrorf("--order %q: want field, field:asc or field:desc", s)
}

// lookup follows a dotted path through objects (and array indexes); nil when absent.
func lookup(v any, path string) any {
	for key := range strings.SplitSeq(path, ".") {
		switch node := v.(type) {
		case map[string]any:
			v = node[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(node) {
				return nil
			}
			v = node[i]
		default:
			return nil
		}
	}
	return v
}

// project reduces a record to the selected paths, keyed by path.
func project(r any, paths []string) any {
	out := make(map[string]any, len(paths))
	for _, p := range paths {
		out[p] = lookup(r, p)
	}
	return out
}

// compare orders two field values: numbers by value, nulls first, anything else by its text.
func compare(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	na, aok := a.(json.Number)
	nb, bok := b.(json.Number)
	if aok && bok {
		fa, _ := na.Float64()
		fb, _ := nb.Float64()
		return cmp.Compare(fa, fb)
	}
	return strings.Compare(text(a), text(b))
}

// text formats a field value: strings as they are, null as "", objects and arrays as compact
// JSON.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// maxCell bounds a table cell, in runes.
const maxCell = 60

// cell formats a value for a table: one line, at most maxCell runes, "-" for nothing.
func cell(v any) string {
	s := strings.Join(strings.Fields(text(v)), " ")
	if s == "" {
		return "-"
	}
	if r := []rune(s); len(r) > maxCell {
		return string(r[:maxCell-1]) + "…"
	}
	return s
}
