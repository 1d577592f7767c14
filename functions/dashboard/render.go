package dashboard

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/dashboard/internal/view"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/web"
)

//go:embed assets/*
var assetFS embed.FS

// contentSecurityPolicy allows the dashboard's own script, style and images only: no inline
// script, style or event handler, no other origin, no framing, forms only to itself. The
// dashboard's pages send it with images also allowed from the bucket's origin (policyWith).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// policyWith is contentSecurityPolicy with images also allowed from imgOrigin (an origin as
// imageOrigin returns it), or contentSecurityPolicy itself when imgOrigin is "".
func policyWith(imgOrigin string) string {
	if imgOrigin == "" {
		return contentSecurityPolicy
	}
	return strings.Replace(contentSecurityPolicy, "img-src 'self';", "img-src 'self' "+imgOrigin+";", 1)
}

// asset is one embedded bundle under its long-cache name ("app.3f9c1a2b.js").
type asset struct {
	body []byte
	// gzipped is body gzipped, compressed on the first request that accepts it (at the best
	// compression it is milliseconds of every cold start otherwise); nil when body is under
	// web.GzipMinBytes.
	gzipped     func() []byte
	contentType string
}

// assets are the embedded bundles by hashed name; assetURL maps a bundle's plain name
// ("app.css", "app.js") to its URL. Each bundle is every file of its extension under assets/,
// app.css or app.js first and then by name, so that each area of the dashboard keeps its style
// and script in a file of its own and a page still loads one of each (and app.svg, the icon).
// Every script file is a self-contained function expression. They are read on the first page
// or asset served, not at start.
var bundles = sync.OnceValues(loadAssets)

func loadAssets() (map[string]asset, map[string]string) {
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		panic(err) // embedded at build time
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	rank := func(name string) string { // app.* sorts first
		if strings.HasPrefix(name, "app.") {
			return "0" + name
		}
		return "1" + name
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(rank(a), rank(b)) })
	bundles := map[string][]byte{}
	for _, name := range names {
		body, err := assetFS.ReadFile("assets/" + name)
		if err != nil {
			panic(err)
		}
		ext := path.Ext(name)
		bundles[ext] = append(append(bundles[ext], body...), '\n')
	}
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	byName, urls := map[string]asset{}, map[string]string{}
	for ext, body := range bundles {
		sum := sha256.Sum256(body)
		hashed := "app." + hex.EncodeToString(sum[:6]) + ext
		a := asset{body: body, contentType: types[ext]}
		if len(body) >= web.GzipMinBytes {
			a.gzipped = sync.OnceValue(func() []byte { return gzipAsset(body) })
		}
		byName[hashed] = a
		urls["app"+ext] = "/ui/assets/" + hashed
	}
	return byName, urls
}

// gzipAsset is body gzipped at the best compression: a bundle is compressed once per process.
func gzipAsset(body []byte) []byte {
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		panic(err) // a constant, valid level
	}
	_, _ = zw.Write(body) // a bytes.Buffer does not fail
	_ = zw.Close()
	return out.Bytes()
}

