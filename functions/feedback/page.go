package feedback

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// Limits of a page.
const (
	// pageCompletions is how many of the prompt's newest completions a page shows.
	pageCompletions = 20
	// pageTextLimit is how many characters of an input or output a page shows.
	pageTextLimit = 4000
	// maxPageForm caps a review form: expected_output and reason at their limits, URL-encoded.
	maxPageForm = 256 << 10
)

// The reviewer cookie keeps a random id per browser, which tells apart the people who share one
// link: each of them has their own feedback record per completion (feedback.Link.Reviewer).
const (
	reviewerCookie    = "plume_reviewer"
	reviewerIDBytes   = 16
	reviewerCookieAge = 365 * 24 * time.Hour
)

// rateLimitRetryAfter is the Retry-After of a rate-limited page (RFC 9110 §10.2.3): links are
// rated per minute, so waiting a minute always helps.
const rateLimitRetryAfter = "60"

// pageServer serves the public feedback-link pages, GET and POST /f/{token}: whoever has a
// link's URL reviews the recent completions of its prompt there.
//
// These are pages for people who have a link and nothing else: no account, no API key, often no
// idea what an API is. So they answer every outcome, failures included, with a small HTML page
// in plain words (fail), never with the JSON error body of web.Error, which is meant for
// programs. The status codes are still those of web.Status, so both agree on what each error
// code means.
type pageServer struct{ d Deps }

func newPageServer(d Deps) *pageServer { return &pageServer{d: d} }

// frame is what the page shows (pagehtml.go writes it): the completions of a link, or an error.
type frame struct {
	Nonce string
	Title string
	Page  *pageView
	Error *errorView
}

// pageView is a link's page: its prompt's recent completions, each with a review form.
type pageView struct {
	Slug        string
	Completions []completionView
}

type completionView struct {
	ID     string
	At     time.Time
	Model  string
	Input  shownText
	Output shownText
	// Saved is set on the completion the reviewer has just given feedback on.
	Saved bool
	// Verdict is "up" or "down" when the reviewer has just reviewed this completion; Reason and
	// Expected are what they wrote, to keep in the form.
	Verdict  string
	Reason   string
	Expected string
}

// shownText is a span's input or output as shown: at most pageTextLimit characters.
type shownText struct {
	Text    string
	Missing bool // the span has none
	Cut     int  // characters left out
}

type errorView struct {
	Heading   string
	Message   string
	RequestID string
	// Back offers a way back to the completions, after a form that was not saved.
	Back bool
}

// show serves GET /f/{token}: the newest completions of the link's prompt, each with a review
// form. After a submission (?done=<completion id>) it thanks the reviewer and marks their verdict.
func (p *pageServer) show(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	link, err := p.d.Links.Open(ctx, r.PathValue("token"), clientOf(r))
	if err != nil {
		p.fail(w, r, err, opening)
		return
	}
	reviewer := reviewerID(w, r)
	sums, err := p.d.Completions.Completions(ctx, link.ProjectID, link.PromptSlug, pageCompletions)
	if err != nil {
		p.fail(w, r, err, opening)
		return
	}
	locs := make(map[string]trace.Location, len(sums))
	for _, s := range sums {
		if s.Location.Key != "" {
			locs[s.SpanID] = s.Location
		}
	}
	spans := map[string]trace.Span{}
	if len(locs) > 0 {
		if spans, err = trace.LoadRecords(ctx, p.d.Blobs, locs); err != nil {
			p.fail(w, r, err, opening)
			return
		}
	}

	view := &pageView{Slug: link.PromptSlug, Completions: make([]completionView, 0, len(sums))}
	done := r.URL.Query().Get("done")
	for _, s := range sums {
		c := toCompletionView(s, spans[s.SpanID])
		if done != "" && s.SpanID == done {
			c.Saved = true
			p.addVerdict(r, &c, link, reviewer)
		}
		view.Completions = append(view.Completions, c)
	}
	p.render(w, http.StatusOK, frame{Title: "Feedback on " + link.PromptSlug, Page: view})
}

