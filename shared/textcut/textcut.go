package textcut

import (
	"strings"
	"unicode/utf8"
)

// Prefix returns the longest prefix of s of at most n bytes that does not split a UTF-8
// sequence. Where s[n] is a byte of invalid UTF-8 that is not a sequence's first byte, the cut
// is at n: invalid text is cut where it is invalid, and never shorter than n-3 bytes.
func Prefix(s string, n int) string {
	s, _ = Cut(s, n)
	return s
}

// Cut is Prefix that also reports whether it shortened s.
func Cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	if n <= 0 {
		return "", true
	}
	i := n
	for i > 0 && i > n-(utf8.UTFMax-1) && !utf8.RuneStart(s[i]) { // a rune starts at most 3 bytes back
		i--
	}
	if !utf8.RuneStart(s[i]) { // s[n] is in the middle of invalid bytes: cut there
		i = n
	}
	return s[:i], true
}

// Quote returns s for a message: valid UTF-8 (each invalid byte replaced by U+FFFD), cut to
// at most n bytes of s with "..." appended when it is longer.
func Quote(s string, n int) string {
	if short, cut := Cut(s, n); cut {
		s = short + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// JSONLen is the length of s in a JSON string as encoding/json writes it with HTML escaping off,
// quotes excluded: '"', '\\', \b, \f, \n, \r and \t take two bytes, other control characters,
// U+2028, U+2029 and each byte of invalid UTF-8 (written as \ufffd) six, any other rune its
// UTF-8 length.
func JSONLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		w, size := jsonRune(s[i:])
		n += w
		i += size
	}
	return n
}

// JSONPrefix returns the longest prefix of s, not splitting a rune, whose JSON string encoding
// (JSONLen) is at most n bytes.
func JSONPrefix(s string, n int) string {
	used := 0
	for i := 0; i < len(s); {
		w, size := jsonRune(s[i:])
		if used+w > n {
			return s[:i]
		}
		used += w
		i += size
	}
	return s
}

// jsonRune is the encoded width of s's first rune (or invalid byte) and its length in s.
func jsonRune(s string) (width, size int) {
	b := s[0]
	if b < utf8.RuneSelf {
		switch {
		case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
			return 2, 1
		case b < 0x20:
			return 6, 1
		}
		return 1, 1
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
		return 6, size
	}
	return size, size
}
