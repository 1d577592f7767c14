package pagegen_test

import (
	"bytes"
	"errors"
	"html/template"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/dashboard/internal/pagegen"
	"github.com/plumehq/plume/functions/dashboard/internal/view"
)

type item struct {
	Name  string
	N     int
	U     uint8
	F     float64
	B     bool
	P     *int
	NilP  *int
	S     []string
	Empty []string
	M     map[string]int
	IM    map[int]string
	Any   any
	Nil   any
	T     time.Time
	Sub   *item
	Items []item
}

func (i item) Method() string { return "m" }

var funcs = view.Funcs{
	"add":   func(a, b int) int { return a + b },
	"upper": func(s string) string { return s + "!" },
	"deref": func(p *int) int { return *p },
	"val":   func(n int) int { return n },
	"fail":  func() (string, error) { return "", errors.New("failed") },
	"zero":  time.Time.IsZero,
	"join":  func(s ...string) string { return concat(s) },
}

func concat(s []string) string {
	var b []byte
	for _, x := range s {
		b = append(b, x...)
	}
	return string(b)
}

func data() item {
	n := 7
	return item{
		Name: `<a href="x">&'"+</a>`, N: 3, U: 3, F: 2.5, B: true, P: &n,
		S: []string{"b", "a"}, M: map[string]int{"z": 1, "a": 2, "m": 3}, IM: map[int]string{3: "c", 1: "a", 2: "b"},
		Any: item{Name: "inner", N: 1}, T: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Sub:   &item{Name: "sub", Sub: &item{Name: "subsub"}},
		Items: []item{{Name: "one", N: 1}, {Name: "two", N: 0}, {Name: "javascript:x", N: 2}},
	}
}

// renderBoth renders text as a page named "page" with html/template and with view.
func renderBoth(t *testing.T, text string, dot any) (want string, wantErr error, got string, gotErr error) {
	t.Helper()
	fm := template.FuncMap(funcs)
	var w bytes.Buffer
	wantErr = template.Must(template.New("page").Funcs(fm).Parse(text)).Execute(&w, dot)
	set, _, err := pagegen.Compile(template.Must(template.New("page").Funcs(fm).Parse(text)), "page", slices.Collect(maps.Keys(funcs)))
	require.NoError(t, err)
	var g bytes.Buffer
	gotErr = set.Execute(&g, "page", dot, funcs)
	return w.String(), wantErr, g.String(), gotErr
}

