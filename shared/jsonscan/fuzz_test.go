package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/jsonscan"
)

// seeds are texts at the edges of the grammar: every escape, invalid UTF-8, surrogates paired
// and not, numbers valid and not, whitespace everywhere, strings longer than the reader's
// eight-byte steps, braces inside strings.
var seeds = []string{
	`"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x\udc00"`, "\"\xff\xfe a\"", `{"a" : [1, -0.5e+3, true, false, null, {}]}`,
	`01`, `1.`, `-`, `1e`, `[1,]`, `{"a":1,}`, `"\u12"`, "\"\x01\"", ` [ ] `, `nul`, `"abcdefghijklmnopqrstuvwxyz\"0123456789"`,
	`{"k\"ey" : {"x":"}]"} ,"b":"\\", "c" :-1e3,"d":[{"e":[]}],"f":null }`,
	`{"a":1} x`, `{"a" 1}`, `{1:2}`, `[1 2]`, `"\x"`, `-0`, `0.5E-07`, `1e+`, `tru`, `falsey`, `nullx`,
	"{\"\xc3\": \"\xe2\x82\", \"ok\": \"\u00e9\"}", `"\ud800\u0041"`, `"\udc00\ud800"`, `{"a":{"b":{"c":[[["d"]]]}}}`,
	"\t\n\r 7 \t\n\r", `""`, `{}`, `[]`, `{"":""}`, `"` + strings.Repeat("\\n", 9) + `"`,
	strings.Repeat("[", jsonscan.MaxDepth) + strings.Repeat("]", jsonscan.MaxDepth),
	strings.Repeat("[", jsonscan.MaxDepth+1) + strings.Repeat("]", jsonscan.MaxDepth+1),
}

// FuzzReader checks jsonscan against encoding/json: the same texts are valid (nesting depth
// included), strings unescape to the Go strings encoding/json decodes, Members yields what
// the validating reader reads, IsNumber agrees on numbers, and AppendCompact gives the bytes of
// json.Compact (with invalid UTF-8 replaced as encoding/json decodes it), as CompactGaps does
// from the whitespace the reader recorded.
func FuzzReader(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := jsonscan.NewReader(data)
		r.RecordGaps()
		err := r.SkipValue()
		gaps := r.StopGaps()
		if err == nil {
			err = r.End()
		}
		valid := err == nil
		if valid != json.Valid(data) {
			t.Fatalf("valid: reader %v (%v), encoding/json %v", valid, err, json.Valid(data))
		}
		if !valid {
			var syntax *jsonscan.SyntaxError
			require.ErrorAs(t, err, &syntax)
			assert.True(t, syntax.Offset >= 0 && syntax.Offset <= len(data), "offset %d of %d bytes", syntax.Offset, len(data))
			return
		}
		start := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
		trimmed := bytes.TrimRight(data[start:], " \t\r\n")

		switch trimmed[0] {
		case '"':
			var want string
			require.NoError(t, json.Unmarshal(data, &want))
			contents := trimmed[1 : len(trimmed)-1]
			if got := jsonscan.Unescape(contents); got != want {
				t.Fatalf("string %q: got %q, want %q", trimmed, got, want)
			}
			if i := jsonscan.IndexEscapeOrNonASCII(contents); string(contents[:i]) != want[:min(i, len(want))] {
				t.Fatalf("string %q: the %d bytes before the first escape or non-ASCII byte are not its value %q", trimmed, i, want)
			}
		case '{':
			checkMembers(t, trimmed)
		}
		var number json.Number
		isNumber := json.Unmarshal(trimmed, &number) == nil && trimmed[0] != '"'
		if got := jsonscan.IsNumber(trimmed); got != isNumber {
			t.Fatalf("IsNumber(%q) = %v, want %v", trimmed, got, isNumber)
		}

		got := jsonscan.AppendCompact(nil, data)
		if !utf8.Valid(got) || !json.Valid(got) {
			t.Fatalf("compact %q is not valid", got)
		}
		if utf8.Valid(data) {
			var want bytes.Buffer
			require.NoError(t, json.Compact(&want, data))
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("compact: got %q, want %q", got, want.Bytes())
			}
			// The gaps of the whole text, leading and trailing whitespace included (which
			// CompactGaps of the trimmed value must leave out).
			inside := gaps[:0:0]
			for i := 0; i+1 < len(gaps); i += 2 {
				if gaps[i] >= start && gaps[i+1] <= start+len(trimmed) {
					inside = append(inside, gaps[i], gaps[i+1])
				}
			}
			if gc := jsonscan.CompactGaps(trimmed, inside, start); !bytes.Equal(gc, want.Bytes()) {
				t.Fatalf("CompactGaps: got %q, want %q", gc, want.Bytes())
			}
		}
	})
}

// checkMembers holds Members, which does not validate, to the members the validating reader
// reads from the object text, and both to encoding/json's keys (keys are raw bytes unless
// escaped: the caller replaces invalid UTF-8).
func checkMembers(t *testing.T, text []byte) {
	t.Helper()
	r := jsonscan.NewReader(text)
	require.NoError(t, r.Enter())
	var keys []string
	it := jsonscan.Members(text)
	for first := true; ; first = false {
		key, more, err := r.NextMember(first)
		require.NoError(t, err)
		if it.Next() != more {
			t.Fatalf("Members: more %v, the reader %v", !more, more)
		}
		if !more {
			break
		}
		start := r.Pos()
		require.NoError(t, r.SkipValue())
		if !bytes.Equal(it.Key, key) || !bytes.Equal(it.Value, text[start:r.Pos()]) {
			t.Fatalf("Members: %q: %q, the reader %q: %q", it.Key, it.Value, key, text[start:r.Pos()])
		}
		keys = append(keys, string(jsonscan.AppendValidUTF8(nil, key))) // as encoding/json decodes keys
	}
	require.NoError(t, r.End())
	var want map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(text, &want))
	for _, k := range keys {
		if _, ok := want[k]; !ok {
			t.Fatalf("key %q is not one of encoding/json's keys", k)
		}
	}
	assert.Len(t, want, countDistinct(keys))
}

func countDistinct(keys []string) int {
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		seen[k] = true
	}
	return len(seen)
}

// TestReaderErrors pins the messages of syntax errors, which DecodeBatch shows to clients, and
// the offsets where they are found.
func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{name: "empty", text: "", want: "unexpected end of JSON input at offset 0"},
		{name: "bad literal", text: `[nul]`, want: "invalid character ']' in literal null at offset 4"},
		{name: "control character", text: "\"a\tb\"", want: `invalid character '\t' in string literal at offset 2`},
		{name: "bad escape", text: `"a\qb"`, want: `invalid character 'q' in string escape code at offset 3`},
		{name: "missing comma", text: `[1 2]`, want: "invalid character '2' after element at offset 3"},
		{name: "key not a string", text: `{1:2}`, want: "invalid character '1' looking for beginning of object key string at offset 1"},
		{name: "missing colon", text: `{"a" 1}`, want: "invalid character '1' after object key at offset 5"},
		{name: "trailing data", text: `{} x`, want: "invalid character after top-level value at offset 3"},
		{name: "too deep", text: strings.Repeat("[", jsonscan.MaxDepth+1), want: "exceeded max nesting depth at offset 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := jsonscan.NewReader([]byte(tt.text))
			err := r.SkipValue()
			if err == nil {
				err = r.End()
			}
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}
