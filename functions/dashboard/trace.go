package dashboard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/textcut"
	"github.com/plumehq/plume/shared/trace"
)

// row is one span of the tree as drawn: its summary, depth and waterfall bar (in thousandths
// of the trace's time span, the SVG's view box).
type row struct {
	trace.Summary
	Depth       int
	HasChildren bool
	BarX, BarW  int
	DetailURL   string
	// The span's subtree (itself and every span under it): its spans, its spans with an
	// error, the sum of its known costs (SubCosted false when no span of it has one) and of
	// its llm spans' input and output tokens.
	SubSpans, SubErrors int
	SubCost             float64
	SubCosted           bool // some span of the subtree has a cost
	SubIn, SubOut       int64
}

// SubTokens is the subtree's tokens, input and output.
func (r row) SubTokens() int64 { return r.SubIn + r.SubOut }

type traceData struct {
	Trace      trace.Trace
	Rows       []row
	SpanTotal  int
	Page       int
	Pages      int
	Prev, Next string
	First      int

	// TokensIn and TokensOut are the trace's tokens: the sums over all its spans' summaries
	// (every page's), which the tree reads anyway.
	TokensIn, TokensOut int64
}

// Tokens is the trace's tokens, input and output.
func (d traceData) Tokens() int64 { return d.TokensIn + d.TokensOut }

// trace serves GET /ui/traces/{trace_id}: the trace's figures (its tokens summed from the
// summaries) and its span tree as a waterfall, 200 spans a page in tree order, each span with
// its subtree's totals: spans, errors, cost and tokens. The tree is built from the span
// summaries in DynamoDB; the spans' bodies are read only when a span is opened.
func (s *server) trace(w http.ResponseWriter, r *http.Request) {
	traceID := r.PathValue("trace_id")
	if err := validID("trace", traceID); err != nil {
		s.fail(w, r, err)
		return
	}
	pageNo := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 1_000_000 {
			s.fail(w, r, errs.Invalid("The page must be a whole number from 1."))
			return
		}
		pageNo = n
	}
	projectID := sessionOf(r).ProjectID
	ts, _, err := s.d.Queries.Traces(r.Context(), projectID, trace.TraceQuery{ID: traceID, Common: trace.Common{Limit: 1}})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(ts) == 0 {
		s.fail(w, r, errs.NotFound("There is no such trace."))
		return
	}
	ids, err := s.d.Reader.TraceSpanIDs(r.Context(), projectID, traceID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sums, err := s.d.Reader.Summaries(r.Context(), projectID, ids)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows := treeRows(sums)
	pages := max((len(rows)+spansPerPage-1)/spansPerPage, 1)
	if pageNo > pages {
		s.fail(w, r, errs.NotFound("This trace has %d pages of spans.", pages))
		return
	}
	base := "/ui/traces/" + url.PathEscape(traceID)
	d := traceData{Trace: ts[0], SpanTotal: len(rows), Page: pageNo, Pages: pages, First: (pageNo-1)*spansPerPage + 1}
	for _, r := range rows {
		d.TokensIn, d.TokensOut = d.TokensIn+r.InputTokens, d.TokensOut+r.OutputTokens
	}
	d.Rows = rows[(pageNo-1)*spansPerPage : min(pageNo*spansPerPage, len(rows))]
	for i := range d.Rows {
		d.Rows[i].DetailURL = spanURL(traceID, d.Rows[i].SpanID)
	}
	if pageNo > 1 {
		d.Prev = base + "?page=" + strconv.Itoa(pageNo-1)
	}
	if pageNo < pages {
		d.Next = base + "?page=" + strconv.Itoa(pageNo+1)
	}
	s.render(w, r, http.StatusOK, "trace", page{Title: "Trace " + ts[0].Name, Nav: "traces", Data: d})
}

// spanURL is the page of a span of a trace (its detail; the script fetches it as a fragment).
func spanURL(traceID, spanID string) string {
	return "/ui/traces/" + url.PathEscape(traceID) + "/spans/" + url.PathEscape(spanID)
}