// serveAsset serves GET /ui/assets/<hashed name>, cached for a year: a changed file has a new
// name. A bundle that has a gzipped form is sent in it to a browser that accepts gzip; the
// name, and so the cache, is that of the content, whatever its encoding.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	assets, _ := bundles()
	a, ok := assets[strings.TrimPrefix(r.URL.Path, "/ui/assets/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	body := a.body
	if a.gzipped != nil && web.AcceptsGzip(r.Header) { // the middleware says it varies
		body = a.gzipped()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// funcs are the functions the pages call. A page reads fields and calls these, never a method
// of its data: the renderer (package view) looks no method up by name, so that the linker can
// drop the methods nothing calls; a method a page needs is here as a method expression.
var funcs = view.Funcs{
	"asset": func(name string) string { _, urls := bundles(); return urls[name] },
	// pathEscape makes one path segment of an id: ids are the client's text.
	"pathEscape": url.PathEscape,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
	},
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"ms":       formatMS,
	"cost":     func(c float64) string { return fmt.Sprintf("$%.6f", c) },
	"costp":    func(c *float64) string { return costOrDash(c) },
	"tokens":   tokensOrDash,
	"count":    formatCount,
	"deref":    func(s *string) string { return deref(s) },
	"add":      func(a, b int) int { return a + b },
	"depthCls": func(d int) string { return fmt.Sprintf("d%d", min(d, maxIndent)) },
	// number writes a float as short as it reads back ("0.05", "1200"); numberp "–" for nil.
	"number":      func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) },
	"numberp":     func(v *float64) string { return numberOrDash(v) },
	"stateLabel":  stateLabel,
	"filterLabel": filterLabel,
	// The list filter's, the diff's, the trace's and the prompt's derived values.
	"filterApplied": listFilter.Applied,
	"filterChoices": listFilter.Choices,
	"tagInputs":     listFilter.TagInputs,
	"fromInput":     listFilter.FromInput,
	"toInput":       listFilter.ToInput,
	"sortLabel":     listFilter.SortLabel,
	"ownSummary":    listFilter.OwnSummary,
	"changed":       diffResult.Changed,
	"traceTokens":   traceData.Tokens,
	"subTokens":     row.SubTokens,
	"isZero":        time.Time.IsZero,
}

// maxIndent is the deepest indentation the style sheet has (classes d0 to d24); deeper spans
// are drawn at that depth and their depth is written out.
const maxIndent = 24

func formatMS(ms *float64) string {
	if ms == nil {
		return "–"
	}
	if *ms >= 1000 {
		return fmt.Sprintf("%.2f s", *ms/1000)
	}
	return fmt.Sprintf("%.1f ms", *ms)
}

// tokensOrDash writes a token count with thousands separators, "–" for none.
func tokensOrDash(n int64) string {
	if n == 0 {
		return "–"
	}
	return formatCount(n)
}

func costOrDash(c *float64) string {
	if c == nil {
		return "–"
	}
	return fmt.Sprintf("$%.6f", *c)
}

// deref is *p, the zero value for nil (an absent string, a counter the metrics leave null).
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// The pages are templates/*.html compiled into compiledPages (pages_gen.go) at build time:
// html/template escapes them and package view executes the escaped trees, so neither
// html/template nor text/template is linked (docs/performance.md). Regenerate after editing a
// template (TestCompiledPagesCurrent fails until then):
//
//go:generate go test -run TestCompiledPagesCurrent -update .

// pageRoot is the template a page executes: the layout of a page, "fragment" of a fragment
// (templates/*-fragment.html, a "fragment" of its own that a page may also include).
func pageRoot(name string) string {
	if strings.HasSuffix(name, "-fragment") {
		return "fragment"
	}
	return "layout.html"
}

// page is what the layout reads.
type page struct {
	Title string
	// Session is the signed-in session, nil on the sign-in and error pages of a visitor.
	Session *session
	// Nav is the current section, for aria-current.
	Nav  string
	Data any
}

// server holds the dashboard's dependencies.
type server struct {
	d Deps
	// origins, once known, are the images' origin and the pages' policy (pageOrigins).
	origins   atomic.Pointer[pageOrigins]
	originsMu sync.Mutex
	// apiHTTP serves the API client's requests with Deps.API in this process.
	apiHTTP *http.Client
}

// pageOrigins are Deps.ImageOrigin as an origin (img, "" when it is none) and the
// Content-Security-Policy of every page, which allows images from it.
type pageOrigins struct{ img, csp string }

func newServer(d Deps) *server {
	return &server{d: d, apiHTTP: &http.Client{Transport: web.InProcess{Handler: d.API}}}
}

