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
