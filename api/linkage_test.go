package api_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// TestLinkageEncoding: the two SDKs' JSON, character by character.
func TestLinkageEncoding(t *testing.T) {
	tests := []struct {
		name    string
		l       api.Linkage
		py, ts  string
		decoded *api.Linkage // nil: l
	}{
		{name: "nothing known", py: `{}`, ts: `{}`},
		{name: "every field",
			l:  api.Linkage{Task: "t", Variables: map[string]string{"b": "2", "a": "1"}, PromptSlug: "s", PromptVersion: 3, PromptVersionID: "id", ContentHash: "h"},
			py: `{"task": "t", "variables": {"a": "1", "b": "2"}, "prompt_slug": "s", "prompt_version": 3, "prompt_version_id": "id", "content_hash": "h"}`,
			ts: `{"task":"t","variables":{"a":"1","b":"2"},"prompt_slug":"s","prompt_version":3,"prompt_version_id":"id","content_hash":"h"}`},
		{name: "empty variables are not written", l: api.Linkage{Task: "t", Variables: map[string]string{}}, py: `{"task": "t"}`, ts: `{"task":"t"}`,
			decoded: &api.Linkage{Task: "t"}},
		{name: "escapes",
			l:  api.Linkage{Task: "q\" b\\ n\n r\r t\t b\b f\f \x01\x1f"},
			py: `{"task": "q\" b\\ n\n r\r t\t b\b f\f \u0001\u001f"}`,
			ts: `{"task":"q\" b\\ n\n r\r t\t b\b f\f \u0001\u001f"}`},
		{name: "beyond ASCII",
			l:  api.Linkage{Task: "\x7f é \u2028 😀 <&> /"},
			py: `{"task": "\u007f \u00e9 \u2028 \ud83d\ude00 <&> /"}`,
			ts: "{\"task\":\"\x7f é \u2028 😀 <&> /\"}"},
		{name: "invalid UTF-8", l: api.Linkage{Task: "a\xffb"}, py: `{"task": "a\ufffdb"}`, ts: "{\"task\":\"a\ufffdb\"}",
			decoded: &api.Linkage{Task: "a\ufffdb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.py, string(tt.l.AppendJSON(nil, api.LinkagePython)))
			assert.Equal(t, tt.ts, string(tt.l.AppendJSON(nil, api.LinkageTypeScript)))
			want := tt.l
			if tt.decoded != nil {
				want = *tt.decoded
			}
			for _, raw := range []string{tt.py, tt.ts} {
				var got api.Linkage
				require.NoError(t, json.Unmarshal([]byte(raw), &got))
				assert.Equal(t, want, got)
			}
			m, err := json.Marshal(tt.l)
			require.NoError(t, err)
			var got api.Linkage
			require.NoError(t, json.Unmarshal(m, &got))
			assert.Equal(t, want, got)
		})
	}
}

// TestStripLinkage: the metadata is found, read leniently and cut out as the SDKs do.
func TestStripLinkage(t *testing.T) {
	tests := []struct {
		name, content string
		want          api.Linkage
		rest          string
		ok            bool
	}{
		{name: "prefix", content: `<zeroeval>{"task": "t", "prompt_version_id": "v"}</zeroeval>You help.`,
			want: api.Linkage{Task: "t", PromptVersionID: "v"}, rest: "You help.", ok: true},
		{name: "inside, with white space", content: "Intro\n<zeroeval> {\"task\":\"t\"}\n</zeroeval>\n Rest \n",
			want: api.Linkage{Task: "t"}, rest: "Intro\n\n Rest", ok: true},
		{name: "the close tag inside a string", content: `<zeroeval>{"task": "a</zeroeval>b"}</zeroeval>x`,
			want: api.Linkage{Task: "a</zeroeval>b"}, rest: "x", ok: true},
		{name: "the first of two", content: `<zeroeval>{"task":"1"}</zeroeval>a<zeroeval>{"task":"2"}</zeroeval>b`,
			want: api.Linkage{Task: "1"}, rest: `a<zeroeval>{"task":"2"}</zeroeval>b`, ok: true},
		{name: "lenient fields",
			content: `<zeroeval>{"task": 5, "prompt_slug": ["s"], "prompt_version": "3", "variables": {"n": 2, "b": true, "z": null, "o": {"a": 1}, "s": "x"}, "extra": 1}</zeroeval>x`,
			want:    api.Linkage{PromptVersion: 3, Variables: map[string]string{"n": "2", "b": "true", "z": "", "o": `{"a": 1}`, "s": "x"}},
			rest:    "x", ok: true},
		{name: "variables that are no object", content: `<zeroeval>{"task":"t","variables":"x","prompt_version":1.5}</zeroeval>x`,
			want: api.Linkage{Task: "t"}, rest: "x", ok: true},
		{name: "no tag", content: "You help.", rest: "You help."},
		{name: "not JSON", content: "<zeroeval>{task}</zeroeval>x", rest: "<zeroeval>{task}</zeroeval>x"},
		{name: "not an object", content: "<zeroeval>[1]</zeroeval>x", rest: "<zeroeval>[1]</zeroeval>x"},
		{name: "null", content: "<zeroeval>null</zeroeval>x", rest: "<zeroeval>null</zeroeval>x"},
		{name: "no close tag", content: `<zeroeval>{"task":"t"} x`, rest: `<zeroeval>{"task":"t"} x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, rest, ok := api.StripLinkage(tt.content)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, l)
			assert.Equal(t, tt.rest, rest)
		})
	}
}

func ExampleStripLinkage() {
	l, system, ok := api.StripLinkage(`<zeroeval>{"task": "support-bot", "variables": {"product": "Plume"}, "prompt_version": 3}</zeroeval>You help with {{product}}.`)
	fmt.Println(ok, l.Task, l.PromptVersion, l.Variables["product"])
	fmt.Println(system)
	// Output:
	// true support-bot 3 Plume
	// You help with {{product}}.
}

func ExampleLinkage_Decorate() {
	l := api.Linkage{Task: "support-bot", Variables: map[string]string{"city": "Zürich"}, PromptVersion: 3}
	fmt.Println(l.Decorate("You help.", api.LinkagePython))
	fmt.Println(l.Decorate("You help.", api.LinkageTypeScript))
	// Output:
	// <zeroeval>{"task": "support-bot", "variables": {"city": "Z\u00fcrich"}, "prompt_version": 3}</zeroeval>You help.
	// <zeroeval>{"task":"support-bot","variables":{"city":"Zürich"},"prompt_version":3}</zeroeval>You help.
}
