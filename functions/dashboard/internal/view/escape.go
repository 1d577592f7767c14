package view

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// The escapers html/template puts at the end of the pages' pipelines, under the names the
// generator gives them (pagegen maps html/template's _html_template_* names to these). Each
// takes the pipeline's value as html/template's escaper of the same context does; the pages
// pass no value of html/template's safe types (template.HTML, template.URL, ...), so every
// value is text to escape. escape_test.go holds each equal to html/template's.
var escapers = map[string]func(args ...any) string{
	"htmlEscaper":   func(args ...any) string { return escapeHTML(text(args)) },
	"attrEscaper":   func(args ...any) string { return escapeHTML(text(args)) },
	"rcdataEscaper": func(args ...any) string { return escapeHTML(text(args)) },
	"urlEscaper":    func(args ...any) string { return escapeURL(text(args), false) },
	"urlNormalizer": func(args ...any) string { return escapeURL(text(args), true) },
	"urlFilter":     func(args ...any) string { return filterURL(text(args)) },
}

// Escaper reports the escaper named name ("htmlEscaper", ...), for tests and the generator.
func Escaper(name string) (func(args ...any) string, bool) {
	f, ok := escapers[name]
	return f, ok
}

var (
	errorType    = reflect.TypeFor[error]()
	stringerType = reflect.TypeFor[fmt.Stringer]()
)

// text is the text an escaper escapes: one string (or a pointer to one) as it is; otherwise
// every argument but an untyped nil, each followed through pointers until it is a Stringer or
// an error or not a pointer, printed as fmt.Sprint prints them.
func text(args []any) string {
	if len(args) == 1 {
		if s, ok := derefAll(args[0]).(string); ok {
			return s
		}
	}
	shown := make([]any, 0, len(args))
	for _, a := range args {
		if a == nil {
			continue
		}
		shown = append(shown, derefToPrinter(a))
	}
	return fmt.Sprint(shown...)
}

// derefAll follows a's pointers to the first nil or non-pointer value.
func derefAll(a any) any {
	if a == nil || reflect.TypeOf(a).Kind() != reflect.Pointer {
		return a
	}
	v := reflect.ValueOf(a)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	return v.Interface()
}

// derefToPrinter follows a's pointers while the value is neither a Stringer nor an error.
func derefToPrinter(a any) any {
	v := reflect.ValueOf(a)
	for v.Kind() == reflect.Pointer && !v.IsNil() && !v.Type().Implements(stringerType) && !v.Type().Implements(errorType) {
		v = v.Elem()
	}
	return v.Interface()
}

// escapeHTML escapes s for HTML text, a quoted or unquoted attribute value and RCDATA alike:
// the five characters that end or start markup or an entity, '+' (UTF-7), and NUL, which
// becomes U+FFFD as an HTML parser would read it. Every other byte, invalid UTF-8 included,
// is kept.
func escapeHTML(s string) string {
	var b strings.Builder
	done := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var repl string
		switch r {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		}
		if repl != "" {
			if done == 0 {
				b.Grow(len(s) + 8)
			}
			b.WriteString(s[done:i])
			b.WriteString(repl)
			done = i + size
		}
		i += size
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// escapeURL percent-encodes s, byte by byte, for a URL: a whole component (normalize false:
// only RFC 3986's unreserved characters are kept) or a part of a URL (normalize true: the
// reserved characters and well-formed %XX escapes are kept too). Quotes and parentheses are
// always encoded, so the result also fits a single-quoted attribute.
func escapeURL(s string, normalize bool) string {
	var b strings.Builder
	done := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if urlKeeps(c, normalize) || normalize && c == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
			continue
		}
		if done == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[done:i])
		b.WriteByte('%')
		b.WriteByte(lowerHex[c>>4])
		b.WriteByte(lowerHex[c&0xf])
		done = i + 1
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

const lowerHex = "0123456789abcdef"

// urlKeeps reports whether escapeURL keeps c unencoded.
func urlKeeps(c byte, normalize bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case strings.IndexByte("-._~", c) >= 0:
		return true
	case strings.IndexByte("!#$&*+,/:;=?@[]", c) >= 0:
		return normalize
	}
	return false
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unsafeURL is what filterURL writes for a URL it refuses: a fragment that goes nowhere, the
// marker html/template uses, so a page shows the same whichever renders it.
const unsafeURL = "#ZgotmplZ"

// filterURL is s, or unsafeURL when s starts with a scheme other than http, https or mailto
// (a "javascript:" URL in an href would run). A colon after a slash is not a scheme's.
func filterURL(s string) string {
	scheme, _, found := strings.Cut(s, ":")
	if !found || strings.Contains(scheme, "/") {
		return s
	}
	for _, ok := range []string{"http", "https", "mailto"} {
		if strings.EqualFold(scheme, ok) {
			return s
		}
	}
	return unsafeURL
}