// treeRows orders spans depth first, children by start time, roots first (a span whose parent
// is not in the trace is a root), each with its depth and waterfall bar. Every span appears
// once, even in a parent cycle, which a client can send. It works on indices into one slice of
// the summaries, sorted once by start, so that every child list is in start order as it is
// built and no summary is copied but into its row.
func treeRows(sums map[string]trace.Summary) []row {
	n := len(sums)
	if n == 0 {
		return nil
	}
	vals, spans := make([]trace.Summary, 0, n), make([]*trace.Summary, n)
	for _, s := range sums {
		vals = append(vals, s)
	}
	for i := range vals {
		spans[i] = &vals[i]
	}
	slices.SortFunc(spans, func(a, b *trace.Summary) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), strings.Compare(a.SpanID, b.SpanID))
	})
	index := make(map[string]int32, n)
	for i, s := range spans {
		index[s.SpanID] = int32(i)
	}
	// Children as one array: kids[first[p]:first[p+1]] are p's, in start order.
	parent, first := make([]int32, n), make([]int32, n+1)
	for i, s := range spans {
		parent[i] = -1
		if p, ok := index[s.ParentSpanID]; ok && s.ParentSpanID != s.SpanID {
			parent[i] = p
			first[p+1]++
		}
	}
	for p := range n {
		first[p+1] += first[p]
	}
	kids, next := make([]int32, first[n]), slices.Clone(first[:n])
	for i, p := range parent {
		if p >= 0 {
			kids[next[p]] = int32(i)
			next[p]++
		}
	}
	start, end := spans[0].StartedAt, spans[0].StartedAt
	for _, s := range spans {
		e := s.StartedAt
		if s.EndedAt != nil {
			e = *s.EndedAt
		}
		if e.After(end) {
			end = e
		}
	}
	total := end.Sub(start)
	bar := func(s *trace.Summary) (x, w int) {
		if total <= 0 {
			return 0, 1000
		}
		x = int(1000 * s.StartedAt.Sub(start) / total)
		if s.EndedAt != nil {
			w = int(1000 * s.EndedAt.Sub(s.StartedAt) / total)
		}
		return x, max(w, 2)
	}
	rows := make([]row, 0, n)
	seen := make([]bool, n)
	type item struct{ i, depth int32 }
	var stack []item
	walk := func(root int32) {
		stack = append(stack[:0], item{root, 0})
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[it.i] {
				continue
			}
			seen[it.i] = true
			own := kids[first[it.i]:first[it.i+1]]
			x, w := bar(spans[it.i])
			rows = append(rows, row{Summary: *spans[it.i], Depth: int(it.depth), HasChildren: len(own) > 0, BarX: x, BarW: w})
			for _, k := range slices.Backward(own) {
				stack = append(stack, item{k, it.depth + 1})
			}
		}
	}
	for i := range int32(n) {
		if parent[i] < 0 {
			walk(i)
		}
	}
	// Spans in a cycle of parents, reachable from no root: each unseen one, in start order,
	// is walked as a root.
	for i := range int32(n) {
		if !seen[i] {
			walk(i)
		}
	}
	rollUp(rows)
	return rows
}

