package trace

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAppendJSONMatchesMarshal holds AppendJSON to json.Marshal on the SDK fixtures and on
// spans with every optional field, awkward strings and numbers.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	var spans []Span
	for _, f := range []string{"testdata/python_batch.json", "testdata/typescript_batch.json"} {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		got, _, err := DecodeBatch(raw, "p", time.Now())
		require.NoError(t, err)
		spans = append(spans, got...)
	}
	s := func(v string) *string { return &v }
	f := func(v float64) *float64 { return &v }
	line := 12
	end := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.FixedZone("x", 3600))
	spans = append(spans,
		Span{},
		Span{
			ID: "a", Name: "<tag> & \"quote\" \\ \n\t\r\b\f \x01 \u2028 \u2029 é 漢 \xff", Status: s("ok"),
			EndedAt: &end, DurationMS: f(1e-7), Cost: f(1e21), CostSource: s("client"), SessionName: s(""),
			InputData: s(""), Attributes: json.RawMessage(`{"a":[1,2,{"b":null}]}`),
			Tags: Tags{{"a", "<>"}, {"z", "1"}}, TraceTags: Tags{{"t", "x"}},
			SessionTags: Tags{{"s", "y"}}, ErrorCode: s("E"), CodeLineno: &line,
			Link: &PromptLink{Task: "t", PromptVersion: 3}, Attachments: []Attachment{{Type: "image", Key: "k"}},
			ABChoices: []ABChoice{{ID: "i", Name: "<t>", Variant: "a", Value: "é"}, {Name: "u", Variant: "b"}},
		},
		Span{DurationMS: f(0), Cost: f(-2.5e-9), Tags: Tags{}},
		Span{DurationMS: f(123456.789), Cost: f(0.000123)},
	)
	for i, sp := range spans {
		want, err := json.Marshal(sp)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(sp.AppendJSON(nil)), "span %d", i)
	}
}

// TestEscapeMask checks escapeMask on every byte at every position of a word: the lowest
// flagged byte is the first one that appendString does not copy as it is.
func TestEscapeMask(t *testing.T) {
	for c := range 256 {
		special := c < 0x20 || c >= 0x80 || strings.IndexByte(`"\\<>&`, byte(c)) >= 0
		for pos := range 8 {
			word := []byte("abcdefgh")
			word[pos] = byte(c)
			m := escapeMask(binary.LittleEndian.Uint64(word))
			first := bits.TrailingZeros64(m) >> 3
			if special && first != pos || !special && m != 0 {
				t.Fatalf("byte %#x at %d: mask %#x", c, pos, m)
			}
		}
	}
}

// TestNextEscaped checks nextEscaped from every start on strings with a byte c at p and a
// quote at q (which, before the start, must not make it flag a byte falsely).
func TestNextEscaped(t *testing.T) {
	special := func(c byte) bool { return c < 0x20 || c >= 0x80 || strings.IndexByte(`"\\<>&`, c) >= 0 }
	for n := range 20 {
		for p := range n {
			for q := range n {
				for c := range 256 {
					b := []byte(strings.Repeat("a", n))
					b[q], b[p] = '"', byte(c)
					s := string(b)
					for i := 0; i <= n; i++ {
						want := i
						for want < n && !special(s[want]) {
							want++
						}
						if got := nextEscaped(s, i); got != want {
							t.Fatalf("nextEscaped(%q, %d) = %d, want %d", s, i, got, want)
						}
					}
				}
			}
		}
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("name", "input", 1.5, "k", "v", int64(1732212345123456000))
	f.Add("\xff\u2028<", "", -1e-9, "", "\x00", int64(-1))
	f.Fuzz(func(t *testing.T, name, input string, cost float64, k, v string, ns int64) {
		sp := Span{Name: name, InputData: &input, Cost: &cost, Tags: Tags{{k, v}}, StartedAt: time.Unix(0, ns).UTC()}
		want, err := json.Marshal(sp)
		if err != nil {
			return // NaN and infinities: never produced by the decoder
		}
		if got := string(sp.AppendJSON(nil)); got != string(want) {
			t.Fatalf("AppendJSON %s\njson.Marshal %s", got, want)
		}
	})
}

// TestCivilEveryDay holds civil to package time for every day appendUTC formats with it.
func TestCivilEveryDay(t *testing.T) {
	for days := int64(0); days < maxUnix/86400; days++ {
		y, m, d := civil(days)
		wy, wm, wd := time.Unix(days*86400, 0).UTC().Date()
		if y != wy || m != int(wm) || d != wd {
			t.Fatalf("day %d: civil %d-%d-%d, time %d-%d-%d", days, y, m, d, wy, wm, wd)
		}
	}
}
