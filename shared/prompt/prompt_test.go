package prompt

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// The expected values were computed with Python 3, normalising as the SDK does:
// "\n".join(l.rstrip() for l in s.replace("\r\n", "\n").replace("\r", "\n").split("\n")).strip()
// and hashing with hashlib.sha256(n.encode()).hexdigest().
func TestNormalizeAndHash(t *testing.T) {
	tests := []struct {
		name, in, want, hash string
	}{
		{"plain", "You are helpful.", "You are helpful.", "42ea835592c20e1e24b29875c1063f6c7ef31f78c490c428306b4e1088fcf0e8"},
		{"crlf", "a\r\nb\r\n", "a\nb", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78"},
		{"lone cr", "a\rb", "a\nb", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78"},
		{"trailing spaces per line", "a  \nb\t\n", "a\nb", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78"},
		{"leading indentation kept", "  a\n  b", "a\n  b", "ff0de82e255bee8738dd1279853c50f5e7f9f3eb50b14611c7298b221bb468dc"},
		{"blank lines inside kept", "a\n\n\nb", "a\n\n\nb", "2282b3efda183ac2a3e762d8cf310bda78e79126b43846b41e1875fd043463cb"},
		{"template tokens untouched", " {{ name }} and {{x}} ", "{{ name }} and {{x}}", "69f9c5c81a6b819516f5216687d7d882ee5870f2b352c2702e238313c4f2d600"},
		{"unicode spaces as python", "a\u00a0\u2003\nb\u3000", "a\nb", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78"},
		{"ascii separators as python", "a\u001c\nb\u001f", "a\nb", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78"},
		{"zero width space is not space", "a\u200b", "a\u200b", "7aa4469f7842ec41faa342f0981b6f737a29683c413364c89d0f92c8b44d504e"},
		{"empty", " \r\n\t ", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"non-ascii text", "R\u00e9ponds en fran\u00e7ais\u00a0:\r\n{{question}}  ", "R\u00e9ponds en fran\u00e7ais\u00a0:\n{{question}}", "61aac3e7e1984857898349261cecc9a9db1fac58ec81a49644bb193032a2cd54"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Normalize(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.hash, Hash(got))
		})
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "a\r\nb", "  x  \r\r\n", "{{v}}\u00a0", "\x1c\x1d", "é\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if Normalize(n) != n {
			t.Fatalf("Normalize is not idempotent for %q", s)
		}
		if strings.Contains(n, "\r") {
			t.Fatalf("CR left in %q", n)
		}
		if utf8.ValidString(s) && !utf8.ValidString(n) {
			t.Fatalf("valid UTF-8 %q became invalid %q", s, n)
		}
		if len(Hash(n)) != 64 {
			t.Fatal("hash is not 64 hex characters")
		}
	})
}

func TestValidators(t *testing.T) {
	tests := []struct {
		name string
		err  error
		ok   bool
	}{
		{"slug", ValidateSlug("support-bot-2"), true},
		{"slug uppercase", ValidateSlug("Support"), false},
		{"slug underscore", ValidateSlug("a_b"), false},
		{"slug empty", ValidateSlug(""), false},
		{"slug too long", ValidateSlug(strings.Repeat("a", 129)), false},
		{"tag", ValidateTag("production"), true},
		{"tag with space", ValidateTag("prod uction"), false},
		{"number", ValidateNumber(1), true},
		{"number zero", ValidateNumber(0), false},
		{"model nil unbinds", ValidateModelID(nil), true},
		{"model", ValidateModelID(ptr("openai/gpt-4o")), true},
		{"model blank", ValidateModelID(ptr("  ")), false},
		{"model control character", ValidateModelID(ptr("gpt\n4")), false},
		{"model too long", ValidateModelID(ptr(strings.Repeat("m", MaxModelIDLen+1))), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.ok {
				assert.NoError(t, tt.err)
			} else {
				assert.Error(t, tt.err)
			}
		})
	}
	h, err := ValidateHash(strings.Repeat("AB", 32))
	assert.NoError(t, err)
	assert.Equal(t, strings.Repeat("ab", 32), h)
}

func ptr[T any](v T) *T { return &v }

func BenchmarkNormalizeHash(b *testing.B) {
	text := strings.Repeat("You are a helpful assistant for {{product}}.  \r\nAnswer briefly.\r\n", 40)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Hash(Normalize(text))
	}
}