// submit serves POST /f/{token}: one review form, stored as the reviewer's feedback on the
// completion (replacing their earlier one), then a redirect to the page that thanks them.
func (p *pageServer) submit(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	link, err := p.d.Links.Open(ctx, r.PathValue("token"), clientOf(r))
	if err != nil {
		p.fail(w, r, err, opening)
		return
	}
	completionID, in, err := readReviewForm(w, r)
	if err != nil {
		p.fail(w, r, err, saving)
		return
	}
	user := link.Reviewer(reviewerID(w, r))
	f, err := p.d.Feedback.Submit(ctx, link.ProjectID, link.PromptSlug, completionID, user, link.ID, in)
	if err != nil {
		p.fail(w, r, err, saving)
		return
	}
	// A relative reference (RFC 9110 §10.2.2) resolves to /f/{token}?done=...: the token is
	// not repeated, and the redirect holds wherever the pages are mounted. The fragment brings
	// the reviewer back to the completion they reviewed, where the page thanks them.
	setPageHeaders(w.Header(), "")
	w.Header().Set("Location", "?done="+url.QueryEscape(f.SpanID)+"#"+completionAnchor(f.SpanID))
	w.WriteHeader(http.StatusSeeOther)
}

// readReviewForm reads a review form (application/x-www-form-urlencoded, at most maxPageForm
// bytes): completion_id, thumbs ("up" or "down"), and the optional reason and expected_output.
func readReviewForm(w http.ResponseWriter, r *http.Request) (string, feedback.Input, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return "", feedback.Input{}, errs.Errorf(errs.CodeUnsupportedMedia, "the form must be sent as application/x-www-form-urlencoded")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxPageForm)
	if err := r.ParseForm(); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return "", feedback.Input{}, errs.Errorf(errs.CodeTooLarge, "the form is larger than %d KB; shorten the reason or the expected output", maxPageForm>>10)
		}
		return "", feedback.Input{}, errs.Invalid("the form could not be read")
	}
	form := r.PostForm
	completionID := strings.TrimSpace(form.Get("completion_id"))
	if completionID == "" {
		return "", feedback.Input{}, errs.Invalid("the form names no completion (completion_id is missing)")
	}
	var up bool
	switch form.Get("thumbs") {
	case "up":
		up = true
	case "down":
	default:
		return "", feedback.Input{}, errs.Invalid("choose thumbs up or thumbs down")
	}
	in := feedback.Input{ThumbsUp: &up, Reason: optionalText(form.Get("reason")), ExpectedOutput: optionalText(form.Get("expected_output"))}
	return completionID, in, nil
}

// optionalText is a textarea's text with browser line endings (CRLF) made LF, or nil when it
// is blank.
func optionalText(s string) *string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	if s == "" {
		return nil
	}
	return &s
}

