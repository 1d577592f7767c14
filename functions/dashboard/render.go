package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/web"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/*
var assetFS embed.FS

// contentSecurityPolicy allows the dashboard's own script, style and images only: no inline
// script, style or event handler, no other origin, no framing, forms only to itself.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// asset is one embedded file under its long-cache name ("app.3f9c1a2b.js").
type asset struct {
	body        []byte
	contentType string
}

// assets are the embedded files by hashed name; assetURL maps a plain name to its URL.
var assets, assetURL = loadAssets()

func loadAssets() (map[string]asset, map[string]string) {
	byName, urls := map[string]asset{}, map[string]string{}
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		panic(err) // embedded at build time
	}
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	for _, e := range entries {
		body, err := assetFS.ReadFile("assets/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(e.Name())
		hashed := strings.TrimSuffix(e.Name(), ext) + "." + hex.EncodeToString(sum[:6]) + ext
		byName[hashed] = asset{body: body, contentType: types[ext]}
		urls[e.Name()] = "/ui/assets/" + hashed
	}
	return byName, urls
}

// serveAsset serves GET /ui/assets/<hashed name>, cached for a year: a changed file has a new
// name.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := assets[strings.TrimPrefix(r.URL.Path, "/ui/assets/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(a.body)
}

var funcs = template.FuncMap{
	"asset": func(name string) string { return assetURL[name] },
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
	"deref":    func(s *string) string { return deref(s) },
	"add":      func(a, b int) int { return a + b },
	"depthCls": func(d int) string { return fmt.Sprintf("d%d", min(d, maxIndent)) },
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

func costOrDash(c *float64) string {
	if c == nil {
		return "–"
	}
	return fmt.Sprintf("$%.6f", *c)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// pageTemplates are the pages, each the layout with its own content; fragments stand alone.
var pageTemplates = func() map[string]*template.Template {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	out := map[string]*template.Template{}
	for _, name := range []string{"login", "overview", "traces", "trace", "span", "prompts", "prompt", "error"} {
		out[name] = template.Must(template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+name+".html", "templates/span-fragment.html"))
	}
	out["span-fragment"] = template.Must(template.New("fragment").Funcs(funcs).ParseFS(templateFS, "templates/span-fragment.html"))
	return out
}()

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
	d    Deps
	keys *keyCheck
}

func newServer(d Deps) *server { return &server{d: d, keys: newKeyCheck(d.Keys, d.KeyCacheTTL)} }

// securityHeaders are sent with every page and fragment.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
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
	t := pageTemplates[name]
	root := "layout.html"
	if name == "span-fragment" {
		root = "fragment"
	}
	if err := t.ExecuteTemplate(&buf, root, p); err != nil {
		slog.ErrorContext(r.Context(), "render page", "page", name, "error", err)
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString("internal error; quote the request id " + web.RequestID(r.Context()) + " when reporting it")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	securityHeaders(w.Header())
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

var errNotFound = errs.NotFound("There is no such page.")

// errorData is what the error page shows.
type errorData struct {
	Status    int
	Heading   string
	Message   string
	RequestID string
}

// fail writes err as an error page with the status of its code (the one table in shared/web).
// Internal errors are logged with the request id and shown as a generic message.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
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
