package textcut_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/textcut"
)

func TestCut(t *testing.T) {
	tests := []struct {
		name    string
		s       string
		n       int
		want    string
		wantCut bool
	}{
		{name: "short", s: "abc", n: 3, want: "abc"},
		{name: "ASCII", s: "abcdef", n: 4, want: "abcd", wantCut: true},
		{name: "zero", s: "abc", n: 0, want: "", wantCut: true},
		{name: "two-byte rune at the limit", s: "aé", n: 2, want: "a", wantCut: true},
		{name: "three-byte rune at the limit", s: "a€b", n: 3, want: "a", wantCut: true},
		{name: "four-byte rune at the limit", s: "a😀b", n: 4, want: "a", wantCut: true},
		{name: "four-byte rune ending at the limit", s: "a😀b", n: 5, want: "a😀", wantCut: true},
		{name: "rune right after the limit", s: "ab€", n: 2, want: "ab", wantCut: true},
		{name: "invalid continuation bytes", s: "a\x80\x80\x80\x80\x80", n: 4, want: "a\x80\x80\x80", wantCut: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := textcut.Cut(tt.s, tt.n)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantCut, cut)
			assert.Equal(t, tt.want, textcut.Prefix(tt.s, tt.n))
		})
	}
}

func TestQuote(t *testing.T) {
	tests := []struct{ name, s, want string }{
		{name: "short", s: "abc", want: "abc"},
		{name: "long", s: strings.Repeat("x", 10), want: "xxxxxxxx..."},
		{name: "rune across the limit", s: "abcdefg€", want: "abcdefg..."},
		{name: "invalid UTF-8", s: "a\xffb", want: "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, textcut.Quote(tt.s, 8))
		})
	}
}

// FuzzPrefix: the prefix is a prefix of at most n bytes, valid when s is, and as long as it
// can be: at least n-3 bytes, and for valid s no further rune fits.
func FuzzPrefix(f *testing.F) {
	for _, s := range []string{"", "abc", "a😀b€é", "\xff\xfe\x80", "héllo wörld"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		p := textcut.Prefix(s, n)
		if !strings.HasPrefix(s, p) || len(p) > n || len(p) < min(n, len(s))-3 {
			t.Fatalf("Prefix(%q, %d) = %q", s, n, p)
		}
		if utf8.ValidString(s) {
			if !utf8.ValidString(p) {
				t.Fatalf("Prefix(%q, %d) = %q splits a rune", s, n, p)
			}
			if len(p) < len(s) {
				_, size := utf8.DecodeRuneInString(s[len(p):])
				if len(p)+size <= n {
					t.Fatalf("Prefix(%q, %d) = %q: the next rune fits", s, n, p)
				}
			}
		}
	})
}

// TestJSONLen: JSONLen is the length of encoding/json's encoding, quotes excluded, for every
// kind of character, and JSONPrefix the longest prefix within a length.
func TestJSONLen(t *testing.T) {
	for _, s := range []string{"", "plain", `a"b\c`, "\b\f\n\r\t", "\x00\x01\x1f", "é€😀", "\u2028\u2029", "a\xffb", "<&>"} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(s))
		assert.Equal(t, buf.Len()-len(`""`+"\n"), textcut.JSONLen(s), "%q", s)
		for n := 0; n <= textcut.JSONLen(s); n++ {
			p := textcut.JSONPrefix(s, n)
			assert.LessOrEqual(t, textcut.JSONLen(p), n)
			assert.True(t, strings.HasPrefix(s, p))
			if len(p) < len(s) {
				_, size := utf8.DecodeRuneInString(s[len(p):])
				assert.Greater(t, textcut.JSONLen(s[:len(p)+size]), n, "the prefix is the longest")
			}
		}
	}
}
