package dashboard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/textcut"
)

// row is one span of the tree as drawn: the route's span (GET /traces/{trace_id}/tree), its
// waterfall bar (in thousandths of the trace's time span, the SVG's view box) and its detail.
type row struct {
	api.TreeSpan
	BarX, BarW int
	DetailURL  string
}

// SubTokens is the subtree's tokens, input and output.
func (r row) SubTokens() int64 { return r.Subtree.InputTokens + r.Subtree.OutputTokens }

type traceData struct {
	Trace      api.Trace
	Signals    []api.Signal
	Rows       []row
	SpanTotal  int
	Page       int
	Pages      int
	Prev, Next string
	First      int
	// Whole: the rows are a page of the whole trace's tree (api.SpanTree.Whole); otherwise of
	// a tree of the page's own spans, and the trace's tokens are not summed.
	Whole bool

	// TokensIn and TokensOut are the trace's tokens, as the tree route sums them.
	TokensIn, TokensOut int64
}

// Tokens is the trace's tokens, input and output.
func (d traceData) Tokens() int64 { return d.TokensIn + d.TokensOut }

// trace serves GET /ui/traces/{trace_id}: the trace's figures and its span tree as a
// waterfall, 200 spans a page, each span with its subtree's totals: spans, errors, cost and
// tokens, all as GET /traces/{trace_id}/tree answers them. The spans' bodies are read only
// when a span is opened.
func (s *server) trace(w http.ResponseWriter, r *http.Request) {
	traceID := r.PathValue("trace_id")
	if err := validID("trace", traceID); err != nil {
		s.fail(w, r, err)
		return
	}
	pageNo := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 1_000_000/spansPerPage {
			s.fail(w, r, errs.Invalid("The page must be a whole number from 1 to %d.", 1_000_000/spansPerPage))
			return
		}
		pageNo = n
	}
	c, ctx := s.api(r)
	// The tree and the trace's signals, read at once.
	var tree api.SpanTree
	var signals []api.Signal
	var treeErr, signalsErr error
	var wg sync.WaitGroup
	wg.Go(func() { tree, treeErr = c.TraceTree(ctx, traceID, (pageNo-1)*spansPerPage, spansPerPage) })
	wg.Go(func() { signals, signalsErr = c.EntitySignals(ctx, "trace", traceID) })
	wg.Wait()
	if err := cmp.Or(treeErr, signalsErr); err != nil {
		s.fail(w, r, err)
		return
	}
	pages := max((tree.SpanCount+spansPerPage-1)/spansPerPage, 1)
	if pageNo > pages {
		s.fail(w, r, errs.NotFound("This trace has %d pages of spans.", pages))
		return
	}
	base := "/ui/traces/" + url.PathEscape(traceID)
	d := traceData{Trace: tree.Trace, Signals: signals, SpanTotal: tree.SpanCount, Page: pageNo, Pages: pages, First: tree.Offset + 1,
		Whole: tree.Whole, Rows: rowsOf(tree.Trace, tree.Spans)}
	if tree.Whole {
		d.TokensIn, d.TokensOut = tree.InputTokens, tree.OutputTokens
	}
	if pageNo > 1 {
		d.Prev = base + "?page=" + strconv.Itoa(pageNo-1)
	}
	if pageNo < pages {
		d.Next = base + "?page=" + strconv.Itoa(pageNo+1)
	}
	s.render(w, r, http.StatusOK, "trace", page{Title: "Trace " + tree.Trace.Name, Nav: "traces", Data: d})
}

// spanURL is the page of a span of a trace (its detail; the script fetches it as a fragment).
func spanURL(traceID, spanID string) string {
	return "/ui/traces/" + url.PathEscape(traceID) + "/spans/" + url.PathEscape(spanID)
}

// rowsOf are the spans of a page of t's tree as drawn, each with its bar on the trace's time
// span (widened to the page's spans, which may have changed since the trace was read).
func rowsOf(t api.Trace, spans []api.TreeSpan) []row {
	if len(spans) == 0 {
		return nil
	}
	start, end := spans[0].StartedAt, spans[0].StartedAt
	if t.StartedAt != nil {
		start = *t.StartedAt
	}
	if t.EndedAt != nil {
		end = *t.EndedAt
	}
	for _, s := range spans {
		if s.StartedAt.Before(start) {
			start = s.StartedAt
		}
		if e := cmp.Or(s.EndedAt, &s.StartedAt); e.After(end) {
			end = *e
		}
	}
	total := end.Sub(start)
	rows := make([]row, len(spans))
	for i, s := range spans {
		rows[i] = row{TreeSpan: s, DetailURL: spanURL(t.ID, s.ID), BarW: 1000}
		if total > 0 {
			rows[i].BarX = int(1000 * s.StartedAt.Sub(start) / total)
			rows[i].BarW = 0
			if s.EndedAt != nil {
				rows[i].BarW = int(1000 * s.EndedAt.Sub(s.StartedAt) / total)
			}
			rows[i].BarW = max(rows[i].BarW, 2)
		}
	}
	return rows
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
	img := s.pageOrigins().img
	for _, a := range list.Attachments {
		out = append(out, attachment{
			Name: cmp.Or(a.Label, a.ID), ContentType: a.ContentType, URL: a.URL, Size: a.Size,
			Inline: img != "" && strings.HasPrefix(a.ContentType, "image/") && imageOrigin(a.URL) == img,
		})
	}
	return out
}

// feedbackForm is the thumbs and reason form of a span, with the input of a refused post.
type feedbackForm struct {
	Thumbs, Reason, Error string
}

type spanData struct {
	Span                   api.Span
	Signals                []api.Signal
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

// span serves GET /ui/traces/{trace_id}/spans/{span_id}: a span's detail, its attachments and
// feedback, read through the REST API. The script fetches
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
	c, ctx := s.api(r)
	// The span with its signals (GET /spans/{span_id}); an id the API refuses (not a UUID) or
	// does not know is no span of this trace.
	one, err := c.Span(ctx, spanID)
	var ce *client.Error
	if errors.As(err, &ce) && (ce.Status == http.StatusNotFound || ce.Status == http.StatusBadRequest) {
		return spanData{}, errs.NotFound("There is no such span in this trace.")
	}
	if err != nil {
		return spanData{}, err
	}
	if one.TraceID != traceID {
		return spanData{}, errs.NotFound("There is no such span in this trace.")
	}
	sp := one.Span
	base := "/ui/traces/" + url.PathEscape(traceID)
	d := spanData{Span: sp, Signals: one.Signals, TraceURL: base, SpanURL: spanURL(traceID, spanID),
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
	for k, v := range sp.Tags {
		d.Tags = append(d.Tags, tag{k, v})
	}
	slices.SortFunc(d.Tags, func(a, b tag) int { return strings.Compare(a.Key, b.Key) })
	if l := sp.PromptLink; l != nil && cmp.Or(l.PromptSlug, l.Task) != "" {
		d.FeedbackURL = d.SpanURL + "/feedback"
	}

	// Attachments (their presigned URLs) and feedback come from the REST API, read at once; a
	// failure there leaves a note, not an error page: the span itself was read. The span's
	// record lists its attachments, so a span without any (most) costs no attachments request,
	// which would read the span's record again.
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
			if n, ok := m[k].(float64); ok && n >= 0 && n <= api.MaxTokenCount {
				return strconv.FormatInt(int64(n), 10)
			}
		}
		return ""
	}
	return first("inputTokens", "input_tokens", "prompt_tokens", "gen_ai.usage.input_tokens"),
		first("outputTokens", "output_tokens", "completion_tokens", "gen_ai.usage.output_tokens")
}