// pageOrigins returns the images' origin and the pages' policy: Deps.ImageOrigin, or what
// Deps.ImageOriginOf answers the first time it answers.
func (s *server) pageOrigins() pageOrigins {
	if o := s.origins.Load(); o != nil {
		return *o
	}
	s.originsMu.Lock()
	defer s.originsMu.Unlock()
	if o := s.origins.Load(); o != nil {
		return *o
	}
	raw := s.d.ImageOrigin
	if raw == "" && s.d.ImageOriginOf != nil {
		var err error
		if raw, err = s.d.ImageOriginOf(); err != nil {
			slog.Error("dashboard: the attachments' origin", "error", err)
			return pageOrigins{csp: policyWith("")} // asked again by the next page
		}
	}
	img := imageOrigin(raw)
	o := &pageOrigins{img: img, csp: policyWith(img)}
	s.origins.Store(o)
	return *o
}

// securityHeaders are sent with every page and fragment.
func (s *server) securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", s.pageOrigins().csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
}

// render writes the page named name with status; the signed-in session, when there is one,
// is taken from the request.
func (s *server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	if sess := sessionOf(r); sess.idHash != "" && p.Session == nil {
		p.Session = &sess
	}
	var buf bytes.Buffer
	err := errors.New("no such page")
	if set, ok := compiledPages[name]; ok {
		err = set.Execute(&buf, pageRoot(name), p, funcs)
	}
	if renderChecked != nil {
		renderChecked(name, p, buf.Bytes(), err)
	}
	if err != nil {
		slog.ErrorContext(r.Context(), "render page", "page", name, "error", err)
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString("internal error; quote the request id " + web.RequestID(r.Context()) + " when reporting it")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	s.securityHeaders(w.Header())
	writeBody(w, status, buf.Bytes())
}

// renderChecked, when set (by the tests), sees every page rendered: the tests render it again
// with html/template and hold the two equal.
var renderChecked func(name string, p page, out []byte, err error)

var errNotFound = errs.NotFound("There is no such page.")

// errorData is what the error page shows.
type errorData struct {
	Status    int
	Heading   string
	Message   string
	RequestID string
}

// recovered answers a panic in next with the error page (500, the request id, nothing of the
// panic shown), as web.Chain's recovery answers the API's JSON routes.
func (s *server) recovered(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.fail(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// fail writes err as an error page with the status of its code (the one table in shared/web).
// Internal errors are logged with the request id and shown as a generic message.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	err = apiError(err)
	var e *errs.Error
	if !errors.As(err, &e) || e.Code == errs.CodeInternal {
		slog.ErrorContext(r.Context(), "request failed", "error", err, "method", r.Method, "path", r.URL.Path)
		e = &errs.Error{Code: errs.CodeInternal, Message: "Something went wrong on our side. Quote the request id when reporting it."}
	}
	status := web.Status(e.Code)
	heading := map[int]string{
		http.StatusBadRequest: "That request is not valid", http.StatusForbidden: "Not allowed",
		http.StatusNotFound: "Not found", http.StatusServiceUnavailable: "Try again in a moment",
	}[status]
	if heading == "" {
		heading = http.StatusText(status)
	}
	s.render(w, r, status, "error", page{Title: heading, Data: errorData{
		Status: status, Heading: heading, Message: e.Message, RequestID: web.RequestID(r.Context()),
	}})
}

// Paging of the pages.
const (
	tracesPerPage = 50
	spansPerPage  = 200
	// maxShownBytes cuts a span's input, output and attributes on its detail: a span may carry
	// megabytes, the API has them all.
	maxShownBytes = 64 << 10
	maxIDLen      = api.MaxIDLen
	maxNameFilter = api.MaxSpanNameLen
)

// validID checks an id taken from the path before any read: 1 to 128 bytes of UTF-8 without
// control characters, as ingestion accepts them.
func validID(what, id string) error {
	if id == "" || len(id) > maxIDLen || !utf8.ValidString(id) || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return errs.NotFound("There is no such %s.", what)
	}
	return nil
}
