package view

import (
	"bytes"
	"errors"
	"html/template"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// escaperContexts are, for each escaper, a one-line html/template whose one action
// html/template escapes with it (its value is dot): the oracle each escaper is held to.
var escaperContexts = []struct {
	escaper, template string
}{
	{"htmlEscaper", `{{.}}`},
	{"attrEscaper", `<p title="{{.}}">`},
	{"rcdataEscaper", `<textarea>{{.}}</textarea>`},
	{"urlEscaper", `<a href="/x?q={{.}}">`},
	{"urlNormalizer", `<a href="/x/{{.}}">`},
	{"urlFilter", `<a href="{{.}}">`},
}

// oracle is html/template's rendering of tmpl with dot.
func oracle(t testing.TB, tmpl string, dot any) string {
	var b bytes.Buffer
	require.NoError(t, template.Must(template.New("t").Parse(tmpl)).Execute(&b, dot))
	return b.String()
}

// ours is the same line with the action replaced by the escapers html/template's context
// applies in it, ours: the attribute and URL contexts end in attrEscaper, a URL's start is
// also filtered and normalized.
func ours(escaper, tmpl string, dot any) string {
	f := escapers[escaper]
	var v string
	switch escaper {
	case "attrEscaper", "htmlEscaper", "rcdataEscaper":
		v = f(dot)
	case "urlFilter":
		v = escapers["attrEscaper"](escapers["urlNormalizer"](f(dot)))
	default:
		v = escapers["attrEscaper"](f(dot))
	}
	return string(bytes.Replace([]byte(tmpl), []byte("{{.}}"), []byte(v), 1))
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

// escaperValues are crafted values: markup, entities, quotes, NUL, invalid UTF-8, URLs with
// and without schemes, percent escapes, and the kinds of values the pages pass (numbers,
// pointers, nil, a Stringer, an error).
func escaperValues() []any {
	s := "a<b>&\"c'+d"
	n := 42
	var nilPtr *string
	return []any{
		"", "plain", s, &s, "\x00nul", "\xff\xfe bad utf-8", "é ü 漢字 \ufdd0 \ufffe",
		"javascript:alert(1)", "JavaScript:x", "http://a/b?c=d&e=f#g", "HTTPS://x", "mailto:a@b",
		"/ui/traces/abc def", "a/b:c", "data:text/html,x", "%41%zz%4", "100%", "a b+c/d?e=f#g!$&'()*,;=[]@~",
		"<script>x</script>", 3, -1.5, int64(1 << 40), true, &n, nilPtr, nil,
		stringer{"<s>"}, &stringer{"p&"}, errors.New("e<rr>"), []string{"a", "<b>"}, map[string]int{"k": 1},
		struct{ A string }{"<x>"},
	}
}

// TestEscapersAsHTMLTemplate: each escaper writes what html/template's escaper of the same
// context writes, on crafted values.
func TestEscapersAsHTMLTemplate(t *testing.T) {
	for _, c := range escaperContexts {
		t.Run(c.escaper, func(t *testing.T) {
			for _, v := range escaperValues() {
				assert.Equal(t, oracle(t, c.template, v), ours(c.escaper, c.template, v), "%#v", v)
			}
		})
	}
}

// TestEscapersCanFail: the oracle comparison sees a wrong escaper.
func TestEscapersCanFail(t *testing.T) {
	assert.NotEqual(t, oracle(t, `{{.}}`, "<b>"), "<b>")
	assert.NotEqual(t, oracle(t, `<a href="{{.}}">`, "javascript:x"), `<a href="javascript:x">`)
}

// FuzzEscapers: the escapers equal html/template's on any string.
func FuzzEscapers(f *testing.F) {
	for _, v := range escaperValues() {
		if s, ok := v.(string); ok {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range escaperContexts {
			assert.Equal(t, oracle(t, c.template, s), ours(c.escaper, c.template, s), "%s of %q", c.escaper, s)
		}
	})
}
