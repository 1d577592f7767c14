package dashboard

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/dashboard/internal/pagegen"
)

var update = flag.Bool("update", false, "rewrite pages_gen.go from templates/*.html")

// templateFS is the templates as pagegen reads them.
var templateFS = os.DirFS(".")

const generatedFile = "pages_gen.go"

// TestCompiledPagesCurrent: pages_gen.go is what pagegen makes of templates/*.html now, so a
// template edited without go generate fails here; with -update it rewrites the file.
func TestCompiledPagesCurrent(t *testing.T) {
	src, err := pagegen.Generate(templateFS, "dashboard", "compiledPages", slices.Sorted(maps.Keys(funcs)))
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(generatedFile, src, 0o644))
	}
	committed, err := os.ReadFile(generatedFile)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(src, committed), "%s is not what the templates compile to: run go generate ./functions/dashboard", generatedFile)
}

// TestEveryPageCompiled: every page and fragment of templates/ is compiled, with its root.
func TestEveryPageCompiled(t *testing.T) {
	pages := pageTemplates()
	require.Greater(t, len(pages), 10)
	assert.ElementsMatch(t, slices.Collect(maps.Keys(pages)), slices.Collect(maps.Keys(compiledPages)))
	for name, set := range compiledPages {
		assert.Contains(t, set, pageRoot(name), name)
	}
}

// reference are the pages parsed by html/template with the dashboard's funcs: what the
// compiled pages are held equal to.
var reference = sync.OnceValues(func() (map[string]*template.Template, error) {
	return pagegen.Parse(templateFS, template.FuncMap(funcs))
})

// pageTemplates and pageTemplate give the tests html/template's parse of each page, as the
// dashboard parsed them before its pages were compiled.
func pageTemplates() map[string]func() *template.Template {
	pages, err := reference()
	if err != nil {
		panic(err)
	}
	out := map[string]func() *template.Template{}
	for name := range pages {
		out[name] = func() *template.Template { return template.Must(pages[name].Clone()) }
	}
	return out
}

func pageTemplate(name string) *template.Template {
	parse, ok := pageTemplates()[name]
	if !ok {
		return nil
	}
	return parse()
}

// renderedPages counts the pages the tests rendered and holds each equal, byte for byte, to
// html/template's rendering of the same template with the same data.
var renderedPages struct {
	sync.Mutex
	count      map[string]int
	mismatches []string
}

func init() {
	renderedPages.count = map[string]int{}
	renderChecked = func(name string, p page, out []byte, err error) {
		var want bytes.Buffer
		wantErr := pageTemplate(name).ExecuteTemplate(&want, pageRoot(name), p)
		renderedPages.Lock()
		defer renderedPages.Unlock()
		renderedPages.count[name]++
		switch {
		case (err == nil) != (wantErr == nil):
			renderedPages.mismatches = append(renderedPages.mismatches, fmt.Sprintf("page %s: view's error %v, html/template's %v", name, err, wantErr))
		case err == nil && !bytes.Equal(out, want.Bytes()):
			renderedPages.mismatches = append(renderedPages.mismatches, fmt.Sprintf("page %s differs from html/template's at byte %d:\nview: %q\nhtml/template: %q",
				name, firstDiff(out, want.Bytes()), around(out, firstDiff(out, want.Bytes())), around(want.Bytes(), firstDiff(out, want.Bytes()))))
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(b []byte, i int) string {
	return string(b[max(0, i-80):min(len(b), i+80)])
}

// TestMain fails the run when any page a test rendered differed from html/template's.
func TestMain(m *testing.M) {
	code := m.Run()
	renderedPages.Lock()
	if len(renderedPages.mismatches) > 0 {
		fmt.Fprintf(os.Stderr, "%d rendered pages differ from html/template's:\n%s\n", len(renderedPages.mismatches), strings.Join(renderedPages.mismatches, "\n\n"))
		code = 1
	}
	if os.Getenv("PLUME_RENDERED_PAGES") != "" {
		fmt.Fprintf(os.Stderr, "pages rendered and compared: %v\n", renderedPages.count)
	}
	renderedPages.Unlock()
	os.Exit(code)
}

// TestRenderCheckFails: a page that differs from html/template's rendering, or fails where it
// does not, is recorded as a mismatch (and so fails the run).
func TestRenderCheckFails(t *testing.T) {
	p := page{Title: "Not found", Data: errorData{Status: 404, Heading: "Not found", Message: "a <b> & c", RequestID: "r1"}}
	var good bytes.Buffer
	require.NoError(t, compiledPages["error"].Execute(&good, pageRoot("error"), p, funcs))
	tests := []struct {
		name  string
		out   []byte
		err   error
		wrong bool
	}{
		{"the same", good.Bytes(), nil, false},
		{"a byte changed", bytes.Replace(good.Bytes(), []byte("&lt;b&gt;"), []byte("<b>"), 1), nil, true},
		{"an error html/template has not", good.Bytes(), errors.New("boom"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			renderedPages.Lock()
			before := len(renderedPages.mismatches)
			renderedPages.Unlock()
			renderChecked("error", p, tt.out, tt.err)
			renderedPages.Lock()
			defer renderedPages.Unlock()
			assert.Equal(t, tt.wrong, len(renderedPages.mismatches) > before)
			renderedPages.mismatches = renderedPages.mismatches[:before]
		})
	}
}