// reviewerID returns the reviewer id of the browser's cookie, setting a new one when it has
// none (or a malformed one).
func reviewerID(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(reviewerCookie); err == nil && validReviewerID(c.Value) {
		return c.Value
	}
	b := make([]byte, reviewerIDBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	id := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{
		Name: reviewerCookie, Value: id, Path: "/f/", MaxAge: int(reviewerCookieAge / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: isHTTPS(r),
	})
	return id
}

func validReviewerID(s string) bool {
	if len(s) != 2*reviewerIDBytes {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// isHTTPS reports whether the browser reached us over HTTPS, directly or through API Gateway or
// another proxy that says so in X-Forwarded-Proto.
func isHTTPS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// addVerdict marks c with the reviewer's stored feedback. The page still serves without it, so
// a failed read is logged, not shown.
func (p *pageServer) addVerdict(r *http.Request, c *completionView, link feedback.Link, reviewer string) {
	ctx := r.Context()
	items, err := p.d.Reader.EntityFeedback(ctx, link.ProjectID, feedback.EntitySpan, c.ID)
	if err != nil {
		if !errs.Is(err, errs.CodeNotFound) {
			slog.WarnContext(ctx, "read reviewer's feedback for the feedback page", "error", err, "link_id", link.ID)
		}
		return
	}
	id := link.Reviewer(reviewer).ID
	for _, it := range items {
		f := it.Feedback
		if f == nil || f.Calibration != nil || f.CreatedBy.ID != id {
			continue
		}
		c.Verdict = "down"
		if f.ThumbsUp {
			c.Verdict = "up"
		}
		if f.Reason != nil {
			c.Reason = *f.Reason
		}
		if f.ExpectedOutput != nil {
			c.Expected = *f.ExpectedOutput
		}
		return
	}
}

// completionAnchor is the id of a completion's element on the page.
func completionAnchor(id string) string { return "completion-" + id }

// Anchor is the id of c's element on the page.
func (c completionView) Anchor() string { return completionAnchor(c.ID) }

func toCompletionView(s trace.Summary, span trace.Span) completionView {
	c := completionView{ID: s.SpanID, At: s.StartedAt.UTC(), Input: shown(span.InputData), Output: shown(span.OutputData)}
	var attrs struct {
		Model json.RawMessage `json:"model"`
	}
	if json.Unmarshal(span.Attributes, &attrs) == nil {
		_ = json.Unmarshal(attrs.Model, &c.Model) // a model that is not a string is not shown
	}
	return c
}

// shown cuts s to pageTextLimit characters.
func shown(s *string) shownText {
	if s == nil || *s == "" {
		return shownText{Missing: true}
	}
	n := 0
	for i := range *s {
		if n == pageTextLimit {
			return shownText{Text: (*s)[:i], Cut: utf8.RuneCountInString((*s)[i:])}
		}
		n++
	}
	return shownText{Text: *s}
}

// step is what a request was doing when it failed.
type step int

const (
	opening step = iota // opening the link, or reading what its page shows
	saving              // reading and storing a review form
)

// fail answers err with an error page: the status web.Status gives its code and, for errors
// meant for the client, a message a person can act on. Any other error is logged with the
// request id and answered with a generic 500 that quotes it. A form that was not saved leads
// back to the completions.
func (p *pageServer) fail(w http.ResponseWriter, r *http.Request, err error, during step) {
	ctx := r.Context()
	code := errs.CodeOf(err)
	status := web.Status(code)
	v := &errorView{Message: sentence(clientMessage(err))}
	switch {
	case code == errs.CodeInternal:
		// The logger (web.NewLogger) adds the request id of ctx to the record.
		slog.ErrorContext(ctx, "feedback page failed", "error", err, "method", r.Method)
		v.Heading = "Something went wrong"
		v.Message = "Your request could not be completed. Please try again in a moment."
		v.RequestID = web.RequestID(ctx)
	case code == errs.CodeRateLimited:
		w.Header().Set("Retry-After", rateLimitRetryAfter)
		v.Heading = "Too many requests"
	case code == errs.CodeUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(web.RetryAfterSeconds))
		v.Heading = "Please try again"
	case during == saving:
		v.Heading = "Your feedback was not saved"
		v.Back = true
	case code == errs.CodeNotFound:
		v.Heading = "This feedback link does not exist"
		v.Message = "Check that you copied the whole address, or ask whoever shared it for a new link."
	case code == errs.CodeForbidden:
		v.Heading = "This feedback link can no longer be used"
		v.Message += " Ask whoever shared it for a new link."
	default:
		v.Heading = "This page could not be shown"
	}
	p.render(w, status, frame{Title: v.Heading, Error: v})
}

// clientOf is the source address of r (API Gateway's sourceIp in Lambda), without its port.
func clientOf(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// failOpening answers a request refused before its link was opened (a malformed token).
func (p *pageServer) failOpening(w http.ResponseWriter, r *http.Request, err error) {
	p.fail(w, r, err, opening)
}

// recovered serves h, answering a panic with the error page of an internal error instead of
// the JSON error of web.Chain's recoverer: a person reads these pages.
func (p *pageServer) recovered(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				p.fail(w, r, fmt.Errorf("panic: %v", v), opening)
			}
		}()
		h(w, r)
	})
}

// clientMessage is the message of err meant for the client, "" for internal errors.
func clientMessage(err error) string {
	if e, ok := errors.AsType[*errs.Error](err); ok && e.Code != errs.CodeInternal {
		return e.Message
	}
	return ""
}

// sentence starts s with a capital letter and ends it with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	first, size := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(first)) + s[size:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// render writes f with status and the headers of every page.
func (p *pageServer) render(w http.ResponseWriter, status int, f frame) {
	f.Nonce = newNonce()
	setPageHeaders(w.Header(), f.Nonce)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, writeFrame(f))
}

// setPageHeaders sets the headers of every answer of the pages. The token is in the URL, so
// nothing may carry it away: no referrer, no caching, no framing, no script, and forms post
// only back to us. nonce admits the page's one inline style sheet.
func setPageHeaders(h http.Header, nonce string) {
	style := "'none'"
	if nonce != "" {
		style = "'nonce-" + nonce + "'"
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src "+style+
		"; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
}

// newNonce returns a fresh CSP nonce: 128 random bits, URL-safe base64 (which CSP allows and
// HTML needs no escaping for).
func newNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}