// rollUp sums each row's subtree: rows are in depth-first order, so a row's subtree is the
// rows after it that are deeper, and walking backwards each row takes the totals its
// children left at the level below it.
func rollUp(rows []row) {
	type total struct {
		spans, errors int
		cost          float64
		costed        bool
		in, out       int64
	}
	// By depth: the totals of rows at that depth not yet taken by a parent. Its first 16
	// levels are on the stack (a constant size that does not escape): most trees need no
	// allocation here.
	pending := make([]total, 0, 16)
	for i := len(rows) - 1; i >= 0; i-- {
		d := rows[i].Depth
		for len(pending) < d+2 {
			pending = append(pending, total{})
		}
		t := pending[d+1]
		pending[d+1] = total{}
		t.spans++
		if rows[i].HasError {
			t.errors++
		}
		if c := rows[i].Cost; c != nil {
			t.cost, t.costed = t.cost+*c, true
		}
		t.in, t.out = t.in+rows[i].InputTokens, t.out+rows[i].OutputTokens
		rows[i].SubSpans, rows[i].SubErrors = t.spans, t.errors
		rows[i].SubCost, rows[i].SubCosted = t.cost, t.costed
		rows[i].SubIn, rows[i].SubOut = t.in, t.out
		p := &pending[d]
		p.spans, p.errors, p.cost, p.costed = p.spans+t.spans, p.errors+t.errors, p.cost+t.cost, p.costed || t.costed
		p.in, p.out = p.in+t.in, p.out+t.out
	}
}

// shown is a long text as the detail shows it: cut, with how much was left out.
type shown struct {
	Text    string
	Present bool
	Omitted int
}

func show(s *string) shown {
	if s == nil {
		return shown{}
	}
	cut, _ := textcut.Cut(*s, maxShownBytes)
	return shown{Text: cut, Present: true, Omitted: len(*s) - len(cut)}
}

type tag struct{ Key, Value string }

// attachment is a file of a span as its detail shows it.
type attachment struct {
	Name, ContentType, URL string
	Size                   int64
	// Inline: an image shown in the page, its URL at the bucket's origin (which every page's
	// CSP allows); else a link.
	Inline bool
}

// attachments are a span's attachments as the API lists them, an image inline when its URL
// is at the bucket's origin (Deps.ImageOrigin), any other file or URL linked.
func (s *server) attachments(list api.AttachmentList) []attachment {
	out := make([]attachment, 0, len(list.Attachments))
	for _, a := range list.Attachments {
		out = append(out, attachment{
			Name: cmp.Or(a.Label, a.ID), ContentType: a.ContentType, URL: a.URL, Size: a.Size,
			Inline: s.imgOrigin != "" && strings.HasPrefix(a.ContentType, "image/") && imageOrigin(a.URL) == s.imgOrigin,
		})
	}
	return out
}

// feedbackForm is the thumbs and reason form of a span, with the input of a refused post.
type feedbackForm struct {
	Thumbs, Reason, Error string
}

type spanData struct {
	Span                   trace.Span
	TraceURL, SpanURL      string
	Input, Output          payload
	Attributes             shown
	Error, Stack           shown
	Tags                   []tag
	InputTokens, OutTokens string
	Attachments            []attachment
	AttachmentsNote        string
	Feedback               []api.HumanFeedbackItem
	Evaluations            []api.Evaluation
	FeedbackNote           string
	// FeedbackURL is where the form posts, "" when the span takes no feedback (the API
	// records feedback on the completions of a prompt: an llm span linked to one).
	FeedbackURL string
	CSRF        string
	Form        feedbackForm
	// Full: the span's own page (not the fragment, of which a trace's page may hold several).
	Full bool
}

// span serves GET /ui/traces/{trace_id}/spans/{span_id}: a span's detail, read as GET /spans
// reads it, with its attachments and feedback read through the REST API. The script fetches
// it with X-Plume-Fragment: 1 for the fragment it puts in the tree; without the script it is a
// page of its own.
func (s *server) span(w http.ResponseWriter, r *http.Request) {
	fragment := r.Header.Get("X-Plume-Fragment") == "1"
	d, err := s.spanDetail(r, r.PathValue("trace_id"), r.PathValue("span_id"), !fragment)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Vary", "X-Plume-Fragment")
	if fragment {
		s.render(w, r, http.StatusOK, "span-fragment", page{Data: d})
		return
	}
	s.renderSpan(w, r, http.StatusOK, d)
}

// renderSpan writes the span's own page.
func (s *server) renderSpan(w http.ResponseWriter, r *http.Request, status int, d spanData) {
	s.render(w, r, status, "span", page{Title: "Span " + d.Span.Name, Nav: "traces", Data: d})
}

