package feedback

import (
	_ "embed"
	"html"
	"strconv"
	"strings"
)

// The feedback page is written by hand rather than by html/template: executing a template
// looks methods up by reflection, which keeps the linker from dropping any exported method of
// the binary (about 8 MB of the Feedback function's bootstrap, and its cold start). The page is
// small and fixed, so a writer that escapes every value it prints is as safe and reads as
// plainly. Every value goes through text or attr; nothing else prints data.

//go:embed page.css
var pageStyle string

// pageHTML is the HTML of one page as it is written.
type pageHTML struct{ strings.Builder }

// raw writes markup of the page itself, never data.
func (b *pageHTML) raw(s ...string) {
	for _, x := range s {
		b.WriteString(x)
	}
}

// text writes s as element content; attr writes it as a quoted attribute's value. Both escape
// the five characters HTML gives meaning to (html.EscapeString), which is enough for text and
// for double-quoted attribute values: no value is ever written in a URL, script or style
// context.
func (b *pageHTML) text(s string) { b.WriteString(html.EscapeString(s)) }
func (b *pageHTML) attr(s string) { b.text(s) }

// writeFrame writes the whole page of f.
func writeFrame(f frame) string {
	var b pageHTML
	b.raw("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
		"<meta name=\"robots\" content=\"noindex, nofollow\">\n<title>")
	b.text(f.Title)
	b.raw("</title>\n<style nonce=\"")
	b.attr(f.Nonce)
	b.raw("\">\n", pageStyle, "</style>\n</head>\n<body>\n<main>\n")
	if f.Error != nil {
		b.writeError(*f.Error)
	}
	if f.Page != nil {
		b.writeCompletions(*f.Page)
	}
	b.raw("</main>\n</body>\n</html>\n")
	return b.String()
}

func (b *pageHTML) writeError(e errorView) {
	b.raw("<h1>")
	b.text(e.Heading)
	b.raw("</h1>\n<p data-testid=\"error-message\">")
	b.text(e.Message)
	b.raw("</p>\n")
	if e.RequestID != "" {
		b.raw("<p class=\"muted\">If this keeps happening, quote request id <code data-testid=\"request-id\">")
		b.text(e.RequestID)
		b.raw("</code>.</p>\n")
	}
	if e.Back {
		b.raw("<p><a href=\"\">Back to the completions</a></p>\n")
	}
}

func (b *pageHTML) writeCompletions(p pageView) {
	b.raw("<h1>Feedback on <code>")
	b.text(p.Slug)
	b.raw("</code></h1>\n<p class=\"muted\">These are the most recent completions of the prompt <code>")
	b.text(p.Slug)
	b.raw("</code>. Mark each one good or bad and, if you like, say why and what it should have answered. ",
		"You can change your feedback later from this browser.</p>\n")
	if len(p.Completions) == 0 {
		b.raw("<p data-testid=\"empty\">No completions of <code>")
		b.text(p.Slug)
		b.raw("</code> yet.</p>\n")
	}
	for _, c := range p.Completions {
		b.writeCompletion(c)
	}
}

func (b *pageHTML) writeCompletion(c completionView) {
	b.raw("<article class=\"completion")
	if c.Saved {
		b.raw(" reviewed")
	}
	b.raw("\" id=\"")
	b.attr(c.Anchor())
	b.raw("\" data-testid=\"completion\" data-completion-id=\"")
	b.attr(c.ID)
	b.raw("\">\n<header>\n<time datetime=\"")
	b.attr(c.At.Format("2006-01-02T15:04:05Z07:00"))
	b.raw("\">")
	b.text(c.At.Format("2 Jan 2006, 15:04:05 UTC"))
	b.raw("</time>")
	if c.Model != "" {
		b.raw(" · model <code>")
		b.text(c.Model)
		b.raw("</code>")
	}
	switch c.Verdict {
	case "up":
		b.raw("<span class=\"verdict\" data-testid=\"verdict\">Reviewed: 👍 good</span>")
	case "down":
		b.raw("<span class=\"verdict\" data-testid=\"verdict\">Reviewed: 👎 bad</span>")
	}
	b.raw("\n</header>\n")
	if c.Saved {
		b.raw("<p class=\"notice\" role=\"status\" data-testid=\"saved-notice\">Thanks, your feedback was saved.</p>\n")
	}
	b.raw("<h2>Input</h2>\n")
	b.writeShown(c.Input)
	b.raw("<h2>Output</h2>\n")
	b.writeShown(c.Output)
	b.raw("<form method=\"post\">\n<input type=\"hidden\" name=\"completion_id\" value=\"")
	b.attr(c.ID)
	b.raw("\">\n<label for=\"reason-")
	b.attr(c.ID)
	b.raw("\">Why? (optional)</label>\n<textarea id=\"reason-")
	b.attr(c.ID)
	b.raw("\" name=\"reason\" rows=\"2\" data-testid=\"reason\">")
	b.text(c.Reason)
	b.raw("</textarea>\n<label for=\"expected-")
	b.attr(c.ID)
	b.raw("\">What should the output have been? (optional)</label>\n<textarea id=\"expected-")
	b.attr(c.ID)
	b.raw("\" name=\"expected_output\" rows=\"3\" data-testid=\"expected-output\">")
	b.text(c.Expected)
	b.raw("</textarea>\n<div class=\"actions\">\n",
		"<button type=\"submit\" name=\"thumbs\" value=\"up\" data-testid=\"thumbs-up\" aria-label=\"Thumbs up: good output\">👍 Good</button>\n",
		"<button type=\"submit\" name=\"thumbs\" value=\"down\" data-testid=\"thumbs-down\" aria-label=\"Thumbs down: bad output\">👎 Bad</button>\n",
		"</div>\n</form>\n</article>\n")
}

// writeShown writes an input or output: "(none)" when the span has none, else the text and how
// much of it was left out.
func (b *pageHTML) writeShown(s shownText) {
	if s.Missing {
		b.raw("<p class=\"muted\">(none)</p>\n")
		return
	}
	b.raw("<pre>")
	b.text(s.Text)
	b.raw("</pre>\n")
	if s.Cut > 0 {
		b.raw("<p class=\"cut\">… ", strconv.Itoa(s.Cut), " more characters not shown.</p>\n")
	}
}