// TestExecuteAsHTMLTemplate: view's execution of compiled templates writes what
// html/template writes, byte for byte, for the constructs and functions the pages use, on
// crafted data; and fails where it fails.
func TestExecuteAsHTMLTemplate(t *testing.T) {
	tests := []struct{ name, text string }{
		{"text and fields", `<p class="{{.Name}}">{{.Name}} {{.N}} {{.U}} {{.F}} {{.B}} {{.P}} {{.NilP}} {{.S}} {{.M}} {{.Any}} {{.Nil}} {{.T}}</p>`},
		{"nested fields", `{{.Sub.Name}} {{.Sub.Sub.Name}} {{.Any.Name}} {{.M.a}} {{.M.missing}}`},
		{"comment stripped", `a<!-- gone -->b{{/* c */}}`},
		{"truth", `{{if .N}}n{{end}}{{if .Empty}}e{{else}}!e{{end}}{{if .Nil}}nil{{else if .P}}p{{end}}{{if .NilP}}x{{end}}{{if .Any}}any{{end}}{{if .T}}t{{end}}{{if .M}}m{{end}}`},
		{"with else", `{{with .Sub}}{{.Name}}{{end}}{{with .Empty}}x{{else}}none{{end}}{{with .Nil}}x{{else with .Name}}{{.}}{{end}}`},
		{"range slice with index", `{{range $i, $x := .Items}}{{if $i}}, {{end}}{{$i}}={{$x.Name}}/{{.N}}{{end}}`},
		{"range empty else", `{{range .Empty}}x{{else}}empty{{end}}{{range .Nil}}x{{else}}nil{{end}}`},
		{"range maps sorted", `{{range $k, $v := .M}}{{$k}}{{$v}} {{end}}{{range .IM}}{{.}}{{end}}`},
		{"range int", `{{range .N}}{{.}}{{end}}{{range $i := 2}}[{{$i}}]{{end}}`},
		{"variables", `{{$x := .N}}{{$y := "s"}}{{with .Sub}}{{$x}}{{$.Name}}{{.Name}}{{$x = 9}}{{$x}}{{end}}{{$x}}{{$y}}`},
		{"define and call", `{{define "row"}}<td>{{.Name}}|{{$.N}}</td>{{end}}{{template "row" .}}{{template "row" .Sub}}{{range .Items}}{{template "row" .}}{{end}}`},
		{"call without data", `{{define "x"}}[{{.}}]{{end}}{{template "x"}}`},
		{"comparisons", `{{eq .N 3}} {{eq .U 3}} {{eq .N .U}} {{ne .Name "a"}} {{lt .N 4}} {{le .N 3}} {{gt .F 2.0}} {{ge .U .N}} {{eq .Name "x" "y" .Name}} {{eq .NilP nil}} {{eq .Nil nil}}`},
		{"and or not", `{{and .N .Name}} {{and .Empty .Name}} {{or .Empty .N}} {{or .Nil .Empty}} {{not .B}} {{not .Empty}} {{if and .B (not .Empty)}}yes{{end}}`},
		{"len index printf", `{{len .S}} {{len .M}} {{len .Name}} {{index .S 1}} {{index .M "m"}} {{index .M "none"}} {{index .IM 2}} {{printf "%d-%s-%.1f-%v" .N .Name .F .P}} {{printf "%q" .S}}`},
		{"funcs and pipelines", `{{add .N 1}} {{.N | add 2}} {{upper .Name}} {{deref .P}} {{val 5}} {{.Name | upper | upper}} {{zero .T}} {{if not (zero .T)}}set{{end}} {{(add 1 2)}} {{join "a" "b" .Name}}`},
		{"attribute contexts", `<input value="{{.Name}}" data-x='{{.Name}}'><textarea>{{.Name}}</textarea><title>{{.Name}}</title>`},
		{"url contexts", `{{range .Items}}<a href="{{.Name}}">1</a><a href="/ui/{{.Name}}?q={{.Name}}&n={{.N}}#{{.Name}}">2</a><img src="/x/{{.Name}}">{{end}}<a href="?a={{.S}}">3</a>`},
		{"a function's error", `a{{fail}}b`},
		{"nil pointer field", `{{.NilP}}{{.Sub.Sub.Sub.Name}}`},
		{"field of nil any", `{{.Nil.Name}}`},
		{"missing field", `{{.NoSuchField}}`},
		{"wrong arg type", `{{add .Name 1}}`},
		{"index out of range", `{{index .S 5}}`},
		{"incomparable", `{{eq .N .Name}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr, got, gotErr := renderBoth(t, tt.text, data())
			require.Equal(t, wantErr == nil, gotErr == nil, "html/template's error %v, view's %v", wantErr, gotErr)
			if wantErr == nil {
				assert.Equal(t, want, got)
			}
		})
	}
}

// TestMethodsAreNotCalled: a template that calls a method of its data fails with view (it
// reads fields only), where html/template calls it.
func TestMethodsAreNotCalled(t *testing.T) {
	want, wantErr, _, gotErr := renderBoth(t, `{{.Method}}`, data())
	require.NoError(t, wantErr)
	assert.Equal(t, "m", want)
	assert.ErrorContains(t, gotErr, "can't evaluate field Method")
}

// TestCompileRefuses: what view does not implement fails at build time.
func TestCompileRefuses(t *testing.T) {
	for _, text := range []string{`{{range .S}}{{break}}{{end}}`, `{{html .Name}}`, `{{.Name | js}}`, `<script>var x = {{.Name}}</script>`, `{{1i}}`, `<p title={{.Name}}>`} {
		tm, err := template.New("page").Parse(text)
		require.NoError(t, err)
		_, _, err = pagegen.Compile(tm, "page", nil)
		assert.Error(t, err, text)
	}
}

// TestGenerateIsStable: generating twice writes the same file, and it parses as Go.
func TestGenerateIsStable(t *testing.T) {
	names := slices.Sorted(maps.Keys(funcs))
	fsys := os.DirFS("testdata")
	a, err := pagegen.Generate(fsys, "p", "pages", names)
	require.NoError(t, err)
	b, err := pagegen.Generate(fsys, "p", "pages", names)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Contains(t, string(a), `"one": {`)
	assert.Contains(t, string(a), `"x-fragment": {`)
}

// FuzzExecute: a string in every context the pages write one in (text, quoted attributes,
// RCDATA, a URL's start, path, query and fragment) renders as html/template renders it.
func FuzzExecute(f *testing.F) {
	for _, s := range []string{"", "plain", `<a href="x">&'"+</a>`, "javascript:alert(1)", "/ui/a b?c=d#e", "%zz%41", "\x00\xff"} {
		f.Add(s)
	}
	const text = `<p title="{{.}}">{{.}}</p><textarea>{{.}}</textarea><a href="{{.}}">a</a><a href="/x/{{.}}?q={{.}}#{{.}}">b</a>{{if .}}t{{end}}{{len .}}{{printf "%q" .}}`
	f.Fuzz(func(t *testing.T, s string) {
		want, wantErr, got, gotErr := renderBoth(t, text, s)
		require.NoError(t, wantErr)
		require.NoError(t, gotErr)
		assert.Equal(t, want, got)
	})
}