// spanDetail reads what the detail of a span shows; full: for the span's own page, not the
// fragment.
func (s *server) spanDetail(r *http.Request, traceID, spanID string, full bool) (spanData, error) {
	if err := cmp.Or(validID("trace", traceID), validID("span", spanID)); err != nil {
		return spanData{}, err
	}
	spans, _, err := s.d.Queries.Spans(r.Context(), sessionOf(r).ProjectID, trace.SpanQuery{ID: spanID, Common: trace.Common{Limit: 1}})
	if err != nil {
		return spanData{}, err
	}
	if len(spans) == 0 || spans[0].TraceID != traceID {
		return spanData{}, errs.NotFound("There is no such span in this trace.")
	}
	sp := spans[0]
	base := "/ui/traces/" + url.PathEscape(traceID)
	d := spanData{Span: sp, TraceURL: base, SpanURL: spanURL(traceID, spanID),
		Input: readPayload(sp.InputData, "span-input"), Output: readPayload(sp.OutputData, "span-output"),
		Error: show(sp.ErrorMessage), Stack: show(sp.ErrorStack), CSRF: sessionOf(r).CSRF, Full: full}
	if len(sp.Attributes) > 0 && string(sp.Attributes) != "{}" {
		var buf bytes.Buffer
		text := string(sp.Attributes)
		if json.Indent(&buf, sp.Attributes, "", "  ") == nil {
			text = buf.String()
		}
		d.Attributes = show(&text)
		d.InputTokens, d.OutTokens = tokensOf(sp.Attributes)
	}
	for k, v := range sp.Tags.Map() {
		d.Tags = append(d.Tags, tag{k, v})
	}
	slices.SortFunc(d.Tags, func(a, b tag) int { return strings.Compare(a.Key, b.Key) })
	if l := sp.Link; l != nil && cmp.Or(l.PromptSlug, l.Task) != "" {
		d.FeedbackURL = d.SpanURL + "/feedback"
	}

	// Attachments (their presigned URLs) and feedback come from the REST API, read at once; a
	// failure there leaves a note, not an error page: the span itself was read. The span's
	// record lists its attachments, so a span without any (most) costs no attachments request,
	// which would read the span's record again.
	c, ctx := s.api(r)
	var wg sync.WaitGroup
	if len(sp.Attachments) > 0 {
		wg.Go(func() {
			if list, err := c.Attachments(ctx, spanID); err != nil {
				d.AttachmentsNote = readNote(r, "attachments", err)
			} else {
				d.Attachments = s.attachments(list)
			}
		})
	}
	if fb, err := c.UnifiedFeedback(ctx, api.EntitySpan, spanID); err != nil {
		d.FeedbackNote = readNote(r, "feedback", err)
	} else {
		for _, it := range fb.Items {
			switch {
			case it.Human != nil:
				d.Feedback = append(d.Feedback, *it.Human)
			case it.Judge != nil:
				d.Evaluations = append(d.Evaluations, it.Judge.Evaluation)
			}
		}
	}
	wg.Wait()
	return d, nil
}

// tokensOf reads the token counts the SDKs put in a span's attributes (COMPAT.md: inputTokens
// and outputTokens; OpenTelemetry's gen_ai.usage.*), as text, "" when absent.
func tokensOf(attrs json.RawMessage) (in, out string) {
	var m map[string]any
	if json.Unmarshal(attrs, &m) != nil {
		return "", ""
	}
	first := func(keys ...string) string {
		for _, k := range keys {
			if n, ok := m[k].(float64); ok && n >= 0 && n <= trace.MaxTokens {
				return strconv.FormatInt(int64(n), 10)
			}
		}
		return ""
	}
	return first("inputTokens", "input_tokens", "prompt_tokens", "gen_ai.usage.input_tokens"),
		first("outputTokens", "output_tokens", "completion_tokens", "gen_ai.usage.output_tokens")
}
