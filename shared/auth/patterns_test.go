package auth

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPatternsAsRegexps holds each id pattern written as a function to the regular expression
// it stands for, on crafted values and on random ones built from the patterns' own parts.
func TestPatternsAsRegexps(t *testing.T) {
	tests := []struct {
		name string
		got  interface{ MatchString(string) bool }
		want *regexp.Regexp
	}{
		{"hash", hexPattern, regexp.MustCompile(`^[0-9a-fA-F]{64}$`)},
		{"token", tokenPattern, regexp.MustCompile(`^plf_[A-Za-z0-9_-]{1,96}$`)},
		{"webhook", webhookPattern, regexp.MustCompile(`^wh_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)},
		{"monitor", monitorPattern, regexp.MustCompile(`^mon_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)},
		{"delivery", deliveryPattern, regexp.MustCompile(`^dlv_[0-9]{13}_[0-9a-f]{12}$`)},
	}
	uuid := "0123abcd-4567-89ef-aaaa-0123456789ab"
	crafted := []string{
		"", strings.Repeat("a", 64), strings.Repeat("A", 64), strings.Repeat("a", 63), strings.Repeat("a", 65), strings.Repeat("g", 64),
		"plf_", "plf_a", "plf_" + strings.Repeat("Z", 96), "plf_" + strings.Repeat("Z", 97), "plf_a.b", "plf_a-_9", "PLF_a",
		"wh_" + uuid, "wh_" + strings.ToUpper(uuid), "wh_" + uuid + "0", "wh_" + uuid[1:], "wh_" + strings.ReplaceAll(uuid, "-", "0"),
		"mon_" + uuid, "mon_" + uuid[:8] + "x" + uuid[9:], "mon " + uuid,
		"dlv_1234567890123_0123456789ab", "dlv_123456789012_0123456789abc", "dlv_1234567890123_0123456789AB", "dlv_1234567890123-0123456789ab",
		"dlv_1234567890123_0123456789a", "é" + strings.Repeat("a", 62),
	}
	alphabet := "0123456789abcdefABCDEFgzZ_-.plfwhmondv é"
	r := rand.New(rand.NewPCG(1, 2))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range crafted {
				assert.Equal(t, tt.want.MatchString(v), tt.got.MatchString(v), "%q", v)
			}
			// Random mutations of a valid value: one byte changed, one added or one dropped.
			valid := []string{strings.Repeat("a", 64), "plf_" + strings.Repeat("x", 40), "wh_" + uuid, "mon_" + uuid, "dlv_1234567890123_0123456789ab"}
			for range 20000 {
				v := []byte(valid[r.IntN(len(valid))])
				switch i := r.IntN(len(v)); r.IntN(3) {
				case 0:
					v[i] = alphabet[r.IntN(len(alphabet))]
				case 1:
					v = append(v[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, v[i:]...)...)
				case 2:
					v = append(v[:i], v[i+1:]...)
				}
				assert.Equal(t, tt.want.MatchString(string(v)), tt.got.MatchString(string(v)), "%q", v)
			}
		})
	}
}
